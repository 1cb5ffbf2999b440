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

Some programs spell their constants as macros with defaults (--spelled);
some of those are built once more, original and rewritten, with other -D
values than the tool saw (--other-defs). There the rewritten build must
either stop at a static assertion ('pinned': the rewrite checks a value it
could not spell) or give the original's results under the same
definitions; otherwise the program fails (a value baked into the rewrite).
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))

from gen import PASSES, generator  # noqa: E402
from gen.common import (Program, Variant, assemble, extract,  # noqa: E402
                        macro_value, program_lines, spelling_for)

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
    # The spelling draws from streams of its own: with --spelled 0 the
    # files are those of the generator before spelling existed.
    programs = [module.generate(rng, f"p{i}", spelling_for(
        args.pass_name, args.seed, f"p{i}", args.spelled))
        for i in range(args.programs)]
    for p in programs:
        p.other = other_definitions(args, p)
    return [(assemble(args.pass_name, args.seed, programs[i:i + args.per_file]),
             programs[i:i + args.per_file], None)
            for i in range(0, len(programs), args.per_file)]


def other_definitions(args, program):
    """The -D definitions program `program` is built with a second time:
    for about `--other-defs` of the programs with knobs a -D may change
    (deterministic per pass, seed and name), some of those knobs (at least
    one), each with one of its other values. {} for the rest."""
    knobs = [k for k in program.knobs if k.others]
    rng = random.Random(f"{args.pass_name}-{args.seed}-other-{program.name}")
    if not knobs or rng.random() >= args.other_defs:
        return {}
    chosen = [k for k in knobs if rng.random() < 0.6] or [rng.choice(knobs)]
    return {k.macro: macro_value(rng.choice(k.others)) for k in chosen}


def regression_files(args):
    """test/regress/<pass>/*.cu as they are, one program each, with the
    tool flags of their `// difftest-flags:` line, or under every variant of
    the pass when they have none."""
    files = []
    for path in sorted(Path(args.regress).glob(f"{args.pass_name}/*.cu")):
        text = path.read_text()
        names = list(program_lines(text))
        m = re.search(r"^// difftest-flags: (.*)$", text, re.M)
        programs = [Program(n, "", {"file": path.name}) for n in names]
        for p in programs:
            p.other = kept_definitions(text, p.name)
        files.append((text, programs, m.group(1).split() if m else None))
    return files


OTHER_LINE = "// difftest-other-defines:"


def kept_definitions(text, name):
    """The other definitions a kept reproducer names for program `name` (a
    `// difftest-other-defines: DT_p3_W=1234 ...` line): its own macros."""
    m = re.search("^" + OTHER_LINE + r" (.*)$", text, re.M)
    if not m:
        return {}
    pairs = (d.split("=", 1) for d in m.group(1).split())
    return {k: v for k, v in pairs if k.startswith(f"DT_{name}_")}


def prepare(args):
    module = generator(args.pass_name)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    args.tool = str(Path(args.tool).resolve())  # the tool runs in `out`
    files = regression_files(args) if args.regress else generated_files(args)
    manifest = {"pass": args.pass_name, "seed": args.seed, "files": [],
                "programs": {}}
    if not args.regress:  # what reproduces the campaign's files
        manifest.update(spelled=args.spelled, other_defs=args.other_defs)

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
        # The file's second build: every chosen program's definitions
        # (each program's macros are its own).
        other = {p.name: p.other for p in programs if p.other}
        if other:
            entry["other"] = other
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
                if p.other:
                    manifest["programs"][p.name]["other"] = p.other
            print(f"prepared {entry['stem']}: " + ", ".join(
                f"{v}: rc {e['rc']}" for v, e in entry["variants"].items()),
                flush=True)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    shutil.copy(HERE / "difftest.cuh", out / "difftest.cuh")


#===-- run (on the GPU machine) --------------------------------------------===#

def nvcc_command(nvcc, source, binary, include, defines=()):
    return [nvcc, "-O2", "-arch=sm_90", "-rdc=true", "-w", "-I", str(include),
            "-I", str(ROOT / "runtime" / "include"), *defines, "-o",
            str(binary), str(source), "-lcudadevrt"]


def fresh(path, source):
    """Whether `path`, left by an earlier call on this machine, is newer than
    `source` (then it is kept)."""
    return (Path(path).exists() and
            Path(path).stat().st_mtime > Path(source).stat().st_mtime)


# A build that runs longer fails: nvcc's cicc has taken more than 15
# minutes on one generated pipeline file (seed 4, f13's original), which held
# a whole campaign with no result.
BUILD_TIMEOUT = 600


