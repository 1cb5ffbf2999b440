#!/usr/bin/env python3
"""Differential testing of cuda-rewrite's passes (test/fuzz/difftest/README.md).

  difftest.py prepare --pass systolic --seed 1 --programs 200 --out DIR
      Generates the programs (--per-file to a file), rewrites every file
      with each of the pass's variants (here: needs the tool, no GPU), and
      writes DIR/manifest.json: per program and variant, whether the pass
      rewrote it, refused it (a pass, not a failure) or the tool failed.
  difftest.py prepare --pass systolic --regress test/regress --out DIR
      The same for the kept reproducers of test/regress/<pass>/.
  difftest.py run DIR... [--jobs 16] [--seed 7]
      On the GPU machine: builds the original and every rewritten file with
      nvcc, runs them on fresh random input with poisoned outputs, and writes
      DIR/results.json: per program and variant, PASS or what went wrong.
  difftest.py report DIR... [--failures OUT]
      The campaign table; each failing program is written alone to OUT (with
      the variant's source and flags) as a reproducer.

A program fails when the tool crashes or errs on it, when its rewritten file
does not compile, or when the rewritten build's outputs differ from the
original's (integers bit for bit; floating point beyond the bound its
float64 reference derives) or miss its own check while the original passes.
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from gen import PASSES, generator  # noqa: E402
from gen.common import (Program, Variant, assemble, extract,  # noqa: E402
                        program_lines)

REMARK = re.compile(r"^[^:]+:(\d+):\d+: remark: (rewritten|not rewritten): "
                    r"(.*) \[(\w+)\]$")


#===-- prepare (here) ------------------------------------------------------===#

def tool_command(tool, flags, source, output):
    return [tool, "--remarks", *flags, str(source), "-o", str(output), "--",
            "-I", str(HERE), "-I", str(ROOT / "runtime" / "include")]


def rewrite(tool, variant, text, stem, out_dir):
    """Rewrites `text` under `variant`: (returncode, remarks, output path)."""
    source = out_dir / f"{stem}.{variant.name}.in.cu"
    output = out_dir / f"{stem}.{variant.name}.cu"
    source.write_text(variant.source(text))
    if output.exists():
        output.unlink()
    try:
        proc = subprocess.run(tool_command(tool, variant.flags, source.name,
                                           output.name),
                              cwd=out_dir, capture_output=True, text=True,
                              timeout=600)
        return proc.returncode, proc.stderr, output
    except subprocess.TimeoutExpired:
        return "timeout", "", output


def classify(pass_name, remarks, lines):
    """Per program: ('rewritten'|'refused'|'untouched', first remark)."""
    result = {name: ("untouched", "") for name in lines}
    for line in remarks.splitlines():
        m = REMARK.match(line)
        if not m or m.group(4) != pass_name:
            continue
        number, kind, text = int(m.group(1)), m.group(2), m.group(3)
        for name, span in lines.items():
            if number in span:
                status, _ = result[name]
                if kind == "rewritten":
                    result[name] = ("rewritten", text)
                elif status == "untouched":
                    result[name] = ("refused", text)
    return result


def tool_failed(rc):
    return rc != 0


def generated_files(args):
    """The files of a campaign: (text, programs) each."""
    module = generator(args.pass_name)
    rng = random.Random(f"{args.pass_name}-{args.seed}")
    programs = [module.generate(rng, f"p{i}") for i in range(args.programs)]
    return [(assemble(args.pass_name, args.seed, programs[i:i + args.per_file]),
             programs[i:i + args.per_file], None)
            for i in range(0, len(programs), args.per_file)]


def regression_files(args):
    """test/regress/<pass>/*.cu as they are, one program each, with the
    tool flags of their `// difftest-flags:` line, or under every variant of
    the pass when they have none."""
    files = []
    for path in sorted(Path(args.regress).glob(f"{args.pass_name}/*.cu")):
        text = path.read_text()
        names = list(program_lines(text))
        m = re.search(r"^// difftest-flags: (.*)$", text, re.M)
        files.append((text, [Program(n, "", {"file": path.name})
                             for n in names], m.group(1).split() if m else None))
    return files


def prepare(args):
    module = generator(args.pass_name)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    args.tool = str(Path(args.tool).resolve())  # the tool runs in `out`
    files = regression_files(args) if args.regress else generated_files(args)
    manifest = {"pass": args.pass_name, "seed": args.seed, "files": [],
                "programs": {}}

    def one_file(index):
        stem = f"f{index}"
        text, programs, flags = files[index]
        # A regression file is rewritten as its pragmas and flags say.
        variants = ([Variant("as-is", flags=flags)] if flags is not None
                    else [v for v in module.VARIANTS
                          if not args.variants or v.name in args.variants])
        (out / f"{stem}.cu").write_text(text)
        lines = program_lines(text)
        entry = {"stem": stem, "programs": [p.name for p in programs],
                 "variants": {}}
        status = {p.name: {} for p in programs}
        for variant in variants:
            rc, remarks, output = rewrite(args.tool, variant, text, stem, out)
            (out / f"{stem}.{variant.name}.remarks").write_text(remarks)
            entry["variants"][variant.name] = {
                "rc": rc, "runs": variant.runs, "flags": variant.flags}
            if not tool_failed(rc):
                vlines = program_lines(variant.source(text))
                for name, (kind, text_) in classify(
                        args.pass_name, remarks, vlines).items():
                    status[name][variant.name] = {"status": kind,
                                                  "remark": text_}
                continue
            # Which program made the tool fail: each one alone.
            for p in programs:
                alone = extract(text, p.name)
                prc, premarks, _ = rewrite(args.tool, variant, alone,
                                           f"{stem}.{p.name}", out)
                status[p.name][variant.name] = {
                    "status": "tool-failed" if tool_failed(prc) else "ok-alone",
                    "remark": f"exit {prc}: " + premarks.strip()[-300:]}
        return index, entry, status

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for index, entry, status in sorted(pool.map(one_file,
                                                     range(len(files)))):
            manifest["files"].append(entry)
            for p in files[index][1]:
                manifest["programs"][p.name] = {
                    "file": entry["stem"], "traits": p.traits,
                    "variants": status[p.name]}
            print(f"prepared {entry['stem']}: " + ", ".join(
                f"{v}: rc {e['rc']}" for v, e in entry["variants"].items()),
                flush=True)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    shutil.copy(HERE / "difftest.cuh", out / "difftest.cuh")


#===-- run (on the GPU machine) --------------------------------------------===#

def nvcc_command(nvcc, source, binary, include):
    return [nvcc, "-O2", "-arch=sm_90", "-rdc=true", "-w", "-I", str(include),
            "-I", str(ROOT / "runtime" / "include"), "-o", str(binary),
            str(source), "-lcudadevrt"]


def build(job):
    nvcc, source, binary, include = job
    # A binary left by an earlier call on this machine is kept.
    if (Path(binary).exists() and
            Path(binary).stat().st_mtime > Path(source).stat().st_mtime):
        return str(binary), 0, ""
    proc = subprocess.run(nvcc_command(nvcc, source, binary, include),
                          capture_output=True, text=True)
    return str(binary), proc.returncode, proc.stderr[-2000:]


LINE = re.compile(r"^DIFFTEST (\w+) (PASS|FAIL|ERROR) digest=(\w+)(.*)$")


def run_binary(binary, seed, env, names, timeout):
    """{program: (status, digest, detail)}; programs after a CUDA error are
    run again one at a time."""
    results = {}

    def once(extra):
        try:
            proc = subprocess.run([binary, f"--seed={seed}", *extra],
                                  capture_output=True, text=True,
                                  timeout=timeout, env={**os.environ, **env})
            text = proc.stdout
        except subprocess.TimeoutExpired as e:
            text = (e.stdout or b"").decode() if isinstance(
                e.stdout, bytes) else (e.stdout or "")
            text += "\nTIMEOUT\n"
        for line in text.splitlines():
            m = LINE.match(line)
            if m:
                results[m.group(1)] = (m.group(2), m.group(3),
                                       m.group(4).strip())
        return "TIMEOUT" in text

    once([])
    for name in names:
        if name not in results:
            if once([f"--only={name}"]) and name not in results:
                results[name] = ("TIMEOUT", "0", f"over {timeout} s")
            results.setdefault(name, ("MISSING", "0", "no result line"))
    return results


def run(args):
    for d in args.dirs:
        run_dir(Path(d), args)


def run_dir(d, args):
    manifest = json.loads((d / "manifest.json").read_text())
    jobs = []
    for f in manifest["files"]:
        jobs.append((args.nvcc, d / f"{f['stem']}.cu", d / f"{f['stem']}.orig",
                     d))
        for v, e in f["variants"].items():
            if not tool_failed(e["rc"]):
                jobs.append((args.nvcc, d / f"{f['stem']}.{v}.cu",
                             d / f"{f['stem']}.{v}.bin", d))
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        builds = {b: (rc, err) for b, rc, err in pool.map(build, jobs)}
    print(f"{d.name}: built {len(jobs)} binaries in "
          f"{time.time() - start:.0f} s", flush=True)
    # Every (binary, environment) run, several at a time: the programs are
    # small, and a hung one holds only its own slot until the time-out.
    runs = []
    for f in manifest["files"]:
        runs.append((f, "original", str(d / f"{f['stem']}.orig"), {}))
        for v, e in f["variants"].items():
            if not tool_failed(e["rc"]):
                for run_name, env in e["runs"].items():
                    runs.append((f, v + (f"/{run_name}" if run_name else ""),
                                 str(d / f"{f['stem']}.{v}.bin"), env))

    def one_run(job):
        f, key, binary, env = job
        if builds[binary][0]:
            return f, key, {n: ("BUILD", "0", builds[binary][1][-300:])
                            for n in f["programs"]}
        return f, key, run_binary(binary, args.seed, env, f["programs"],
                                  args.timeout)

    results = {}
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.parallel_runs) as pool:
        for f, key, got in pool.map(one_run, runs):
            for n in f["programs"]:
                results.setdefault(n, {})[key] = list(got[n])
    print(f"{d.name}: {len(runs)} runs in {time.time() - start:.0f} s",
          flush=True)
    (d / "results.json").write_text(json.dumps(
        {"seed": args.seed, "results": results}, indent=1))
    summary(d)


#===-- report ----------------------------------------------------------------===#

def verdicts(d):
    """Per program: (verdict, details) with verdict one of 'rewritten',
    'refused', 'failed', 'invalid' (the original fails its own check: a
    generator bug, not the tool's)."""
    manifest = json.loads((d / "manifest.json").read_text())
    res_path = d / "results.json"
    results = (json.loads(res_path.read_text())["results"]
               if res_path.exists() else {})
    out = {}
    for name, p in manifest["programs"].items():
        problems, rewritten = [], False
        for v, s in p["variants"].items():
            if s["status"] in ("tool-failed",):
                problems.append(f"{v}: tool failed: {s['remark']}")
            rewritten |= s["status"] == "rewritten"
        r = results.get(name)
        if r is not None:
            orig = r.get("original", ["MISSING", "0", ""])
            if orig[0] != "PASS":
                out[name] = ("invalid", [f"original: {orig}"])
                continue
            for key, (status, digest, detail) in r.items():
                if key == "original":
                    continue
                if status != "PASS":
                    problems.append(f"{key}: {status} {detail}")
                elif digest != orig[1]:
                    problems.append(f"{key}: digest {digest} != original "
                                    f"{orig[1]}")
        verdict = ("failed" if problems else
                   "rewritten" if rewritten else "refused")
        out[name] = (verdict, problems)
    return manifest, out, bool(results)


def summary(d):
    manifest, v, ran = verdicts(d)
    counts = {k: sum(1 for x in v.values() if x[0] == k)
              for k in ("rewritten", "refused", "failed", "invalid")}
    print(f"{manifest['pass']} seed {manifest['seed']} ({d.name}): "
          f"{len(v)} programs, {counts['rewritten']} rewritten, "
          f"{counts['refused']} refused, {counts['failed']} failed, "
          f"{counts['invalid']} invalid" + ("" if ran else " (not run)"))
    for name, (verdict, problems) in sorted(v.items()):
        if verdict in ("failed", "invalid"):
            print(f"  {name} {verdict}: {problems[0][:300]}")
    return manifest, v, counts


def report(args):
    totals = {}
    for d in map(Path, args.dirs):
        manifest, v, counts = summary(d)
        t = totals.setdefault(manifest["pass"], dict.fromkeys(
            ("programs", "rewritten", "refused", "failed", "invalid"), 0))
        t["programs"] += len(v)
        for k, n in counts.items():
            t[k] += n
        if args.failures:
            keep_failures(d, manifest, v, Path(args.failures))
    print("\n| pass | programs | rewritten | refused | failed | invalid |")
    print("|---|---|---|---|---|---|")
    for p, t in totals.items():
        print(f"| {p} | {t['programs']} | {t['rewritten']} | {t['refused']} "
              f"| {t['failed']} | {t['invalid']} |")


def keep_failures(d, manifest, v, out):
    out.mkdir(parents=True, exist_ok=True)
    for name, (verdict, problems) in v.items():
        if verdict != "failed":
            continue
        stem = manifest["programs"][name]["file"]
        text = (d / f"{stem}.cu").read_text()
        target = out / f"{manifest['pass']}-s{manifest['seed']}-{name}.cu"
        target.write_text("// " + "\n// ".join(problems) + "\n" +
                          extract(text, name))
        print(f"  kept {target}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--pass", dest="pass_name", choices=PASSES, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--programs", type=int, default=100)
    p.add_argument("--per-file", type=int, default=20)
    p.add_argument("--tool", default=str(ROOT / "build/tool/cuda-rewrite"))
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    p.add_argument("--regress", metavar="DIR",
                   help="instead of generating, take DIR/<pass>/*.cu "
                   "(test/regress) as they are")
    p.add_argument("--variants", type=lambda text: text.split(","),
                   help="only these variants of the pass (comma-separated "
                   "names), e.g. to rerun the one a fix changed")
    p.add_argument("--out", required=True)
    r = sub.add_parser("run")
    r.add_argument("dirs", nargs="+")
    r.add_argument("--seed", type=int, default=7)
    r.add_argument("--jobs", type=int, default=os.cpu_count())
    r.add_argument("--nvcc", default=shutil.which("nvcc") or
                   "/usr/local/cuda/bin/nvcc")
    r.add_argument("--timeout", type=int, default=30,
                   help="seconds per run of a binary")
    r.add_argument("--parallel-runs", type=int, default=4,
                   help="binaries running on the GPU at once")
    s = sub.add_parser("report")
    s.add_argument("dirs", nargs="+")
    s.add_argument("--failures")
    args = parser.parse_args()
    {"prepare": prepare, "run": run, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
