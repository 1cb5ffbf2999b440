#!/usr/bin/env python3
"""Builds, runs and compares every sample on the GPU machine (docs/design.md s. 7).

For each samples/<pass>/<name>.cu, and each element type it lists in a line
`// bench-types: float double` (float only without one), it builds the
original and each rewritten variant of it (made beforehand by bench/stage.sh
on a machine with the tool, as <rewritten-dir>/<variant>/<pass>/<name>.cu,
or <name>.<type>.cu for a type other than float, which both builds get as
-DSAMPLE_REAL=<type>), runs them all with the same seed, together with the
extra runs of the original that its pass or the sample asks for (the
hand-written `--flat` version of the aggregate samples, the CUB version
`--cub` of three promote samples) and, for the float configuration of
samples/systolic/conv<R>x<C>.cu, the library baselines of
bench/baselines/conv_libraries.cu (NPP and cuDNN), parses their RESULT
lines (samples/common/harness.cuh) and prints two Markdown tables: one row
per sample configuration (`<pass>/<name>` for float, `<pass>/<name>:<type>`
otherwise) and variant (median time, speedup over the original, ratios to
the flat and the CUB versions, speedup over NPP, error, status, achieved
GB/s against the measured copy bandwidth, GCells/s), then the geometric
means per variant. A column that no row fills (vs flat, vs cub, speedup vs
npp, GCells/s) is left out.

    python3 bench/run.py [--gpu-spec bench/gpu-specs/h100.json]
                         [--log-dir DIR] [--staged] [SAMPLE ...]

Exit status: 0 when every variant that was there to run built, ran and
passed its check; 1 otherwise (a variant that stage.sh could not produce,
REFUSED, that was never staged, MISSING, or a library baseline that cannot
be built or run here, MISSING or SKIPPED, counts only with --strict); 2 for
a usage error. Standard library only: the GPU machine has no extra packages.
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
PROBE_SOURCE = ROOT / "gpu" / "probe" / "cuda-rewrite-probe.cu"

# Rewritten variants per pass, in table order: the folders under
# --rewritten-dir that bench/stage.sh writes (keep in step with variants_of
# there). A pass not listed has the one variant "rewritten".
REWRITTEN_VARIANTS = {"aggregate": ["warp", "block", "kernel"],
                      # scripts/promote-variants.sh
                      "promote": ["p", "pa2", "pa128", "po", "pao128"],
                      # rewritten: shared-memory tiles; hybrid:
                      # hybrid(0.5), split along x; hybrid-y: along y
                      "fuse": ["rewritten", "hybrid", "hybrid-y"],
                      # one rewritten binary; its default model
                      "pipeline": ["megakernel"]}
DEFAULT_VARIANTS = ["rewritten"]
BASELINE = "original"  # "speedup" is its time over a variant's.
FLAT = "flat"          # "vs flat" is a variant's time over this one's.
CUB = "cub"            # "vs cub" likewise.
NPP = "npp"            # "speedup vs npp" is its time over a variant's.
HALIDE = "halide"      # "speedup vs halide" likewise.
# Peers: other implementations of a sample, each with a "speedup vs <peer>"
# column (the peer's time over a row's).
PEERS = (NPP, HALIDE)
# The variants that get a "vs <variant>" column (a row's time over theirs),
# listed last in the summary, in this order.
REFERENCES = (FLAT, CUB)
# Extra runs of the ORIGINAL binary, after the rewritten variants: (variant,
# sample arguments), per pass or per sample (<pass>/<name>); a sample gets its
# pass's runs, then its own. The sample prints the same RESULT line.
ORIGINAL_RUNS = {"aggregate": [(FLAT, ["--flat"])],
                 "promote/compact": [(CUB, ["--cub"])],
                 "promote/partition": [(CUB, ["--cub"])],
                 "promote/unique": [(CUB, ["--cub"])]}
# Extra runs of a pass's first REWRITTEN binary under other settings of the
# environment, after its rows: (variant, environment). The pipeline models
# are chosen at run time (runtime/include/cuda_rewrite/pipeline.cuh); "tuned"
# reads the configuration scripts/pipeline-tune.py wrote for the sample.
PIPELINE_TUNED_DIR = ROOT / "build-bench" / "pipeline-tuned"
PIPELINE_MODEL = "CUDA_REWRITE_PIPELINE_MODEL"
REWRITTEN_ENV_RUNS = {
    "pipeline": [("kbk", {PIPELINE_MODEL: "kbk"}),
                 ("coarse", {PIPELINE_MODEL: "coarse"}),
                 ("coarse-green", {PIPELINE_MODEL: "coarse",
                                   "CUDA_REWRITE_PIPELINE_GREEN": "1"}),
                 ("fine", {PIPELINE_MODEL: "fine"}),
                 ("tuned", {"CUDA_REWRITE_PIPELINE_CONFIG":
                            str(PIPELINE_TUNED_DIR / "{name}.cfg")})]}
# Statuses that fail the run only with --strict: nothing ran (a library
# baseline says SKIPPED when its library cannot run here).
NOT_RUN = ("REFUSED", "MISSING", "SKIPPED")

# The Halide peers of the fuse samples (bench/halide/): built on a machine
# with Halide (bench/halide/build.sh), carried to the GPU machine, run as
# `<name>` with the sample's arguments.
HALIDE_DIR = ROOT / "build-bench" / "halide"

# Element types: a sample lists them in a line "// bench-types: float double"
# (without one, float only). Every type is a configuration of its own, named
# "<pass>/<name>" for float (as before types existed) and
# "<pass>/<name>:<type>" otherwise, built with -DSAMPLE_REAL=<type> and
# staged as <variant>/<pass>/<name>.<type>.cu (bench/stage.sh).
TYPES_LINE = re.compile(r"^// bench-types: (.*)$", re.M)

# A sample whose speedups depend on its random input (how much work reaches
# a pipeline's later stages) names the seed its runs use in a line
# "// bench-seed: 1", so that its ratios compare across runs
# (bench/compare.py); --seed overrides it. Every other sample gets fresh
# input on each run.
SEED_LINE = re.compile(r"^// bench-seed: (\d+)\s*$", re.M)
DEFAULT_TYPE = "float"
TYPE_NAME = re.compile(r"^[A-Za-z_]\w*$")

# Library baselines of the convolution samples (float configuration only):
# variant -> (defines, libraries) of one build of CONV_LIBRARIES each, so that
# a library missing at build time costs only its own rows. Each row runs
# `<binary> R C --<variant>`, R x C from the sample's name.
CONV_SAMPLE = re.compile(r"^systolic/conv(\d+)x(\d+)$")
CONV_LIBRARIES = ROOT / "bench" / "baselines" / "conv_libraries.cu"
LIBRARY_BUILDS = {NPP: (["-DCONV_WITH_NPP"], ["-lnppif", "-lnppc"]),
                  "cudnn": (["-DCONV_WITH_CUDNN"], ["-lcudnn"])}
# A library build that fails on this is a library missing here (MISSING),
# not a broken program (BUILD-FAIL).
LIBRARY_ABSENT = re.compile(
    r"^.*(?:cannot find -l(?:npp|cudnn)|(?:npp|cudnn)\w*\.h: No such file)"
    r".*$", re.M)


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


def run_command(argv, log, title, timeout, env=None):
    """Runs argv from the repository root, with `env` added to the
    environment; returns (exit status, output).

    The status is None when it ran past the timeout.
    """
    start = time.monotonic()
    if env:
        title += " (" + " ".join(f"{k}={v}" for k, v in env.items()) + ")"
    try:
        p = subprocess.run([str(a) for a in argv], cwd=ROOT,
                           env=dict(os.environ, **(env or {})),
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


def original_runs(sample):
    """The extra runs of the original binary of a sample (ORIGINAL_RUNS)."""
    return ORIGINAL_RUNS.get(pass_of(sample), []) + \
        ORIGINAL_RUNS.get(sample, [])


def split_config(config):
    """"<pass>/<name>[:<type>]" -> ("<pass>/<name>", type)."""
    sample, _, type_ = config.partition(":")
    return sample, type_ or DEFAULT_TYPE


def config_name(sample, type_):
    return sample if type_ == DEFAULT_TYPE else f"{sample}:{type_}"


def type_defines(type_):
    """What nvcc (and, when staging, the tool) gets for an element type."""
    return [] if type_ == DEFAULT_TYPE else [f"-DSAMPLE_REAL={type_}"]


def staged_source(rewritten_dir, variant, config):
    """Where bench/stage.sh writes a configuration's variant."""
    sample, type_ = split_config(config)
    suffix = ".cu" if type_ == DEFAULT_TYPE else f".{type_}.cu"
    return rewritten_dir / variant / f"{sample}{suffix}"


