#!/usr/bin/env python3
"""Checks that every kernel of a compiled CUDA file fits an sm_90 block.

Usage: check-registers.py [--name LABEL] [--known LIST] LOG PTX...

LOG is what nvcc printed with --resource-usage: for -rdc=true builds the
linker's lines (`nvlink info : Function properties for '<kernel>':` then
`used N registers, ...`), the register counts of the linked image; without
-rdc, ptxas's (`Function properties for <kernel>` ... `Used N registers`).
The PTX files (nvcc -keep) name the kernels (`.entry`) and give each one's
`.maxntid` / `.reqntid` (`__launch_bounds__`). Kernels of the log that no
PTX file defines (the device runtime's, from libcudadevrt) are not checked,
nor kernels of the PTX the linker dropped as unused.

A kernel's block may have T threads: its bound's product, else 1024 (any
block). Registers are allocated per warp in units of 256 and, for the
hardware's per-block check, to warps rounded up to the four sub-partitions
of an SM (cudaOccMaxBlocksPerSMRegsLimit, cuda_occupancy.h), so a
block needs roundup(R * 32, 256) * roundup(ceil(T / 32), 4) registers: at
most 65536 on sm_90 (64 registers a thread at 1024 threads, 80 at 768), or
its launch fails with "too many resources requested". No kernel may use more
than 255 registers a thread. Each failing kernel is printed with LABEL, its
demangled name and the numbers; the exit status is 1 if any fails, 2 if the
log has no register count for any kernel of the PTX (a compile without
--resource-usage, or a log format this script does not read).

LIST names kernels known to be over the bound, a line `<pass>/<sample>
<kernel>` each (the kernel's demangled name without return type, template
arguments and parameters; `#` starts a comment); LABEL's first word is the
sample. Such a kernel is
printed as known and does not fail the check, unless it fits: then its line
is stale, and that fails.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

REGISTERS_PER_BLOCK = 65536  # sm_90 (cudaDeviceProp::regsPerBlock)
MAX_REGISTERS_PER_THREAD = 255
ALLOCATION_UNIT = 256  # registers, allocated per warp
SUB_PARTITIONS = 4
WARP = 32
ANY_BLOCK = 1024

ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(")
BOUND = re.compile(r"\.(maxntid|reqntid)\s+(\d+(?:\s*,\s*\d+)*)")
# The linker's line names the kernel in quotes; ptxas's does not.
PROPERTIES = re.compile(
    r"^(nvlink|ptxas) info\s*: Function properties for '?([\w$.]+)'?:?\s*$")
USED = re.compile(r"^(nvlink|ptxas) info\s*: [Uu]sed (\d+) registers")


def kernel_bounds(ptx_files):
    """Maps each kernel the PTX defines to its bound's threads (or None)."""
    bounds = {}
    for path in ptx_files:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for match in ENTRY.finditer(text):
            params_end = text.find(")", match.end())
            body = text.find("{", params_end)
            if params_end < 0 or body < 0:
                continue  # a declaration without a body
            threads = None
            for bound in BOUND.finditer(text, params_end, body):
                product = 1
                for extent in bound.group(2).split(","):
                    product *= int(extent)
                threads = product if threads is None else min(threads, product)
            bounds[match.group(1)] = threads
    return bounds


def register_counts(log):
    """Maps each function the log reports on to its registers; the linker's
    count (the linked image's) wins over ptxas's."""
    counts = {"ptxas": {}, "nvlink": {}}
    current = None
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            properties = PROPERTIES.match(line.rstrip("\n"))
            if properties:
                current = properties.group(1, 2)
                continue
            used = USED.match(line)
            if used and current:
                tool, name = current
                counts[tool][name] = int(used.group(2))
                current = None
    return {**counts["ptxas"], **counts["nvlink"]}


