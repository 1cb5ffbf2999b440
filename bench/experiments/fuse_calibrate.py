#!/usr/bin/env python3
"""Fits the seven weights of the fuse cost model (rewriters/fuse/FuseCostModel.h,
Algorithm 2 of PolyMage-GPU, line 35; docs/references.md) to measured
configurations, leave-one-out over samples as the paper did.

Input: a CSV with the columns

    sample,config,ms,t1,t2,t3,t4,t5,t6,t7

one row per measured configuration of a fused group (a "sample" is one group
on one image: its rows compete with each other), t1..t7 the unweighted terms
of CostTerms::terms() for that configuration, ms the measured time.

Model. Only the order of a sample's configurations matters, so times are
normalised per sample (ms / best ms of the sample, >= 1) and each sample gets
a free offset: the fit is non-negative least squares of the within-sample
centred normalised times against the within-sample centred terms,

    minimise  sum_s sum_c ((y_sc - mean_s y) - w . (t_sc - mean_s t))^2,  w >= 0.

Terms are scaled to unit spread before the fit (and the weights scaled back),
so that terms of very different ranges converge alike.

Output: for each held-out sample, the configuration the weights fitted on the
other samples pick and the ratio of its time to the sample's best; then the
weights fitted on all samples as a C++ initializer for CostWeights::defaults().

    fuse_calibrate.py measurements.csv
    fuse_calibrate.py --self-test

numpy is used for the Gram matrices when present; the fit itself is a few
hundred sweeps of coordinate descent on a 7x7 system, in pure Python.
"""

import argparse
import csv
import math
import random
import sys

try:
    import numpy  # Optional: only speeds up the Gram matrices.
except ImportError:  # pragma: no cover - depends on the machine
    numpy = None

NUM_TERMS = 7
TERM_NAMES = [
    "transactions/pt",
    "1-occupancy",
    "mem/compute",
    "unallocated shared",
    "unused registers",
    "overlap",
    "idle blocks",
]


def read_csv(path):
    """{sample: [(config, ms, [t1..t7]), ...]} in file order."""
    samples = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        needed = ["sample", "config", "ms"] + ["t%d" % (i + 1) for i in range(NUM_TERMS)]
        missing = [c for c in needed if c not in (reader.fieldnames or [])]
        if missing:
            sys.exit("%s: missing columns: %s" % (path, ", ".join(missing)))
        for row in reader:
            terms = [float(row["t%d" % (i + 1)]) for i in range(NUM_TERMS)]
            if not all(math.isfinite(t) for t in terms):
                continue  # An infeasible configuration: nothing to fit.
            samples.setdefault(row["sample"], []).append(
                (row["config"], float(row["ms"]), terms)
            )
    return samples


def centred_rows(rows):
    """The sample's rows as (centred terms, centred normalised time)."""
    best = min(ms for _, ms, _ in rows)
    ys = [ms / best for _, ms, _ in rows]
    mean_y = sum(ys) / len(ys)
    mean_t = [sum(t[i] for _, _, t in rows) / len(rows) for i in range(NUM_TERMS)]
    return [
        ([t[i] - mean_t[i] for i in range(NUM_TERMS)], y - mean_y)
        for (_, _, t), y in zip(rows, ys)
    ]


def gram(data):
    """A^T A and A^T y of the stacked (terms, time) rows."""
    if numpy is not None and data:
        a = numpy.array([x for x, _ in data], dtype=float)
        y = numpy.array([v for _, v in data], dtype=float)
        return (a.T @ a).tolist(), (a.T @ y).tolist()
    g = [[0.0] * NUM_TERMS for _ in range(NUM_TERMS)]
    c = [0.0] * NUM_TERMS
    for x, y in data:
        for i in range(NUM_TERMS):
            c[i] += x[i] * y
            for j in range(NUM_TERMS):
                g[i][j] += x[i] * x[j]
    return g, c


def nnls(g, c, sweeps=2000, tolerance=1e-12):
    """min w^T G w - 2 c^T w over w >= 0, by cyclic coordinate descent (G is
    positive semi-definite; a coordinate with G_ii = 0 keeps weight 0)."""
    w = [0.0] * NUM_TERMS
    for _ in range(sweeps):
        change = 0.0
        for i in range(NUM_TERMS):
            if g[i][i] <= tolerance:
                continue
            gradient = sum(g[i][j] * w[j] for j in range(NUM_TERMS)) - c[i]
            new = max(0.0, w[i] - gradient / g[i][i])
            change = max(change, abs(new - w[i]))
            w[i] = new
        if change < tolerance:
            break
    return w


