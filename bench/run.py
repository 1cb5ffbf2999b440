#!/usr/bin/env python3
"""Builds, runs and compares every sample on the GPU machine (DESIGN.md s. 7).

For each samples/<pass>/<name>.cu it builds the original and the rewritten
source (made beforehand by bench/stage.sh on a machine with the tool), runs
both with the same seed, parses their RESULT lines (samples/common/harness.cuh)
and prints one Markdown table: median time, speedup over the original,
error, status, and achieved GB/s against the measured copy bandwidth.

    python3 bench/run.py [--gpu-spec bench/gpu-specs/h100.json]
                         [--log-dir DIR] [SAMPLE ...]

Exit status: 0 when every variant built, ran and passed its check; 1
otherwise (a missing rewritten file counts unless --allow-missing); 2 for a
usage error. Standard library only: the GPU machine has no extra packages.
"""

import argparse
import concurrent.futures
import datetime
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE_SOURCE = ROOT / "tool" / "probe" / "cuda-rewrite-probe.cu"


class Log:
    """One log file for every build and run, in order.

    One file rather than one per step: the machine that runs this hands back
    only a few files, and one file reads top to bottom anyway.
    """

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        path.write_text("")

    def command(self, title, argv, result_text):
        with self.lock, self.path.open("a") as f:
            f.write(f"==== {title}\n$ {shlex.join(map(str, argv))}\n")
            f.write(result_text)
            if not result_text.endswith("\n"):
                f.write("\n")


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
    return spec if status == 0 else None


def parse_result(output):
    """The key=value pairs of the last RESULT line, or None."""
    lines = [l for l in output.splitlines() if l.startswith("RESULT ")]
    if not lines:
        return None
    return dict(tok.split("=", 1) for tok in lines[-1].split()[1:]
                if "=" in tok)


def build(args, nvcc, log, sample, variant):
    """Compiles one variant; returns (executable or None, status text)."""
    original = ROOT / "samples" / f"{sample}.cu"
    source = original
    if variant == "rewritten":
        source = args.rewritten_dir / f"{sample}.cu"
        if not source.is_file():
            return None, "MISSING"
    exe = args.build_dir / f"{sample.replace('/', '-')}-{variant}"
    # The original's folder too, so that a rewritten file finds the headers
    # that sat beside the sample.
    argv = [nvcc, "-O3", f"-arch={args.arch}", "-rdc=true",
            "-I", ROOT / "samples" / "common", "-I", ROOT / "runtime" / "include",
            "-I", original.parent, *shlex.split(args.nvcc_flags),
            source, "-lcudadevrt", "-o", exe]
    status, _ = run_command(argv, log, f"build {sample} {variant}",
                            args.timeout)
    return (exe, "built") if status == 0 else (None, "BUILD-FAIL")


def run_variant(args, log, sample, variant, exe, seed):
    """Runs one built variant; returns its row."""
    argv = [exe, f"--seed={seed}", *shlex.split(args.run_args)]
    status, output = run_command(argv, log, f"run {sample} {variant}",
                                 args.timeout)
    result = parse_result(output) or {}
    if status is None:
        verdict = "TIMEOUT"
    elif not result:
        verdict = "RUN-FAIL"  # Crashed before the harness could report.
    elif result.get("status") == "ok" and status == 0:
        verdict = "ok"
    else:
        verdict = "FAIL"
    return {"sample": sample, "variant": variant, "status": verdict,
            "exit": status, "result": result}


def number(result, key):
    try:
        return float(result[key])
    except (KeyError, ValueError):
        return None


def table(rows, copy_gbps):
    """The Markdown table that bench/RESULTS.md records."""
    header = ["sample", "variant", "median ms", "speedup", "max rel err",
              "status", "GB/s", "% copy BW"]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    base_ms = {}
    for row in rows:
        ms = number(row["result"], "median_ms")
        if row["variant"] == "original" and ms:
            base_ms[row["sample"]] = ms
    for row in rows:
        r = row["result"]
        ms, nbytes = number(r, "median_ms"), number(r, "bytes")
        base = base_ms.get(row["sample"])
        gbps = nbytes / (ms * 1e-3) / 1e9 if ms and nbytes else None
        cells = [row["sample"], row["variant"],
                 f"{ms:.4f}" if ms else "-",
                 f"{base / ms:.2f}x" if ms and base else "-",
                 r.get("max_rel_err", "-"), row["status"],
                 f"{gbps:.0f}" if gbps else "-",
                 f"{100 * gbps / copy_gbps:.0f}%" if gbps and copy_gbps
                 else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Build, run and compare every sample on the GPU.")
    p.add_argument("samples", nargs="*", metavar="SAMPLE",
                   help="<pass> or <pass>/<name> to run (default: all)")
    p.add_argument("--rewritten-dir", type=Path,
                   default=ROOT / "build-bench" / "rewritten",
                   help="rewritten sources, <pass>/<name>.cu (bench/stage.sh)")
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
    p.add_argument("--nvcc-flags", default="", help="extra, for both variants")
    p.add_argument("--run-args", default="",
                   help="extra sample arguments, e.g. '--reps=50'")
    p.add_argument("--seed", type=int,
                   help="input seed (default: fresh per sample, logged)")
    p.add_argument("--timeout", type=float, default=600,
                   help="seconds per build or run")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="parallel builds (runs are always one at a time)")
    p.add_argument("--allow-missing", action="store_true",
                   help="a sample with no rewritten file is not a failure")
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

    samples = discover_samples(args.samples)
    if not samples:
        print("run.py: no sample matches", file=sys.stderr)
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

    jobs = [(s, v) for s in samples for v in ("original", "rewritten")]
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        built = list(pool.map(lambda j: build(args, nvcc, log, *j), jobs))

    # Fresh input on every bench run, the same for both variants of a
    # sample; each variant checks it against its own float64 reference.
    fresh = random.SystemRandom()
    seeds = {s: args.seed if args.seed is not None else fresh.getrandbits(32)
             for s in samples}
    rows = []
    for (sample, variant), (exe, what) in zip(jobs, built):
        if exe is None:
            rows.append({"sample": sample, "variant": variant,
                         "status": what, "exit": None, "result": {}})
            continue
        rows.append(run_variant(args, log, sample, variant, exe,
                                seeds[sample]))
        print(f"{sample} {variant}: {rows[-1]['status']}", file=sys.stderr)

    date = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    bandwidth = f"{copy_gbps:.0f} GB/s" if copy_gbps else "unknown"
    report = (f"Date: {date}\nGPU: {gpu}, measured copy bandwidth "
              f"{bandwidth}\nCommand: `{command}`\n\n"
              f"{table(rows, copy_gbps)}\n")
    print(report)
    (args.log_dir / "results.md").write_text(report)
    (args.log_dir / "results.json").write_text(json.dumps(
        {"date": date, "gpu": gpu, "copy_bandwidth_gbps": copy_gbps,
         "command": command, "rows": rows}, indent=2, default=str) + "\n")

    bad = [r for r in rows if r["status"] != "ok"
           and not (r["status"] == "MISSING" and args.allow_missing)]
    for r in bad:
        print(f"run.py: {r['sample']} {r['variant']}: {r['status']}",
              file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
