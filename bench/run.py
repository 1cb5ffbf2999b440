#!/usr/bin/env python3
"""Builds, runs and compares every sample on the GPU machine (DESIGN.md s. 7).

For each samples/<pass>/<name>.cu it builds the original and each rewritten
variant of it (made beforehand by bench/stage.sh on a machine with the tool,
as <rewritten-dir>/<variant>/<pass>/<name>.cu), runs them all with the same
seed, together with the extra runs of the original that its pass asks for
(the hand-written `--flat` version of the aggregate samples), parses their
RESULT lines (samples/common/harness.cuh) and prints two Markdown tables: one
row per sample and variant (median time, speedup over the original, ratio to
the flat version, error, status, achieved GB/s against the measured copy
bandwidth), then the geometric means per variant.

    python3 bench/run.py [--gpu-spec bench/gpu-specs/h100.json]
                         [--log-dir DIR] [--staged] [SAMPLE ...]

Exit status: 0 when every variant that was there to run built, ran and
passed its check; 1 otherwise (a variant that stage.sh could not produce,
REFUSED, or that was never staged, MISSING, counts only with --strict); 2
for a usage error. Standard library only: the GPU machine has no extra
packages.
"""

import argparse
import concurrent.futures
import datetime
import json
import math
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE_SOURCE = ROOT / "tool" / "probe" / "cuda-rewrite-probe.cu"

# Rewritten variants per pass, in table order: the folders under
# --rewritten-dir that bench/stage.sh writes (keep in step with variants_of
# there). A pass not listed has the one variant "rewritten".
REWRITTEN_VARIANTS = {"aggregate": ["warp", "block", "kernel"]}
DEFAULT_VARIANTS = ["rewritten"]
# Extra runs of the ORIGINAL binary per pass, after the rewritten variants:
# (variant, sample arguments). The sample prints the same RESULT line.
ORIGINAL_RUNS = {"aggregate": [("flat", ["--flat"])]}
BASELINE = "original"  # "speedup" is its time over a variant's.
FLAT = "flat"          # "vs flat" is a variant's time over this one's.
# Statuses that fail the run only with --strict: nothing ran.
NOT_RUN = ("REFUSED", "MISSING")


class Log:
    """One log file for every build and run, in order.

    One file rather than one per step: the machine that runs this hands back
    only a few files, and one file reads top to bottom anyway.
    """

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        path.write_text("")

    def text(self, title, text):
        with self.lock, self.path.open("a") as f:
            f.write(f"==== {title}\n{text}")
            if not text.endswith("\n"):
                f.write("\n")

    def command(self, title, argv, result_text):
        self.text(title, f"$ {shlex.join(map(str, argv))}\n{result_text}")