def fit(samples, names):
    """Non-negative weights fitted on the samples \\p names."""
    data = [row for name in names for row in centred_rows(samples[name])]
    # Unit spread per term, so that coordinate descent treats them alike.
    scale = []
    for i in range(NUM_TERMS):
        spread = math.sqrt(sum(x[i] ** 2 for x, _ in data) / max(1, len(data)))
        scale.append(spread if spread > 1e-12 else 1.0)
    scaled = [([x[i] / scale[i] for i in range(NUM_TERMS)], y) for x, y in data]
    g, c = gram(scaled)
    w = nnls(g, c)
    return [w[i] / scale[i] for i in range(NUM_TERMS)]


def pick(rows, weights):
    """The row of least weighted cost (the earlier one on ties)."""
    def cost(row):
        return sum(w * t for w, t in zip(weights, row[2]))
    return min(rows, key=cost)


def leave_one_out(samples, out):
    """Prints the held-out picks; returns each sample's pick/best ratio."""
    ratios = {}
    names = sorted(samples)
    for held in names:
        others = [n for n in names if n != held]
        weights = fit(samples, others) if others else [1.0] * NUM_TERMS
        rows = samples[held]
        chosen = pick(rows, weights)
        best = min(rows, key=lambda r: r[1])
        ratios[held] = chosen[1] / best[1]
        out.write(
            "%-24s pick %-20s %9.4f ms  best %-20s %9.4f ms  ratio %.3f\n"
            % (held, chosen[0], chosen[1], best[0], best[1], ratios[held])
        )
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios.values()) / len(ratios))
        out.write("geomean pick/best over %d samples: %.3f\n" % (len(ratios), geomean))
    return ratios


def initializer(weights):
    """The weights as CostWeights::defaults() returns them."""
    return "return {{%s}};" % ", ".join("%.6g" % w for w in weights)


def fabricate(seed=1, samples=8, configs=40, noise=0.02):
    """Samples whose times follow known weights, with multiplicative noise."""
    rng = random.Random(seed)
    truth = [2.0, 10.0, 0.5, 0.1, 0.1, 3.0, 2.0]
    data = {}
    for s in range(samples):
        base = rng.uniform(0.5, 5.0)  # The sample's own speed.
        rows = []
        for c in range(configs):
            terms = [
                rng.uniform(0.1, 2.0),  # transactions per point
                rng.uniform(0.0, 0.9),  # 1 - occupancy
                rng.uniform(0.5, 5.0),  # mem / compute
                rng.uniform(0.0, 1.0),  # unallocated shared
                rng.uniform(0.0, 1.0),  # unused registers
                rng.uniform(0.0, 1.5),  # overlap
                rng.uniform(0.0, 0.5),  # idle blocks
            ]
            cost = 1.0 + sum(w * t for w, t in zip(truth, terms))
            ms = base * cost * (1.0 + rng.uniform(-noise, noise))
            rows.append(("c%d" % c, ms, terms))
        data["s%d" % s] = rows
    return data, truth


def self_test(out):
    """Fits fabricated data; fails unless every held-out pick is within 5% of
    the best and the rank of the fitted weights follows the true ones."""
    data, truth = fabricate()
    ratios = leave_one_out(data, out)
    weights = fit(data, sorted(data))
    out.write("true weights:   %s\n" % initializer(truth))
    out.write("fitted weights: %s\n" % initializer(weights))
    worst = max(ratios.values())
    ok = worst <= 1.05
    # Up to the per-sample scale, the fit should recover the largest weight.
    ok = ok and max(range(NUM_TERMS), key=lambda i: weights[i]) == 1
    out.write("self-test %s (worst pick/best %.3f)\n" % ("passed" if ok else "FAILED", worst))
    return ok


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="?", help="measurements (see the docstring)")
    parser.add_argument("--self-test", action="store_true",
                        help="fit fabricated data and check the picks")
    args = parser.parse_args(argv)
    if args.self_test:
        return 0 if self_test(sys.stdout) else 1
    if not args.csv:
        parser.error("a CSV file or --self-test is needed")
    samples = read_csv(args.csv)
    if not samples:
        sys.exit("%s: no feasible rows" % args.csv)
    leave_one_out(samples, sys.stdout)
    weights = fit(samples, sorted(samples))
    for name, w in zip(TERM_NAMES, weights):
        sys.stdout.write("  %-20s %.6g\n" % (name, w))
    sys.stdout.write("// Fitted on %d samples (%s).\n%s\n"
                     % (len(samples), ", ".join(sorted(samples)), initializer(weights)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