def run_nvcc(command):
    """(returncode, stderr) of an nvcc command; a time-out is returncode
    "timeout" with a line saying so. nvcc runs in a session of its own, so
    that a time-out kills its cicc and ptxas too."""
    with subprocess.Popen(command, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        try:
            _, stderr = proc.communicate(timeout=BUILD_TIMEOUT)
            return proc.returncode, stderr
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return "timeout", f"nvcc ran past {BUILD_TIMEOUT} s"


def build(job):
    nvcc, source, binary, include = job
    if fresh(binary, source):
        return str(binary), 0, ""
    returncode, stderr = run_nvcc(nvcc_command(nvcc, source, binary, include))
    return str(binary), returncode, stderr[-2000:]


#===-- builds with other definitions -------------------------------------===#

# nvcc's front end, ptxas, nvlink and the host compiler each start an error
# with a line of their own; indented lines after it are its context.
ERROR_START = re.compile(r"\berror\b", re.I)
ERROR_COUNT = re.compile(r"errors? detected in the compilation", re.I)
ERROR_AT = re.compile(r"\((\d+)\): (?:catastrophic )?error|:(\d+):\d+: "
                      r"(?:fatal )?error")
STATIC_ASSERT = re.compile(r'static assertion failed(?: with "(.*)"|: (.*))?'
                           r"|static_assert failed(?: due to requirement)?"
                           r"(.*)", re.I)


def error_blocks(stderr):
    """The errors of a compiler's output, each with its context lines."""
    blocks = []
    for line in stderr.splitlines():
        if line[:1].isspace() and blocks:
            blocks[-1].append(line)
        elif ERROR_START.search(line) and not ERROR_COUNT.search(line):
            blocks.append([line])
    return ["\n".join(b) for b in blocks]


def blame(block, ranges, names):
    """The programs an error belongs to: the one whose lines hold it, else
    those whose names it mentions (a mangled kernel name, a macro)."""
    m = ERROR_AT.search(block.split("\n", 1)[0])
    if m:
        line = int(m.group(1) or m.group(2))
        owners = [n for n, span in ranges.items() if line in span]
        if owners:
            return owners
    return [n for n in names
            if re.search(r"(?<![A-Za-z_])" + re.escape(n) + "_", block)]


def static_assert_message(blocks):
    """The message of the first failed static assertion, or None."""
    for b in blocks:
        m = STATIC_ASSERT.search(b)
        if m:
            text = next((g for g in m.groups() if g), "").strip()
            return text or b.split("\n", 1)[0].strip()
    return None


def build_other(job):
    """Builds `source` with the other definitions of the programs chosen
    (`defines`: program -> {macro: value}). When the build fails, the
    programs its errors belong to are dropped and it is built again without
    their definitions: a failed static assertion makes a program 'pinned'
    (the rewrite checks at compile time a value it could not spell), any
    other error 'failed'. Each program's macros are its own, so the others
    still build with theirs. An error no program can be blamed for drops
    every program left. Returns (binary, {"kept": [programs built with
    their definitions], "dropped": {program: {"build", "detail"}}})."""
    nvcc, source, binary, include, defines = job
    record = Path(f"{binary}.json")
    if fresh(record, source):
        return str(binary), json.loads(record.read_text())
    ranges = program_lines(Path(source).read_text())
    left, dropped = dict(defines), {}
    while left:
        flags = [f"-D{macro}={value}" for name in sorted(left)
                 for macro, value in sorted(left[name].items())]
        returncode, stderr = run_nvcc(nvcc_command(nvcc, source, binary,
                                                   include, flags))
        if returncode == 0:
            break
        blocks = error_blocks(stderr)
        mine = {n: [] for n in left}
        for b in blocks:
            for n in blame(b, ranges, list(left)):
                if n in mine:
                    mine[n].append(b)
        mine = {n: bs for n, bs in mine.items() if bs}
        if not mine:
            tail = (stderr.strip() or f"exit {returncode}")[-400:]
            for n in left:
                dropped[n] = {"build": "failed", "detail": tail}
            left = {}
            break
        for n, bs in mine.items():
            message = static_assert_message(bs)
            dropped[n] = ({"build": "pinned", "detail": message}
                          if message is not None else
                          {"build": "failed", "detail": bs[0][:400]})
            del left[n]
    outcome = {"kept": sorted(left), "dropped": dropped}
    record.write_text(json.dumps(outcome))
    return str(binary), outcome


def other_jobs(d, manifest, args, builds):
    """The builds with other definitions: for every file with programs
    chosen for them, the original and each rewritten file that built."""
    jobs = []
    for f in manifest["files"]:
        if not f.get("other"):
            continue
        jobs.append((args.nvcc, d / f"{f['stem']}.cu",
                     d / f"{f['stem']}.other.orig", d, f["other"]))
        for v, e in f["variants"].items():
            binary = str(d / f"{f['stem']}.{v}.bin")
            if not tool_failed(e["rc"]) and not builds[binary][0]:
                jobs.append((args.nvcc, d / f"{f['stem']}.{v}.cu",
                             d / f"{f['stem']}.{v}.other.bin", d,
                             f["other"]))
    return jobs


#===-- running ---------------------------------------------------------===#

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
    global BUILD_TIMEOUT
    BUILD_TIMEOUT = args.build_timeout
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
    others = {}
    if not args.no_other:
        start = time.time()
        ojobs = other_jobs(d, manifest, args, builds)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            others = dict(pool.map(build_other, ojobs))
        if ojobs:
            print(f"{d.name}: built {len(ojobs)} binaries with other "
                  f"definitions in {time.time() - start:.0f} s", flush=True)
    # Every (binary, environment) run, several at a time: the programs are
    # small, and a hung one holds only its own slot until the time-out.
    runs = []
    for f in manifest["files"]:
        runs.append((f, "original", str(d / f"{f['stem']}.orig"), {},
                     f["programs"]))
        for v, e in f["variants"].items():
            if not tool_failed(e["rc"]):
                for run_name, env in e["runs"].items():
                    runs.append((f, v + (f"/{run_name}" if run_name else ""),
                                 str(d / f"{f['stem']}.{v}.bin"), env,
                                 f["programs"]))
        runs += other_runs(d, f, others)

    def one_run(job):
        f, key, binary, env, names = job
        if binary in builds and builds[binary][0]:
            return job, {n: ("BUILD", "0", builds[binary][1][-300:])
                         for n in names}
        return job, run_binary(binary, args.seed, env, names, args.timeout)

    results = {}
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.parallel_runs) as pool:
        for (f, key, _, _, names), got in pool.map(one_run, runs):
            for n in names:
                results.setdefault(n, {})[key] = list(got.get(
                    n, ("MISSING", "0", "no result line")))
    print(f"{d.name}: {len(runs)} runs in {time.time() - start:.0f} s",
          flush=True)
    (d / "results.json").write_text(json.dumps(
        {"seed": args.seed, "results": results,
         "other_builds": other_outcomes(d, manifest, others)}, indent=1))
    summary(d)


