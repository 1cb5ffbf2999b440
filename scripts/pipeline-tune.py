#!/usr/bin/env python3
"""Offline autotuner of a rewritten pipeline (VersaPipe section 7).

Runs a program whose pipeline launch cuda-rewrite rewrote, on the GPU and on
its real input, under many configurations, and writes the fastest as a
configuration file that the program reads (CUDA_REWRITE_PIPELINE_CONFIG=<file>
or the pragma's config(<file>)):

    scripts/pipeline-tune.py --out reyes.cfg -- ./reyes.rewritten --seed=1

1. Describe: one run with CUDA_REWRITE_PIPELINE_DESCRIBE tells the stages and
   how many blocks of each persistent kernel fit on an SM.
2. Enumerate: the plain models (kbk, megakernel, coarse, fine) and hybrids:
   every split of the stages into groups of neighbours, a model per group
   (megakernel, or fine for groups of several stages) and every split of the
   SMs among the groups in steps of --sm-step SMs. As the paper prunes: each
   group's kernel runs as many blocks per SM as fit (a fine group's blocks
   each serve one stage), the same on each of its SMs. More than --max
   candidates are thinned evenly.
3. Measure: one run of the program with CUDA_REWRITE_PIPELINE_TUNE, which
   gives each launch the next candidate and stops any launch that runs past
   3x the best so far (the time-out tightens as better ones are found); each
   candidate runs --repeats times. The five best are measured again as they
   are, with online adaptation, with green contexts instead of the %smid
   filter for groups on disjoint SMs, and with smaller and larger batches
   (rounds per reservation); the fastest median wins.

The program must launch the pipeline often enough: --launches-arg is how to
ask it for n launches ('--reps={n} --warmup=0' for the samples' harness).
Prints one line `TUNED pipeline=... candidates=... seconds=... best_ms=...`.
"""

import argparse
import itertools
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(program, env_extra, timeout):
    env = dict(os.environ, **env_extra)
    for key in ("CUDA_REWRITE_PIPELINE_MODEL", "CUDA_REWRITE_PIPELINE_CONFIG"):
        if key not in env_extra:
            env.pop(key, None)
    p = subprocess.run(program, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, errors="replace",
                       timeout=timeout)
    return p.returncode, p.stdout


def describe(program, launches_arg, workdir, timeout):
    """{'name', 'sms', 'stages': [(name, threads)], 'fits': {(a, b): n}}."""
    path = workdir / "describe.txt"
    argv = program + shlex.split(launches_arg.format(n=1))
    status, output = run(argv, {"CUDA_REWRITE_PIPELINE_DESCRIBE": str(path),
                                "CUDA_REWRITE_PIPELINE_MODEL": "megakernel"},
                         timeout)
    if not path.is_file():
        sys.exit(f"pipeline-tune: the program wrote no description (exit "
                 f"{status}); is its pipeline launch rewritten?\n{output}")
    info = {"stages": [], "fits": {}}
    for line in path.read_text().splitlines():
        words = line.split()
        if words[0] == "pipeline":
            info["name"] = words[1]
        elif words[0] == "sms":
            info["sms"] = int(words[1])
        elif words[0] == "stage":
            info["stages"].append((words[1], int(words[3])))
        elif words[0] == "kernel":
            info["fits"][(words[1], words[2])] = int(words[4])
    return info


def compositions(total, parts):
    """Ways to write total as an ordered sum of `parts` positive integers."""
    for cuts in itertools.combinations(range(1, total), parts - 1):
        bounds = (0, *cuts, total)
        yield [bounds[i + 1] - bounds[i] for i in range(parts)]


def groupings(n):
    """Splits of stages 0..n-1 into runs of neighbours: lists of (a, b)."""
    for cuts in itertools.product((False, True), repeat=n - 1):
        groups, start = [], 0
        for i, cut in enumerate(cuts, start=1):
            if cut:
                groups.append((start, i - 1))
                start = i
        groups.append((start, n - 1))
        yield groups


def fine_mappings(info, names, a, b):
    """Block mappings of a fine group of stages a..b, whose one kernel binds
    each block to a stage: the runtime's default (the stages in turn), and
    for each stage the mapping that gives it every block of an SM left once
    the others have one (the same on each SM of the group, as the paper
    prunes)."""
    fits = info["fits"].get((names[a], names[b]), 0)
    count = b - a + 1
    result = ["fine"]
    room = fits - (count - 1)
    if room <= 1:
        return result
    for favoured in range(count):
        blocks = ",".join(str(room) if i == favoured else "1"
                          for i in range(count))
        result.append(f"fine blocks {blocks}")
    return result


