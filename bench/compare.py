#!/usr/bin/env python3
"""Compares a bench run with the last record of the same GPU model.

    python3 bench/compare.py RESULTS.json [RESULTS.json ...]
                             [--records bench/records] [--threshold 0.10]
                             [--update]

Each RESULTS.json is what `bench/run.py --log-dir DIR` wrote (DIR/results.json);
several are one run made in parts (the bench split over calls of the GPU
machine) or repeated runs of the same code, and must come from one GPU
model. A ratio measured more than once counts with its median. The record is
bench/records/<model>.json, <model> the GPU's name in lower case with runs
of other characters as '-' (NVIDIA H100 80GB HBM3: nvidia-h100-80gb-hbm3).

Only ratios measured within one run are compared, never times across runs
or GPUs: per sample configuration and rewritten variant (the original, the
hand-written references and the peers are what they are measured
against, so they are not guarded themselves), its speedup over the
original, its ratio to each reference (flat, cub: the variant's time over
the reference's, lower is better) and its speedup over each peer (npp,
halide, ...). The record keeps, per ratio, the median and the worst of
the runs it was made from (two runs of one commit differ by up to 13% on
the aggregate samples, whose kernels take 0.1 to 3 ms): a ratio more than
THRESHOLD worse than the record's worst is a regression, one more than
THRESHOLD better than its median an improvement, as is a variant that the record has as ok and the run has not
(FAIL, BUILD-FAIL, ...). Ratios only the run has, or only the record has,
are listed as new or not measured. A sample whose `// bench-seed:` line
fixes its input (run.py) is compared only between runs of that input: a
run with another seed, or a record made before the line, reads "other
input".

Prints one Markdown table of every compared ratio (regressions first) and a
line of counts. --update writes the run's ratios into the record (those it
did not measure stay as they were, with their own date): do that when a
change lands, after its regressions are explained.

Exit status: 0 no regression, 1 some regression, 2 usage error (no input,
unreadable input, two GPU models, no record without --update).
Standard library only: it runs on the GPU machine as well.
"""

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from run import BASELINE, PEERS, REFERENCES, sample_seed  # noqa: E402

# The ratios to the references (a variant's time over a hand-written
# version's) are better smaller; the speedups are better larger.
LOWER_IS_BETTER = tuple(f"vs_{ref}" for ref in REFERENCES)
# Rows that are not the tool's output: their ratios move only with the
# noise of the runs they are measured against.
NOT_GUARDED = (BASELINE, *REFERENCES, *PEERS)


def model_of(gpu):
    """The GPU model of run.py's "gpu" field ("NVIDIA H100 80GB HBM3
    (measured)"): its name without the spec's source."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", gpu or "").strip()


def slug(model):
    return re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")


def lower_is_better(ratio):
    return ratio in LOWER_IS_BETTER


def other_input(sample, seed):
    """Whether a run of `sample` with input `seed` is not the input its
    `// bench-seed:` line fixes (run.py), so that its ratios compare with
    no record."""
    fixed = sample_seed(sample)
    return fixed is not None and seed != fixed


def ratios_of(results):
    """{(sample, variant, ratio): value} from run.py's summary,
    {(sample, variant): status} from its rows, and the keys of the ratios
    left out because their input was not the sample's fixed one."""
    seeds = {r["sample"]: r.get("seed") for r in results.get("rows", [])}
    values, others = {}, set()
    for variant, entry in results.get("summary", {}).items():
        for ratio, per_sample in entry.items():
            if not isinstance(per_sample, dict):
                continue  # geomeans
            if variant in NOT_GUARDED:
                continue
            for sample, value in per_sample.items():
                key = (sample, variant, ratio)
                if other_input(sample, seeds.get(sample)):
                    others.add(key)
                else:
                    values[key] = float(value)
    statuses = {(r["sample"], r["variant"]): r["status"]
                for r in results.get("rows", [])
                if r["variant"] not in NOT_GUARDED}
    return values, statuses, others


def load_runs(paths):
    """(model, dates, commands, {key: [values]}, statuses, other-input
    keys) of the runs together; a later file's status of a row replaces an
    earlier one's."""
    model, dates, commands, values, statuses = None, [], [], {}, {}
    others = set()
    for path in paths:
        results = json.loads(Path(path).read_text())
        m = model_of(results.get("gpu"))
        if not m or m.startswith("unknown"):
            raise ValueError(f"{path}: no GPU model (run.py had no spec)")
        if model and m != model:
            raise ValueError(f"{path}: GPU {m!r}, another file has {model!r}")
        model = m
        dates.append(results.get("date", "?"))
        commands.append(results.get("command", "?"))
        v, s, o = ratios_of(results)
        for key, value in v.items():
            values.setdefault(key, []).append(value)
        statuses.update(s)
        others |= o
    return model, dates, commands, values, statuses, others - set(values)


def key_text(key):
    sample, variant, *ratio = key
    return "|".join([sample, variant, *ratio])