def sample_types(path):
    """The element types a sample's `// bench-types:` line lists, in order
    (float when it has none); ValueError for a name that is no C type."""
    m = TYPES_LINE.search(path.read_text(errors="replace"))
    types = m.group(1).split() if m else []
    for t in types:
        if not TYPE_NAME.match(t):
            raise ValueError(f"{path}: bad type '{t}' in its bench-types line")
    return list(dict.fromkeys(types)) or [DEFAULT_TYPE]


def sample_seed(config):
    """The seed a configuration's `// bench-seed:` line fixes, or None."""
    path = ROOT / "samples" / f"{split_config(config)[0]}.cu"
    m = SEED_LINE.search(path.read_text(errors="replace")) \
        if path.exists() else None
    return int(m.group(1)) if m else None


def selects(filter_, config):
    """Does a command-line SAMPLE pick this configuration? A pass or
    <pass>/<name> picks every type of it, <pass>/<name>:<type> one."""
    sample, type_ = split_config(config)
    f = filter_.rstrip("/")
    return (f in (sample, config, f"{sample}:{type_}")
            or sample.startswith(f + "/"))


def discover_samples(filters):
    """Every configuration of samples/<pass>/<name>.cu ("<pass>/<name>" for
    float, "<pass>/<name>:<type>" for another type), in order of sample and
    then of its bench-types line, filtered as selects() says."""
    found = []
    for path in sorted((ROOT / "samples").glob("*/*.cu")):
        if path.parent.name == "common":
            continue
        sample = str(path.relative_to(ROOT / "samples").with_suffix(""))
        found += [config_name(sample, t) for t in sample_types(path)]
    if filters:
        found = [c for c in found if any(selects(f, c) for f in filters)]
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
    """(copy GB/s, GPU name) from a spec file (schema: gpu/GpuSpec.h)."""
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

    Returns (rows, builds): a row is a dict with sample (the configuration),
    variant, type, the binary it runs ("exe_of": a key of builds), its extra
    arguments, and a status already when it cannot run (REFUSED, MISSING);
    builds maps (configuration, variant), or ("conv-libraries", library),
    to what to compile: source, the folder of the original (for its
    headers), defines, libraries.
    """
    rows, builds = [], {}

    def row(config, variant, exe_of, extra=(), status=None, note="",
            env=None):
        rows.append({"sample": config, "variant": variant,
                     "type": split_config(config)[1], "exe_of": exe_of,
                     "args": list(extra), "status": status, "note": note,
                     "env": env or {}, "exit": None, "result": {}})

    for config in samples:
        sample, type_ = split_config(config)
        original = ROOT / "samples" / f"{sample}.cu"
        defines = type_defines(type_)
        builds[(config, BASELINE)] = {"source": original, "defines": defines,
                                      "include": original.parent, "libs": []}
        row(config, BASELINE, (config, BASELINE))
        for variant in rewritten_variants(sample):
            source = staged_source(args.rewritten_dir, variant, config)
            verdict = verdicts.get((config, variant))
            if verdict and verdict["status"] != "ok":
                # stage.sh deletes what it refused; a file left there is
                # older than the verdict.
                row(config, variant, None, status="REFUSED",
                    note="stage.log: " + (verdict["reason"] or "refused"))
            elif not source.is_file():
                row(config, variant, None, status="MISSING",
                    note=f"no {source} (run bench/stage.sh)")
            else:
                builds[(config, variant)] = dict(
                    builds[(config, BASELINE)], source=source)
                row(config, variant, (config, variant))
        first = (config, rewritten_variants(sample)[0])
        for variant, env in REWRITTEN_ENV_RUNS.get(pass_of(sample), []):
            env = {k: v.format(name=sample.split("/")[1])
                   for k, v in env.items()}
            missing = [v for k, v in env.items() if k.endswith("_CONFIG")
                       and not Path(v).is_file()]
            if first not in builds or missing:
                row(config, variant, None, status="MISSING",
                    note=f"no {missing[0]} (run scripts/pipeline-tune.py)"
                    if missing else "no rewritten build")
            else:
                row(config, variant, first, env=env)
        for variant, extra in original_runs(sample):
            row(config, variant, (config, BASELINE), extra)
        if sample.startswith("fuse/") and type_ == DEFAULT_TYPE:
            peer = HALIDE_DIR / sample.split("/")[1]
            key = (config, HALIDE)
            builds[key] = {"prebuilt": peer}
            row(config, HALIDE, key,
                status=None if peer.is_file() else "MISSING",
                note="" if peer.is_file() else
                f"no {peer} (run bench/halide/build.sh where Halide is)")
        conv = CONV_SAMPLE.match(sample)
        if conv and type_ == DEFAULT_TYPE:
            for library, (lib_defines, libs) in LIBRARY_BUILDS.items():
                key = ("conv-libraries", library)
                builds[key] = {"source": CONV_LIBRARIES, "defines": lib_defines,
                               "include": CONV_LIBRARIES.parent, "libs": libs}
                row(config, library, key, [*conv.groups(), f"--{library}"])
    return rows, builds


# Passes whose samples need relocatable device code: they launch kernels
# from the device (dynamic parallelism), or their runtime keeps program-wide
# device state (pipeline queues' error state, cuda_rewrite/config.cuh).
RDC_PASSES = {"aggregate", "promote", "pipeline"}


def build(args, nvcc, log, key, spec):
    """Compiles one build of plan(); returns (executable or None, output)."""
    name, variant = key
    if "prebuilt" in spec:
        exe = spec["prebuilt"]
        return (exe if exe.is_file() else None), f"prebuilt {exe}"
    exe = args.build_dir / (name.replace("/", "-").replace(":", ".") +
                            f"-{variant}")
    # The original's folder too, so that a rewritten file finds the headers
    # that sat beside the sample.
    # Relocatable device code only where samples need it: it costs others
    # time (conv3x3 5% on an H100, bench/RESULTS.md).
    rdc = ["-rdc=true"] if name.split("/")[0] in RDC_PASSES else []
    argv = [nvcc, "-O3", f"-arch={args.arch}", *rdc,
            "-I", ROOT / "samples" / "common", "-I", ROOT / "runtime" / "include",
            "-I", spec["include"], *spec["defines"],
            *shlex.split(args.nvcc_flags),
            spec["source"], "-lcudadevrt", *spec["libs"], "-o", exe]
    status, output = run_command(argv, log, f"build {name} {variant}",
                                 args.timeout)
    return (exe if status == 0 else None), output


def run_row(args, log, row, exe, seed):
    """Runs one row's binary and fills in its status and RESULT fields."""
    argv = [exe, f"--seed={seed}", *row["args"], *shlex.split(args.run_args)]
    status, output = run_command(
        argv, log, f"run {row['sample']} {row['variant']}", args.timeout,
        row.get("env"))
    result = parse_result(output) or {}
    library = row["variant"] in LIBRARY_BUILDS
    # A library baseline that cannot run here says why (a line
    # "<sample>: SKIPPED: <why>" and status=SKIPPED), or does not load.
    said = re.search(r"^\S+: SKIPPED: (.*)$", output, re.M)
    unloadable = re.search(r"^.*error while loading shared libraries.*$",
                           output, re.M)
    why = ""
    if status is None:
        verdict = "TIMEOUT"
    elif library and not result and unloadable:
        verdict, why = "SKIPPED", unloadable.group(0)
    elif not result:
        verdict = "RUN-FAIL"  # Crashed before the harness could report.
    elif result.get("status") == "ok" and status == 0:
        verdict = "ok"
    elif library and result.get("status") == "SKIPPED" and status == 0:
        verdict = "SKIPPED"
        why = said.group(1) if said else "the program says SKIPPED"
    else:
        verdict = "FAIL"
    row.update(status=verdict, exit=status, result=result)
    where = f"see 'run {row['sample']} {row['variant']}' in bench.log"
    if verdict == "SKIPPED":
        row["note"] = f"{why.strip()}; {where}"
    elif verdict == "FAIL":
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