def candidates(info, sm_step):
    names = [name for name, _ in info["stages"]]
    sms = info["sms"]
    units = max(1, sms // sm_step)
    result = [f"model {m}\n" for m in ("kbk", "megakernel", "coarse", "fine")]
    for mapping in fine_mappings(info, names, 0, len(names) - 1)[1:]:
        result.append(f"model hybrid\ngroup {names[0]}..{names[-1]} fine "
                      f"sms 0-{sms - 1} {mapping.split(' ', 1)[1]}\n")
    for groups in groupings(len(names)):
        if len(groups) < 2 or len(groups) > units:
            continue
        models = [("megakernel",) if a == b else
                  ("megakernel", *fine_mappings(info, names, a, b))
                  for a, b in groups]
        for split in compositions(units, len(groups)):
            bounds = [0]
            for part in split:
                bounds.append(bounds[-1] + part * sm_step)
            bounds[-1] = sms  # the remainder goes to the last group
            for chosen in itertools.product(*models):
                lines = ["model hybrid"]
                for (a, b), model, lo, hi in zip(groups, chosen, bounds,
                                                 bounds[1:]):
                    stages = names[a] if a == b else f"{names[a]}..{names[b]}"
                    kind, _, blocks = model.partition(" ")
                    lines.append(f"group {stages} {kind} sms {lo}-{hi - 1}"
                                 + (f" {blocks}" if blocks else ""))
                result.append("\n".join(lines) + "\n")
    return result


def thin(items, keep):
    """At most `keep` of items, evenly spread, the first four (the plain
    models) always kept."""
    if len(items) <= keep:
        return items
    head, rest = items[:4], items[4:]
    step = len(rest) / (keep - 4)
    return head + [rest[int(i * step)] for i in range(keep - 4)]


def measure(program, launches_arg, configs, repeats, workdir, timeout, tag):
    tune = workdir / f"{tag}.tune"
    times = workdir / f"{tag}.times"
    tune.write_text("---\n".join(configs))
    if times.exists():
        times.unlink()
    launches = len(configs) * repeats
    argv = program + shlex.split(launches_arg.format(n=launches))
    status, output = run(argv, {"CUDA_REWRITE_PIPELINE_TUNE": str(tune),
                                "CUDA_REWRITE_PIPELINE_TIMES": str(times)},
                         timeout)
    samples = {i: [] for i in range(len(configs))}
    if times.exists():
        for line in times.read_text().splitlines():
            fields = dict(w.split("=", 1) for w in line.split() if "=" in w)
            ms = float(fields["ms"]) if "timeout" not in line else float("inf")
            samples[int(fields["candidate"])].append(ms)
    medians = {i: statistics.median(v) if v else float("inf")
               for i, v in samples.items()}
    return medians, status, output


def summary(config):
    return "; ".join(line for line in config.strip().splitlines())


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    split = argv.index("--")
    p = argparse.ArgumentParser(description="Tune a rewritten pipeline.")
    p.add_argument("--out", type=Path, required=True,
                   help="configuration file to write")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--sm-step", type=int, default=12,
                   help="SMs per step of the SM splits (default 12)")
    p.add_argument("--max", type=int, default=400,
                   help="most candidates measured (default 400)")
    p.add_argument("--launches-arg", default="--reps={n} --warmup=0",
                   help="program arguments for n pipeline launches")
    p.add_argument("--timeout", type=float, default=900,
                   help="seconds per program run")
    args = p.parse_args(argv[:split])
    program = argv[split + 1:]
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        info = describe(program, args.launches_arg, workdir, args.timeout)
        configs = thin(candidates(info, args.sm_step), args.max)
        medians, status, output = measure(program, args.launches_arg, configs,
                                          args.repeats, workdir, args.timeout,
                                          "all")
        ranked = sorted(medians, key=medians.get)
        finalists = [configs[i] for i in ranked[:5] if medians[i] < float("inf")]
        if not finalists:
            sys.exit(f"pipeline-tune: no configuration ran (exit {status})\n"
                     f"{output[-2000:]}")
        second = [c + extra for c in finalists
                  for extra in ("", "adapt on\n", "green on\n",
                                "rounds 1\n", "rounds 8\nspread 4\n")]
        final, status, output = measure(program, args.launches_arg, second,
                                        max(args.repeats, 5), workdir,
                                        args.timeout, "final")
        best = min(final, key=final.get)
    seconds = time.monotonic() - start
    chosen = second[best]
    header = (f"# cuda-rewrite pipeline configuration for '{info['name']}', "
              f"written by scripts/pipeline-tune.py\n"
              f"# {len(configs)} candidates (then {len(second)} finalists) "
              f"tuned in {seconds:.0f} s on {info['sms']} SMs; "
              f"best median {final[best]:.4f} ms\n"
              f"# program: {shlex.join(program)}\n")
    args.out.write_text(header + chosen)
    print(f"TUNED pipeline={info['name']} candidates={len(configs)} "
          f"seconds={seconds:.1f} best_ms={final[best]:.6f} "
          f"config=\"{summary(chosen)}\"")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