def load_record(path):
    """{key: {"value"|"status": ..., "date": ...}} of the record, keyed
    like ratios_of() (ratios) and (sample, variant) (statuses)."""
    record = json.loads(path.read_text())
    ratios = {tuple(k.split("|")): v for k, v in record["ratios"].items()}
    statuses = {tuple(k.split("|")): v
                for k, v in record.get("statuses", {}).items()}
    return record, ratios, statuses


def median(values):
    ordered = sorted(values)
    mid = len(ordered) // 2
    return (ordered[mid] if len(ordered) % 2 else
            (ordered[mid - 1] + ordered[mid]) / 2)


def worst(ratio, values):
    return max(values) if lower_is_better(ratio) else min(values)


def better_by(ratio, now, was):
    """How much better `now` is than `was` (negative: worse), whichever
    way the ratio reads."""
    return was / now - 1 if lower_is_better(ratio) else now / was - 1


def compare(values, statuses, rec_ratios, rec_statuses, threshold,
            others=frozenset()):
    """Rows (verdict, sample, variant, ratio, recorded, now, change)."""
    rows = []
    for key in sorted(set(values) | set(rec_ratios) | set(others)):
        sample, variant, ratio = key
        now = median(values[key]) if key in values else None
        rec = rec_ratios.get(key, {})
        was = rec.get("value")
        # A sample with a fixed input compares only runs of that input.
        if key in others or (was is not None and
                             other_input(sample, rec.get("seed"))):
            rows.append(("other input", sample, variant, ratio, was, now,
                         None))
            continue
        if now is None:
            rows.append(("not measured", sample, variant, ratio, was, None,
                         None))
            continue
        if was is None:
            rows.append(("new", sample, variant, ratio, None, now, None))
            continue
        verdict = ("REGRESSED" if better_by(ratio, now, rec.get("worst", was))
                   < -threshold else
                   "improved" if better_by(ratio, now, was) > threshold else
                   "same")
        rows.append((verdict, sample, variant, ratio, was, now,
                     better_by(ratio, now, was)))
    for key, rec in sorted(rec_statuses.items()):
        now = statuses.get(key)
        if rec.get("status") == "ok" and now is not None and now != "ok":
            rows.append(("REGRESSED", *key, "status", "ok", now, None))
    order = {"REGRESSED": 0, "improved": 1, "new": 2, "other input": 3,
             "not measured": 4, "same": 5}
    rows.sort(key=lambda r: (order[r[0]], r[1], r[2], r[3]))
    return rows


def cell(value):
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return f"{value:.3g}x"


def print_table(rows, record_path, dates):
    shown = (record_path.relative_to(ROOT)
             if record_path.is_relative_to(ROOT) else record_path)
    print(f"Against {shown}; run of {', '.join(sorted(set(dates)))}\n")
    print("| verdict | sample | variant | ratio | recorded (median) | now "
          "| change |")
    print("|---|---|---|---|---|---|---|")
    for verdict, sample, variant, ratio, was, now, change in rows:
        print(f"| {verdict} | {sample} | {variant} | {ratio} | {cell(was)} "
              f"| {cell(now)} | "
              f"{'-' if change is None else f'{100 * change:+.0f}%'} |")
    counts = {}
    for r in rows:
        counts[r[0]] = counts.get(r[0], 0) + 1
    print("\n" + ", ".join(f"{n} {v}" for v, n in counts.items()))


def update(record_path, record, model, dates, commands, values, statuses):
    record = record or {"gpu": model, "ratios": {}, "statuses": {}}
    date = max(dates)
    for key, measured in values.items():
        entry = {"value": round(median(measured), 4),
                 "worst": round(worst(key[2], measured), 4),
                 "runs": len(measured), "date": date}
        if sample_seed(key[0]) is not None:
            entry["seed"] = sample_seed(key[0])
        record["ratios"][key_text(key)] = entry
    for key, status in statuses.items():
        record["statuses"][key_text(key)] = {"status": status, "date": date}
    record["commands"] = sorted(set(record.get("commands", []) + commands))
    record_path.parent.mkdir(parents=True, exist_ok=True)
    record_path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"compare.py: wrote {record_path}", file=sys.stderr)


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", metavar="RESULTS.json")
    p.add_argument("--records", type=Path, default=ROOT / "bench" / "records")
    p.add_argument("--threshold", type=float, default=0.10)
    p.add_argument("--update", action="store_true",
                   help="write the run's ratios into the record")
    args = p.parse_args()
    try:
        model, dates, commands, values, statuses, others = load_runs(
            args.runs)
    except (OSError, ValueError, KeyError) as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    record_path = args.records / f"{slug(model)}.json"
    record, rec_ratios, rec_statuses = None, {}, {}
    if record_path.exists():
        record, rec_ratios, rec_statuses = load_record(record_path)
    elif not args.update:
        print(f"compare.py: no record for {model} ({record_path}); "
              f"--update makes one", file=sys.stderr)
        return 2
    rows = compare(values, statuses, rec_ratios, rec_statuses, args.threshold,
                   others)
    print_table(rows, record_path, dates)
    regressed = any(r[0] == "REGRESSED" for r in rows)
    if args.update:
        update(record_path, record, model, dates, commands, values, statuses)
    return 1 if regressed else 0


if __name__ == "__main__":
    sys.exit(main())