def other_runs(d, f, others):
    """The runs of a file's builds with other definitions, each recording
    the programs built with theirs (keys other:original, other:<variant>)."""
    runs = []
    binary = str(d / f"{f['stem']}.other.orig")
    if others.get(binary, {}).get("kept"):
        runs.append((f, "other:original", binary, {},
                     others[binary]["kept"]))
    for v, e in f["variants"].items():
        binary = str(d / f"{f['stem']}.{v}.other.bin")
        if others.get(binary, {}).get("kept"):
            for run_name, env in e["runs"].items():
                runs.append((f, f"other:{v}" + (f"/{run_name}" if run_name
                                                else ""),
                             binary, env, others[binary]["kept"]))
    return runs


def other_outcomes(d, manifest, others):
    """Per program chosen: per build ('original' or a variant), whether it
    built with the program's definitions ('ok'), or what dropped them."""
    out = {}
    for f in manifest["files"]:
        for v in ["original"] + list(f["variants"]):
            binary = str(d / (f"{f['stem']}.other.orig" if v == "original"
                              else f"{f['stem']}.{v}.other.bin"))
            if binary not in others:
                continue
            outcome = others[binary]
            for n in f.get("other", {}):
                out.setdefault(n, {})[v] = outcome["dropped"].get(
                    n, {"build": "ok"})
    return out


#===-- report ----------------------------------------------------------------===#

OTHER_VERDICTS = ("same", "pinned", "failed", "invalid", "not run")