def markdown(header, body):
    """A Markdown table; None cells are left out with their column (the
    header names the columns kept)."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(c for c in cells if c is not None) + " |"
              for cells in body]
    return "\n".join(lines)


def table(rows, copy_gbps):
    """The per-sample Markdown table that bench/RESULTS.md records.

    "vs flat", "vs cub" and "speedup vs <peer>" are there only when some
    sample has such a row, "GCells/s" when some RESULT line has cells=.
    """
    variants = {row["variant"] for row in rows}
    refs = [ref for ref in REFERENCES if ref in variants]
    peers = [peer for peer in PEERS if peer in variants]
    has_cells = any("cells" in row["result"] for row in rows)
    header = ["sample", "variant", "median ms", "speedup"] + \
        [f"vs {ref}" for ref in refs] + \
        [f"speedup vs {peer}" for peer in peers] + \
        ["max rel err", "status", "GB/s", "% copy BW"] + \
        ["GCells/s"] * has_cells
    body = []
    ok_ms = ok_medians(rows)
    for row in rows:
        r = row["result"]
        ms, nbytes = number(r, "median_ms"), number(r, "bytes")
        ncells = number(r, "cells")
        # Ratios only between correct results, as in the summary.
        base = ok_ms.get((row["sample"], BASELINE))
        ref_ms = [ok_ms.get((row["sample"], ref)) for ref in refs]
        peer_ms = [ok_ms.get((row["sample"], peer)) for peer in peers]
        if row["status"] != "ok":
            base = None
            ref_ms = [None] * len(refs)
            peer_ms = [None] * len(peers)
        gbps = nbytes / (ms * 1e-3) / 1e9 if ms and nbytes else None
        gcells = ncells / (ms * 1e-3) / 1e9 if ms and ncells else None
        body.append([
            row["sample"], row["variant"],
            f"{ms:.4f}" if ms else "-",
            f"{base / ms:.2f}x" if ms and base else "-",
            *(f"{ms / ref:.2f}x" if ms and ref else "-" for ref in ref_ms),
            *(f"{peer / ms:.2f}x" if ms and peer else "-" for peer in peer_ms),
            r.get("max_rel_err", "-"), row["status"],
            f"{gbps:.0f}" if gbps else "-",
            f"{100 * gbps / copy_gbps:.0f}%" if gbps and copy_gbps else "-",
            (f"{gcells:.2f}" if gcells else "-") if has_cells else None])
    return markdown(header, body)


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def summarize(rows):
    """Per variant (the original first, flat and cub last, the others in
    order of first appearance): the speedups over the original, the ratios
    to flat and to cub and the speedups over the peers (a peer's time over
    the variant's), each over the sample configurations where both rows are ok,
    and their geometric means (None when there are none)."""
    ok = ok_medians(rows)
    keys = ["speedup", *(f"vs_{ref}" for ref in REFERENCES),
            *(f"vs_{peer}" for peer in PEERS)]
    summary = {}
    for row in rows:
        entry = summary.setdefault(row["variant"], {k: {} for k in keys})
        ms = ok.get((row["sample"], row["variant"]))
        if ms is None:
            continue
        base = ok.get((row["sample"], BASELINE))
        if base:
            entry["speedup"][row["sample"]] = base / ms
        for ref in REFERENCES:
            ref_ms = ok.get((row["sample"], ref))
            if ref_ms:
                entry[f"vs_{ref}"][row["sample"]] = ms / ref_ms
        for peer in PEERS:
            peer_ms = ok.get((row["sample"], peer))
            if peer_ms:
                entry[f"vs_{peer}"][row["sample"]] = peer_ms / ms
    # The original first and the references last, as in the per-sample
    # table.
    def rank(v):
        if v == BASELINE:
            return 0
        return 2 + REFERENCES.index(v) if v in REFERENCES else 1
    order = sorted(summary, key=rank)
    summary = {v: summary[v] for v in order}
    for entry in summary.values():
        for key in keys:
            values = list(entry[key].values())
            entry[f"geomean_{key}"] = geomean(values) if values else None
    return summary


def summary_table(summary):
    """The geometric means per variant; the flat, cub and peer columns only
    when some sample has such a row."""
    refs = [ref for ref in REFERENCES if ref in summary]
    peers = [peer for peer in PEERS if peer in summary]
    header = ["variant", "samples", "geomean speedup"]
    for ref in refs:
        header += [f"samples with {ref}", f"geomean vs {ref}"]
    for peer in peers:
        header += [f"samples with {peer}", f"geomean speedup vs {peer}"]
    body = []
    for variant, e in summary.items():
        cells = [variant, str(len(e["speedup"])),
                 f"{e['geomean_speedup']:.2f}x" if e["geomean_speedup"]
                 else "-"]
        for key in [f"vs_{v}" for v in refs + peers]:
            mean = e[f"geomean_{key}"]
            cells += [str(len(e[key])), f"{mean:.2f}x" if mean else "-"]
        body.append(cells)
    return markdown(header, body)


def notes(rows):
    """One line per row that has something to explain (REFUSED, ...)."""
    return "\n".join(f"- {r['sample']} {r['variant']}: {r['status']}: "
                     f"{r['note']}" for r in rows if r["note"])


def part_spec(text):
    """"K/N" with 1 <= K <= N, as (K, N)."""
    m = re.fullmatch(r"(\d+)/(\d+)", text)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise argparse.ArgumentTypeError(
            f"'{text}' is not K/N with 1 <= K <= N")
    return int(m.group(1)), int(m.group(2))


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Build, run and compare every sample on the GPU.")
    p.add_argument("samples", nargs="*", metavar="SAMPLE",
                   help="<pass> or <pass>/<name> to run, every element "
                   "type of it, or <pass>/<name>:<type> for one "
                   "(default: all)")
    p.add_argument("--rewritten-dir", type=Path,
                   default=ROOT / "build-bench" / "rewritten",
                   help="rewritten sources, <variant>/<pass>/<name>.cu "
                   "(<name>.<type>.cu for a type other than float), "
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
                   help="input seed (default: the sample's bench-seed line, "
                   "else fresh per sample; logged)")
    p.add_argument("--timeout", type=float, default=600,
                   help="seconds per build or run")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="parallel builds (runs are always one at a time)")
    p.add_argument("--strict", action="store_true",
                   help="a REFUSED, MISSING or SKIPPED variant fails the "
                   "run too")
    p.add_argument("--part", type=part_spec, metavar="K/N",
                   help="only the K-th of N parts of the configurations "
                   "(every N-th, from the K-th: each part takes its share "
                   "of every pass), so that a bench too long for one "
                   "device call runs in N calls; compare.py takes their "
                   "results.json files together")
    p.add_argument("--list", action="store_true",
                   help="print the configurations this run would bench, "
                   "one a line, and exit")
    # Before --strict, MISSING failed unless this was given; now the default.
    p.add_argument("--allow-missing", action="store_true",
                   help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    for d in ("rewritten_dir", "build_dir", "log_dir", "gpu_spec"):
        if getattr(args, d) is not None:
            setattr(args, d, getattr(args, d).resolve())
    command = shlex.join(["python3", "bench/run.py", *argv])
    stage_path = args.rewritten_dir / "stage.log"
    stage_text, verdicts, stagings = read_stage_log(stage_path)

    try:
        samples = discover_samples(args.samples)
    except (OSError, ValueError) as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 2
    if args.staged:
        staged = {s for s, _ in verdicts}
        samples = [s for s in samples if s in staged or any(
            staged_source(args.rewritten_dir, v, s).is_file()
            for v in rewritten_variants(split_config(s)[0]))]
    if args.part:
        k, n = args.part
        samples = samples[k - 1::n]
    if not samples:
        print("run.py: no sample matches" +
              (f" among those staged in {args.rewritten_dir}"
               if args.staged else "") +
              (" in this part" if args.part else ""), file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(samples))
        return 0

    args.build_dir.mkdir(parents=True, exist_ok=True)
    args.log_dir.mkdir(parents=True, exist_ok=True)
    log = Log(args.log_dir / "bench.log")
    nvcc = find_nvcc(args.nvcc)
    # In bench.log rather than a file of its own: few files come back.
    log.text(f"stage.log ({stage_path})",
             stage_text or "(none: nothing staged by bench/stage.sh)\n")

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
        built = dict(zip(keys, pool.map(
            lambda k: build(args, nvcc, log, k, builds[k]), keys)))

    # Fresh input on every bench run, the same for every variant of a
    # sample (but for a sample's fixed seed); each checks it against its
    # own float64 reference.
    fresh = random.SystemRandom()
    seeds = {}
    for s in samples:
        seeds[s] = args.seed if args.seed is not None else sample_seed(s)
        if seeds[s] is None:
            seeds[s] = fresh.getrandbits(32)
    for row in rows:
        if row["status"] is None:
            exe, output = built[row["exe_of"]]
            absent = (LIBRARY_ABSENT.search(output)
                      if row["variant"] in LIBRARY_BUILDS else None)
            where = "see 'build {} {}' in bench.log".format(*row["exe_of"])
            if exe is None and absent:
                row["status"] = "MISSING"
                row["note"] = (f"{row['variant']} is not installed here: "
                               f"{absent.group(0).strip()}; {where}")
            elif exe is None:
                row["status"] = "BUILD-FAIL"
                row["note"] = where
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
