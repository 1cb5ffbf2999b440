#!/usr/bin/env python3
"""Builds a program twice, as written and with cuda-rewrite's rewritten
files in place, runs both and compares what they print and write.

    scripts/diffrun.py --src DIR --rewritten DIR --run CMD
                       [--build CMD] [--output FILE ...] [--ignore REGEX ...]
                       [--rel-tol X] [--work DIR] [--timeout SECONDS]

--src is the program's source tree; --rewritten holds the files the tool
wrote for it (`cuda-rewrite --output-dir`, paths relative to --src). Both
trees are copied under --work (default: a temporary folder), the rewritten
files laid over the second copy; --build (a shell command, such as `make`)
then runs in each copy, and --run in each after it. The runs must exit the
same way and print the same standard output, and each --output file (a
path relative to the tree) must hold the same bytes, but for the lines
matching an --ignore pattern (timings, say) and, with --rel-tol, numbers
that differ by at most that relative tolerance (floating-point results
summed in another order).

Prints one verdict line: "same", "differs: <where>", or "failed: <which
step>"; exit status 0 same, 1 otherwise, 2 usage error. Standard library
only: it runs on the GPU machine as well.
"""

import argparse
import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)",
                    re.IGNORECASE)


def run(cmd, cwd, timeout):
    """(exit status or 'timeout', stdout, stderr) of a shell command."""
    try:
        p = subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True,
                           text=True, errors="replace", timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def kept_lines(text, ignore):
    return [line for line in text.splitlines()
            if not any(p.search(line) for p in ignore)]


def same_numbers(a, b, rel_tol):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return math.isclose(x, y, rel_tol=rel_tol, abs_tol=0.0)


def same_line(a, b, rel_tol):
    """Whether two lines are equal, numbers within rel_tol (when set)."""
    if a == b:
        return True
    if rel_tol is None:
        return False
    # The text between the numbers must match exactly.
    if NUMBER.split(a) != NUMBER.split(b):
        return False
    return all(same_numbers(x, y, rel_tol)
               for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)))


def first_difference(a, b, rel_tol):
    """None when the line lists match, else a description of the first
    difference."""
    for i, (x, y) in enumerate(zip(a, b)):
        if not same_line(x, y, rel_tol):
            return f"line {i + 1}: {x!r} vs {y!r}"
    if len(a) != len(b):
        return f"{len(a)} lines vs {len(b)}"
    return None


def lay_over(rewritten, tree):
    """Copies every file under `rewritten` over the same path in `tree`;
    the number of files."""
    count = 0
    for f in sorted(Path(rewritten).rglob("*")):
        if f.is_file():
            target = tree / f.relative_to(rewritten)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
            count += 1
    return count


def compare(args, work):
    trees = {"original": work / "original", "rewritten": work / "rewritten"}
    for tree in trees.values():
        shutil.copytree(args.src, tree, symlinks=True)
    if lay_over(args.rewritten, trees["rewritten"]) == 0:
        return f"failed: no rewritten file under {args.rewritten}"
    ignore = [re.compile(p) for p in args.ignore]
    results = {}
    for name, tree in trees.items():
        if args.build:
            status, out, err = run(args.build, tree, args.timeout)
            (work / f"{name}.build.log").write_text(out + err)
            if status != 0:
                return f"failed: the {name} build ({status}; {name}.build.log)"
        status, out, err = run(args.run, tree, args.timeout)
        (work / f"{name}.run.log").write_text(out + err)
        if status == "timeout":
            return f"failed: the {name} run timed out"
        results[name] = (status, out)
    if results["original"][0] != results["rewritten"][0]:
        return (f"differs: exit status {results['original'][0]} vs "
                f"{results['rewritten'][0]}")
    where = first_difference(kept_lines(results["original"][1], ignore),
                             kept_lines(results["rewritten"][1], ignore),
                             args.rel_tol)
    if where:
        return f"differs: standard output, {where}"
    for output in args.output:
        files = [trees[n] / output for n in ("original", "rewritten")]
        if not all(f.is_file() for f in files):
            return f"differs: {output} is not written by both runs"
        texts = [f.read_bytes() for f in files]
        if texts[0] == texts[1]:
            continue
        try:
            lines = [kept_lines(t.decode(), ignore) for t in texts]
        except UnicodeDecodeError:
            return f"differs: {output} (binary)"
        where = first_difference(*lines, args.rel_tol)
        if where:
            return f"differs: {output}, {where}"
    return "same"


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--src", type=Path, required=True)
    p.add_argument("--rewritten", type=Path, required=True)
    p.add_argument("--run", required=True, help="shell command")
    p.add_argument("--build", help="shell command, run before --run")
    p.add_argument("--output", action="append", default=[],
                   help="a file the run writes, relative to the tree")
    p.add_argument("--ignore", action="append", default=[],
                   help="lines matching this regular expression are not "
                   "compared")
    p.add_argument("--rel-tol", type=float,
                   help="numbers within this relative tolerance are equal")
    p.add_argument("--work", type=Path, help="default: a temporary folder")
    p.add_argument("--timeout", type=float, default=600)
    args = p.parse_args()
    if not args.src.is_dir() or not args.rewritten.is_dir():
        print("diffrun.py: --src and --rewritten must be directories",
              file=sys.stderr)
        return 2
    for pattern in args.ignore:
        try:
            re.compile(pattern)
        except re.error as e:
            print(f"diffrun.py: bad --ignore pattern {pattern!r}: {e}",
                  file=sys.stderr)
            return 2
    if args.work:
        if args.work.exists() and any(args.work.iterdir()):
            print(f"diffrun.py: --work {args.work} is not empty",
                  file=sys.stderr)
            return 2
        args.work.mkdir(parents=True, exist_ok=True)
        verdict = compare(args, args.work)
    else:
        with tempfile.TemporaryDirectory(prefix="diffrun-") as tmp:
            verdict = compare(args, Path(tmp))
    print(verdict)
    return 0 if verdict == "same" else 1


if __name__ == "__main__":
    sys.exit(main())