def verdicts(d):
    """Per program: (verdict, details) with verdict one of 'rewritten',
    'refused', 'failed', 'invalid' (the original fails its own check: a
    generator bug, not the tool's); and per program chosen for a build with
    other definitions, its verdict there (other_verdict). A program whose
    rewritten build gives other results than the original under the other
    definitions has failed."""
    manifest = json.loads((d / "manifest.json").read_text())
    res_path = d / "results.json"
    saved = json.loads(res_path.read_text()) if res_path.exists() else {}
    results = saved.get("results", {})
    builds = saved.get("other_builds", {})
    out, others = {}, {}
    for name, p in manifest["programs"].items():
        problems, rewritten = [], False
        for v, s in p["variants"].items():
            if s["status"] in ("tool-failed",):
                problems.append(f"{v}: tool failed: {s['remark']}")
            rewritten |= s["status"] == "rewritten"
        r = results.get(name)
        if results and r is None:
            # A campaign that ran but has no result for this program (its
            # file's run was cut short or left out) proves nothing about it.
            out[name] = ("not run", [])
            continue
        if r is not None:
            orig = r.get("original", ["MISSING", "0", ""])
            if orig[0] != "PASS":
                out[name] = ("invalid", [f"original: {orig}"])
                continue
            for key, (status, digest, detail) in r.items():
                if key == "original" or key.startswith("other:"):
                    continue
                if status != "PASS":
                    problems.append(f"{key}: {status} {detail}")
                elif digest != orig[1]:
                    problems.append(f"{key}: digest {digest} != original "
                                    f"{orig[1]}")
        if p.get("other"):
            others[name] = other_verdict(p, r or {}, builds.get(name))
            if others[name][0] == "failed":
                defines = " ".join(f"-D{k}={v}" for k, v in
                                   sorted(p["other"].items()))
                problems += [f"with {defines}: {x}" for x in others[name][1]]
        verdict = ("failed" if problems else
                   "rewritten" if rewritten else "refused")
        out[name] = (verdict, problems)
    return manifest, out, bool(results), others


def other_verdict(p, r, built):
    """A program's builds with its other definitions: ('same' | 'pinned' |
    'failed' | 'invalid' | 'not run', details). 'same': every rewritten
    build gives the original's results under them; 'pinned': some rewritten
    build stops at a static assertion (the value it could not spell), the
    others give the same results; 'failed': a rewritten build gives other
    results, or does not compile for another reason; 'invalid': the
    original is not valid under them (a generator bug)."""
    if not built:
        return "not run", []
    o = built.get("original", {"build": "failed", "detail": "not built"})
    if o["build"] != "ok":
        return "invalid", [f"original: {o['build']}: {o['detail']}"]
    orig = r.get("other:original", ["MISSING", "0", ""])
    if orig[0] != "PASS":
        return "invalid", [f"original: {orig}"]
    failures, pinned = [], []
    for v in p["variants"]:
        b = built.get(v)
        if b is None:  # the tool failed on the file, or its build did
            continue
        if b["build"] == "pinned":
            pinned.append(f"{v}: static_assert: {b['detail']}")
            continue
        if b["build"] != "ok":
            failures.append(f"{v}: does not compile (no static assertion): "
                            f"{b['detail']}")
            continue
        for key, (status, digest, detail) in r.items():
            if key.split("/")[0] != f"other:{v}":
                continue
            if status != "PASS":
                failures.append(f"{key}: {status} {detail}")
            elif digest != orig[1]:
                failures.append(f"{key}: digest {digest} != original "
                                f"{orig[1]}")
            elif checked(detail) != checked(orig[2]):
                # Floating-point outputs have no digest: a rewrite that
                # kept a default size checks another number of elements.
                failures.append(f"{key}: checked {checked(detail)} "
                                f"elements, the original {checked(orig[2])}")
    if failures:
        return "failed", failures
    return ("pinned", pinned) if pinned else ("same", [])


def checked(detail):
    """The number of elements a program's run checked (its result line)."""
    m = re.search(r"\bchecked=(\d+)", detail)
    return int(m.group(1)) if m else None