def run_command(argv, log, title, timeout):
    """Runs argv from the repository root; returns (exit status, output).

    The status is None when it ran past the timeout.
    """
    start = time.monotonic()
    try:
        p = subprocess.run([str(a) for a in argv], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace", timeout=timeout)
        status, output = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout or b""
        status = None
        output = out.decode(errors="replace") if isinstance(out, bytes) else out
    except OSError as e:
        status, output = 127, f"cannot run: {e}\n"
    seconds = time.monotonic() - start
    log.command(title, argv, output + f"[exit {status}, {seconds:.1f} s]\n")
    return status, output


def find_nvcc(explicit):
    if explicit:
        return explicit
    return shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def pass_of(sample):
    return sample.split("/", 1)[0]


def rewritten_variants(sample):
    return REWRITTEN_VARIANTS.get(pass_of(sample), DEFAULT_VARIANTS)


def discover_samples(filters):
    """samples/<pass>/<name>.cu, as "<pass>/<name>", filtered by prefix."""
    found = sorted(str(p.relative_to(ROOT / "samples").with_suffix(""))
                   for p in (ROOT / "samples").glob("*/*.cu")
                   if p.parent.name != "common")
    if filters:
        found = [s for s in found
                 if any(s == f or s.startswith(f.rstrip("/") + "/")
                        for f in filters)]
    return found


STAGE_LINE = re.compile(
    r"^STAGE (\S+) (\S+) exit=(\S+) status=(\w+)(?:: (.*))?$")


def read_stage_log(path):
    """What bench/stage.sh logged: (log text, {(sample, variant): verdict},
    the "####" header of each staging).

    A verdict is {"status": "ok"|"refused", "exit": ..., "reason": ...}; the
    last one of a sample and variant wins (a partial staging appends).
    """
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "", {}, []
    verdicts, headers = {}, []
    for line in text.splitlines():
        if line.startswith("#### "):
            headers.append(line[5:])
        m = STAGE_LINE.match(line)
        if m:
            sample, variant, code, status, reason = m.groups()
            verdicts[(sample, variant)] = {"status": status, "exit": code,
                                           "reason": reason or ""}
    return text, verdicts, headers


def load_copy_bandwidth(spec_path):
    """(copy GB/s, GPU name) from a spec file (schema: analysis/GpuSpec.h)."""
    spec = json.loads(Path(spec_path).read_text())
    if spec.get("schema_version") != 1:
        raise ValueError(f"{spec_path}: schema_version is not 1")
    bandwidth = spec.get("copy_bandwidth_gbps")
    if not isinstance(bandwidth, (int, float)) or bandwidth <= 0:
        raise ValueError(f"{spec_path}: no positive copy_bandwidth_gbps")
    return float(bandwidth), f"{spec.get('name')} ({spec.get('source')})"


def probe(args, nvcc, log):
    """Builds and runs the probe; returns the spec file it wrote, or None."""
    exe = args.build_dir / "cuda-rewrite-probe"
    status, _ = run_command([nvcc, "-O2", f"-arch={args.arch}", "-o", exe,
                             PROBE_SOURCE], log, "build probe", args.timeout)
    if status != 0:
        return None
    spec = args.log_dir / "gpu-spec.json"
    status, _ = run_command([exe, spec], log, "run probe", args.timeout)
    return spec if status == 0 and spec.is_file() else None


def parse_result(output):
    """The key=value pairs of the last RESULT line, or None."""
    lines = [l for l in output.splitlines() if l.startswith("RESULT ")]
    if not lines:
        return None
    return dict(tok.split("=", 1) for tok in lines[-1].split()[1:]
                if "=" in tok)


def plan(args, samples, verdicts):
    """Every row to fill, in table order, and the builds they need.

    Returns (rows, builds): a row is a dict with sample, variant, the binary
    it runs ("exe_of": the variant built), its extra arguments, and a status
    already when it cannot run (REFUSED, MISSING); builds maps (sample,
    variant) to the source to compile.
    """
    rows, builds = [], {}

    def row(sample, variant, exe_of, extra=(), status=None, note=""):
        rows.append({"sample": sample, "variant": variant, "exe_of": exe_of,
                     "args": list(extra), "status": status, "note": note,
                     "exit": None, "result": {}})

    for sample in samples:
        builds[(sample, BASELINE)] = ROOT / "samples" / f"{sample}.cu"
        row(sample, BASELINE, BASELINE)
        for variant in rewritten_variants(sample):
            source = args.rewritten_dir / variant / f"{sample}.cu"
            verdict = verdicts.get((sample, variant))
            if verdict and verdict["status"] != "ok":
                # stage.sh deletes what it refused; a file left there is
                # older than the verdict.
                row(sample, variant, None, status="REFUSED",
                    note="stage.log: " + (verdict["reason"] or "refused"))
            elif not source.is_file():
                row(sample, variant, None, status="MISSING",
                    note=f"no {source} (run bench/stage.sh)")
            else:
                builds[(sample, variant)] = source
                row(sample, variant, variant)
        for variant, extra in ORIGINAL_RUNS.get(pass_of(sample), []):
            row(sample, variant, BASELINE, extra)
    return rows, builds


def build(args, nvcc, log, sample, variant, source):
    """Compiles one variant; returns the executable, or None."""
    original = ROOT / "samples" / f"{sample}.cu"
    exe = args.build_dir / f"{sample.replace('/', '-')}-{variant}"
    # The original's folder too, so that a rewritten file finds the headers
    # that sat beside the sample.
    argv = [nvcc, "-O3", f"-arch={args.arch}", "-rdc=true",
            "-I", ROOT / "samples" / "common", "-I", ROOT / "runtime" / "include",
            "-I", original.parent, *shlex.split(args.nvcc_flags),
            source, "-lcudadevrt", "-o", exe]
    status, _ = run_command(argv, log, f"build {sample} {variant}",
                            args.timeout)
    return exe if status == 0 else None


def run_row(args, log, row, exe, seed):
    """Runs one row's binary and fills in its status and RESULT fields."""
    argv = [exe, f"--seed={seed}", *row["args"], *shlex.split(args.run_args)]
    status, output = run_command(
        argv, log, f"run {row['sample']} {row['variant']}", args.timeout)
    result = parse_result(output) or {}
    if status is None:
        verdict = "TIMEOUT"
    elif not result:
        verdict = "RUN-FAIL"  # Crashed before the harness could report.
    elif result.get("status") == "ok" and status == 0:
        verdict = "ok"
    else:
        verdict = "FAIL"
    row.update(status=verdict, exit=status, result=result)
    where = f"see 'run {row['sample']} {row['variant']}' in bench.log"
    if verdict == "FAIL":
        counts = " ".join(f"{k}={result[k]}" for k in
                          ("mismatches", "unwritten", "stray") if k in result)
        row["note"] = (f"the harness says status=FAIL"
                       f"{' ' + counts if counts else ''}, exit {status}; "
                       f"{where}")
    elif verdict != "ok":
        row["note"] = where


def number(result, key):
    try:
        return float(result[key])
    except (KeyError, ValueError):
        return None


def ok_medians(rows):
    """{(sample, variant): median ms} of the rows that are ok."""
    out = {}
    for row in rows:
        ms = number(row["result"], "median_ms")
        if ms and row["status"] == "ok":
            out[(row["sample"], row["variant"])] = ms
    return out


def table(rows, copy_gbps):
    """The per-sample Markdown table that bench/RESULTS.md records."""
    header = ["sample", "variant", "median ms", "speedup", "vs flat",
              "max rel err", "status", "GB/s", "% copy BW"]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    ok_ms = ok_medians(rows)
    for row in rows:
        r = row["result"]
        ms, nbytes = number(r, "median_ms"), number(r, "bytes")
        # Ratios only between correct results, as in the summary.
        base = ok_ms.get((row["sample"], BASELINE))
        flat = ok_ms.get((row["sample"], FLAT))
        if row["status"] != "ok":
            base = flat = None
        gbps = nbytes / (ms * 1e-3) / 1e9 if ms and nbytes else None
        cells = [row["sample"], row["variant"],
                 f"{ms:.4f}" if ms else "-",
                 f"{base / ms:.2f}x" if ms and base else "-",
                 f"{ms / flat:.2f}x" if ms and flat else "-",
                 r.get("max_rel_err", "-"), row["status"],
                 f"{gbps:.0f}" if gbps else "-",
                 f"{100 * gbps / copy_gbps:.0f}%" if gbps and copy_gbps
                 else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def summarize(rows):
    """Per variant (the original first, flat last, the others in order of
    first appearance): the speedups over the original and the ratios to
    flat, each over the samples where both rows are ok, and their geometric
    means (None when there are none)."""
    ok = ok_medians(rows)
    summary = {}
    for row in rows:
        entry = summary.setdefault(row["variant"], {"speedup": {},
                                                    "vs_flat": {}})
        ms = ok.get((row["sample"], row["variant"]))
        if ms is None:
            continue
        base = ok.get((row["sample"], BASELINE))
        flat = ok.get((row["sample"], FLAT))
        if base:
            entry["speedup"][row["sample"]] = base / ms
        if flat:
            entry["vs_flat"][row["sample"]] = ms / flat
    # The original first and flat last, as in the per-sample table.
    order = sorted(summary, key=lambda v: (v != BASELINE) + 2 * (v == FLAT))
    summary = {v: summary[v] for v in order}
    for entry in summary.values():
        for key in ("speedup", "vs_flat"):
            values = list(entry[key].values())
            entry[f"geomean_{key}"] = geomean(values) if values else None
    return summary


def summary_table(summary):
    header = ["variant", "samples", "geomean speedup", "samples with flat",
              "geomean vs flat"]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    for variant, e in summary.items():
        cells = [variant, str(len(e["speedup"])),
                 f"{e['geomean_speedup']:.2f}x" if e["geomean_speedup"]
                 else "-",
                 str(len(e["vs_flat"])),
                 f"{e['geomean_vs_flat']:.2f}x" if e["geomean_vs_flat"]
                 else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def notes(rows):
    """One line per row that has something to explain (REFUSED, ...)."""
    return "\n".join(f"- {r['sample']} {r['variant']}: {r['status']}: "
                     f"{r['note']}" for r in rows if r["note"])


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Build, run and compare every sample on the GPU.")
    p.add_argument("samples", nargs="*", metavar="SAMPLE",
                   help="<pass> or <pass>/<name> to run (default: all)")
    p.add_argument("--rewritten-dir", type=Path,
                   default=ROOT / "build-bench" / "rewritten",
                   help="rewritten sources, <variant>/<pass>/<name>.cu, "
                   "and stage.log (bench/stage.sh)")
    p.add_argument("--staged", action="store_true",
                   help="only the samples that bench/stage.sh staged "
                   "(in stage.log, or with a rewritten file)")
    p.add_argument("--build-dir", type=Path,
                   default=ROOT / "build-bench" / "bin")
    p.add_argument("--log-dir", type=Path,
                   default=ROOT / "build-bench" / "logs",
                   help="bench.log, results.md, results.json go here")
    p.add_argument("--gpu-spec", type=Path,
                   help="spec JSON with the measured copy bandwidth "
                   "(default: build and run the probe)")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--nvcc", help="default: nvcc on PATH, else CUDA's")
    p.add_argument("--nvcc-flags", default="", help="extra, for every build")
    p.add_argument("--run-args", default="",
                   help="extra sample arguments, e.g. '--reps=50'")
    p.add_argument("--seed", type=int,
                   help="input seed (default: fresh per sample, logged)")
    p.add_argument("--timeout", type=float, default=600,
                   help="seconds per build or run")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="parallel builds (runs are always one at a time)")
    p.add_argument("--strict", action="store_true",
                   help="a REFUSED or MISSING variant fails the run too")
    # Before --strict, MISSING failed unless this was given; now the default.
    p.add_argument("--allow-missing", action="store_true",
                   help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    for d in ("rewritten_dir", "build_dir", "log_dir", "gpu_spec"):
        if getattr(args, d) is not None:
            setattr(args, d, getattr(args, d).resolve())
    args.build_dir.mkdir(parents=True, exist_ok=True)
    args.log_dir.mkdir(parents=True, exist_ok=True)
    log = Log(args.log_dir / "bench.log")
    nvcc = find_nvcc(args.nvcc)
    command = shlex.join(["python3", "bench/run.py", *argv])

    stage_path = args.rewritten_dir / "stage.log"
    stage_text, verdicts, stagings = read_stage_log(stage_path)
    # In bench.log rather than a file of its own: few files come back.
    log.text(f"stage.log ({stage_path})",
             stage_text or "(none: nothing staged by bench/stage.sh)\n")

    samples = discover_samples(args.samples)
    if args.staged:
        staged = {s for s, _ in verdicts}
        samples = [s for s in samples if s in staged or any(
            (args.rewritten_dir / v / f"{s}.cu").is_file()
            for v in rewritten_variants(s))]
    if not samples:
        print("run.py: no sample matches" +
              (f" among those staged in {args.rewritten_dir}"
               if args.staged else ""), file=sys.stderr)
        return 2

    spec = args.gpu_spec or probe(args, nvcc, log)
    copy_gbps, gpu = None, "unknown GPU"
    if spec:
        try:
            copy_gbps, gpu = load_copy_bandwidth(spec)
        except (OSError, ValueError) as e:
            print(f"run.py: {e}", file=sys.stderr)
            return 2
    else:
        print("run.py: probe failed (see bench.log); no % of copy bandwidth",
              file=sys.stderr)

    rows, builds = plan(args, samples, verdicts)
    keys = list(builds)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        exes = dict(zip(keys, pool.map(
            lambda k: build(args, nvcc, log, *k, builds[k]), keys)))

    # Fresh input on every bench run, the same for every variant of a
    # sample; each checks it against its own float64 reference.
    fresh = random.SystemRandom()
    seeds = {s: args.seed if args.seed is not None else fresh.getrandbits(32)
             for s in samples}
    for row in rows:
        if row["status"] is None:
            exe = exes[(row["sample"], row["exe_of"])]
            if exe is None:
                row["status"] = "BUILD-FAIL"
                row["note"] = (f"see 'build {row['sample']} {row['exe_of']}'"
                               " in bench.log")
            else:
                run_row(args, log, row, exe, seeds[row["sample"]])
        print(f"{row['sample']} {row['variant']}: {row['status']}",
              file=sys.stderr)

    date = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    bandwidth = f"{copy_gbps:.0f} GB/s" if copy_gbps else "unknown"
    summary = summarize(rows)
    staged_lines = "".join(f"Staged: {h}\n" for h in stagings) or \
        "Staged: no stage.log\n"
    report = (f"Date: {date}\nGPU: {gpu}, measured copy bandwidth "
              f"{bandwidth}\n{staged_lines}Command: `{command}`\n\n"
              f"{table(rows, copy_gbps)}\n\n{summary_table(summary)}\n")
    if notes(rows):
        report += f"\n{notes(rows)}\n"
    (args.log_dir / "results.md").write_text(report)
    for row in rows:
        del row["exe_of"]
        row["seed"] = seeds[row["sample"]]
    (args.log_dir / "results.json").write_text(json.dumps(
        {"date": date, "gpu": gpu, "copy_bandwidth_gbps": copy_gbps,
         "command": command, "staged": stagings, "rows": rows,
         "summary": summary}, indent=2, default=str) + "\n")

    bad = [r for r in rows if r["status"] != "ok"
           and (args.strict or r["status"] not in NOT_RUN)]
    for r in bad:
        print(f"run.py: {r['sample']} {r['variant']}: {r['status']}",
              file=sys.stderr)
    sys.stderr.flush()
    print(report, flush=True)  # Last, so that it ends the output.
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