def registers_per_block(registers, threads):
    per_warp = -(-registers * WARP // ALLOCATION_UNIT) * ALLOCATION_UNIT
    warps = -(-threads // WARP)
    return per_warp * (-(-warps // SUB_PARTITIONS) * SUB_PARTITIONS)


def demangler():
    nvcc = os.environ.get("NVCC", "")
    candidates = []
    if nvcc:
        candidates.append(os.path.join(os.path.dirname(nvcc), "cu++filt"))
    candidates += ["cu++filt", "c++filt", "llvm-cxxfilt"]
    for candidate in candidates:
        path = shutil.which(candidate)
        if path:
            return path
    return None


def demangle(names):
    # Internal-linkage kernels of -rdc builds carry a prefix before the
    # mangled name: __nv_static_<n>__<hash>_<file>_<hash>__Z....
    stripped = [re.sub(r"^__nv_static_\w*?_(_Z)", r"\1", n) for n in names]
    tool = demangler()
    if not tool or not names:
        return dict(zip(names, names))
    try:
        out = subprocess.run([tool], input="\n".join(stripped) + "\n",
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return dict(zip(names, names))
    demangled = out.split("\n")[:len(names)]
    if len(demangled) != len(names):
        return dict(zip(names, names))
    return dict(zip(names, demangled))


def short_name(demangled):
    """A kernel's name without return type, template arguments and
    parameters: `void ns::k<2>(int)` is `ns::k`; a kernel in an unnamed
    namespace (the fused kernels of camera, interpolate and pyramid) is
    `(anonymous namespace)::k`, which names it as it is."""
    anonymous = "(anonymous namespace)::"
    prefix = anonymous if demangled.startswith(anonymous) else ""
    rest = demangled[len(prefix):].replace(anonymous, "")
    words = rest.split("(", 1)[0].split("<", 1)[0].split()
    return prefix + words[-1] if words else demangled


def read_known(path, sample):
    """The kernels (demangled names without parameters) that the known list
    at path excuses for sample: lines `<pass>/<sample> <kernel>`."""
    known = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if len(fields) == 2 and fields[0] == sample:
                known.add(fields[1])
    return known


def main():
    parser = argparse.ArgumentParser(
        description="Check kernels' registers against their largest block.")
    parser.add_argument("--name", default="",
                        help="label for the messages: <pass>/<sample> [...]")
    parser.add_argument("--known", help="list of kernels known to be over "
                        "the bound, by sample (the label's first word)")
    parser.add_argument("log", help="nvcc --resource-usage output")
    parser.add_argument("ptx", nargs="+", help="the PTX of the compile")
    args = parser.parse_args()
    label = f"{args.name}: " if args.name else ""

    try:
        bounds = kernel_bounds(args.ptx)
        counts = register_counts(args.log)
        known = (read_known(args.known, (args.name.split() or [""])[0])
                 if args.known else set())
    except OSError as error:
        print(f"register bound: {label}{error}")
        return 2
    checked = sorted(k for k in bounds if k in counts)
    if not checked:
        print(f"register bound: {label}no register count in {args.log} for "
              f"any kernel of {' '.join(args.ptx)} (compiled without "
              f"--resource-usage?)")
        return 2
    names = demangle(checked)
    failures = []
    excused = []
    fitting_known = {}  # listed name -> a kernel of it that fits
    over_known = set()
    largest = None
    for kernel in checked:
        registers = counts[kernel]
        threads = bounds[kernel] or ANY_BLOCK
        needed = registers_per_block(registers, threads)
        why = (f"a bound of {threads} threads" if bounds[kernel]
               else f"no __launch_bounds__: any block, up to {ANY_BLOCK} "
               f"threads")
        over = []
        if registers > MAX_REGISTERS_PER_THREAD:
            over.append(f"kernel {names[kernel]} uses {registers} registers a "
                        f"thread, more than {MAX_REGISTERS_PER_THREAD}")
        if needed > REGISTERS_PER_BLOCK:
            over.append(
                f"kernel {names[kernel]} uses {registers} registers a thread "
                f"({why}): a {threads}-thread block needs {needed} registers, "
                f"more than the {REGISTERS_PER_BLOCK} of an sm_90 block")
        short = short_name(names[kernel])
        if short in known:
            excused += over
            if over:
                over_known.add(short)
            else:
                fitting_known.setdefault(
                    short, f"kernel {names[kernel]} fits now ({registers} "
                    f"registers x {threads} threads = {needed})")
            continue
        failures += over
        if not over and (largest is None or needed > largest[0]):
            largest = (needed, kernel, registers, threads)
    # A listed name is stale where it is over in no instantiation here.
    for short, fits in sorted(fitting_known.items()):
        if short not in over_known:
            failures.append(f"{fits}: remove '{short}' from {args.known}")
    for line in excused:
        print(f"register bound: {label}known over: {line}")
    for line in failures:
        print(f"register bound: {label}{line}")
    if failures:
        return 1
    if largest:
        needed, kernel, registers, threads = largest
        fits = [k for k in checked if short_name(names[k]) not in known]
        print(f"register bound: {label}{len(fits)} kernels fit; the largest, "
              f"{names[kernel]}, {registers} registers x {threads} threads = "
              f"{needed} of {REGISTERS_PER_BLOCK}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