def summary(d, all_pinned=False):
    manifest, v, ran, others = verdicts(d)
    counts = {k: sum(1 for x in v.values() if x[0] == k)
              for k in ("rewritten", "refused", "failed", "invalid",
                        "not run")}
    ocounts = {k: sum(1 for x in others.values() if x[0] == k)
               for k in OTHER_VERDICTS}
    print(f"{manifest['pass']} seed {manifest['seed']} ({d.name}): "
          f"{len(v)} programs, {counts['rewritten']} rewritten, "
          f"{counts['refused']} refused, {counts['failed']} failed, "
          f"{counts['invalid']} invalid" +
          (f", {counts['not run']} not run" if counts["not run"] else "") +
          ("" if ran else " (not run)"))
    if others:
        print(f"  other definitions: {len(others)} programs, " + ", ".join(
            f"{ocounts[k]} {k}" for k in OTHER_VERDICTS if ocounts[k]))
    for name, (verdict, problems) in sorted(v.items()):
        if verdict in ("failed", "invalid"):
            print(f"  {name} {verdict}: {problems[0][:300]}")
    # Different results under other definitions: a value baked in.
    for name, (verdict, details) in sorted(others.items()):
        if verdict == "failed":
            macros = " ".join(sorted(manifest["programs"][name]["other"]))
            print(f"  !!! {name}: REWRITTEN BUILD DIFFERS UNDER OTHER "
                  f"DEFINITIONS ({macros}): {details[0][:300]}")
        elif verdict == "invalid":
            print(f"  {name} invalid under other definitions: "
                  f"{details[0][:300]}")
    pinned = [(n, x[1]) for n, x in sorted(others.items())
              if x[0] == "pinned"]
    for name, details in pinned if all_pinned else pinned[:5]:
        print(f"  {name} pinned: {details[0][:300]}")
    if len(pinned) > 5 and not all_pinned:
        print(f"  ... {len(pinned) - 5} more pinned (report --pinned lists "
              "them)")
    return manifest, v, counts, ocounts


COLUMNS = ("programs", "rewritten", "refused", "failed", "invalid", "not run")


def report(args):
    totals = {}
    for d in map(Path, args.dirs):
        manifest, v, counts, ocounts = summary(d, args.pinned)
        t = totals.setdefault(manifest["pass"], dict.fromkeys(
            COLUMNS + tuple("other " + k for k in OTHER_VERDICTS), 0))
        t["programs"] += len(v)
        for k, n in counts.items():
            t[k] += n
        for k, n in ocounts.items():
            t["other " + k] += n
        if args.failures:
            keep_failures(d, manifest, v, Path(args.failures))
    print("\n| pass | programs | rewritten | refused | failed | invalid "
          "| not run | other-definition builds: same "
          "| pinned (compile-time check) | failed | invalid | not run |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p, t in totals.items():
        print("| " + " | ".join([p] + [str(t[k]) for k in COLUMNS] +
                                [str(t["other " + k]) for k in OTHER_VERDICTS])
              + " |")


def keep_failures(d, manifest, v, out):
    out.mkdir(parents=True, exist_ok=True)
    for name, (verdict, problems) in v.items():
        if verdict != "failed":
            continue
        stem = manifest["programs"][name]["file"]
        text = (d / f"{stem}.cu").read_text()
        target = out / f"{manifest['pass']}-s{manifest['seed']}-{name}.cu"
        # The definitions it failed under, where `prepare --regress` reads
        # them back.
        other = manifest["programs"][name].get("other", {})
        defines = ([f"{OTHER_LINE} " + " ".join(
            f"{k}={v}" for k, v in sorted(other.items()))] if other else [])
        target.write_text("\n".join(["// " + x for x in problems] + defines)
                          + "\n" + extract(text, name))
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
    p.add_argument("--spelled", type=float, default=0.33, metavar="FRACTION",
                   help="about this fraction of the programs spell their "
                   "constants as macros or constexpr (default 0.33; 0: the "
                   "files of the generators before spelling, byte for byte)")
    p.add_argument("--other-defs", type=float, default=0.75,
                   metavar="FRACTION",
                   help="about this fraction of the spelled programs are "
                   "built a second time with other -D definitions "
                   "(default 0.75)")
    p.add_argument("--out", required=True)
    r = sub.add_parser("run")
    r.add_argument("dirs", nargs="+")
    r.add_argument("--seed", type=int, default=7)
    r.add_argument("--jobs", type=int, default=os.cpu_count())
    r.add_argument("--nvcc", default=shutil.which("nvcc") or
                   "/usr/local/cuda/bin/nvcc")
    r.add_argument("--timeout", type=int, default=30,
                   help="seconds per run of a binary")
    r.add_argument("--build-timeout", type=int, default=BUILD_TIMEOUT,
                   help="seconds per nvcc build, past which it fails")
    r.add_argument("--parallel-runs", type=int, default=4,
                   help="binaries running on the GPU at once")
    r.add_argument("--no-other", action="store_true",
                   help="skip the builds with other definitions")
    s = sub.add_parser("report")
    s.add_argument("dirs", nargs="+")
    s.add_argument("--failures")
    s.add_argument("--pinned", action="store_true",
                   help="list every pinned program with its static_assert "
                   "message (default: the first five per directory)")
    args = parser.parse_args()
    {"prepare": prepare, "run": run, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
