#!/usr/bin/env bash
# Usage: scripts/fuzz.sh [seconds]   (default 60)
# libFuzzer over the front end (test/fuzz/README.md): configures and builds
# build-fuzz/ with clang++-22, ASan and UBSan if needed, seeds a corpus from
# the samples and lit tests, and fuzzes for the given time. Exits non-zero
# when the fuzzer found a crash, a sanitizer report, a time-out or an
# out-of-memory; the reproducer is in build-fuzz/crashes/.
# Environment: FUZZ_BUILD_DIR (default build-fuzz), JOBS (default 2),
# FUZZ_SEEDS (lit, the default, or all: the samples too, 30 times slower
# each), FUZZ_ARGS (more libFuzzer flags, e.g. "-fork=2 -ignore_crashes=1").
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=${JOBS:-2}

if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++-22 -DCUDA_REWRITE_FUZZ=ON -DBUILD_TESTING=OFF
fi
cmake --build "$build" -j "$jobs" --target cuda-rewrite-fuzz

test/fuzz/make-corpus.sh "$build/corpus/seeds" "${FUZZ_SEEDS:-lit}"
# New inputs go to the first corpus directory; found/ persists across runs.
mkdir -p "$build/corpus/found" "$build/crashes"
# Each fuzzer process keeps its precompiled headers in a temporary
# directory; one that crashed leaves it behind, here rather than in /tmp.
rm -rf "$build/tmp"
mkdir -p "$build/tmp"

# -timeout: a parse and every pass take well under a second; 20 s is a hang.
# shellcheck disable=SC2086
TMPDIR="$PWD/$build/tmp" \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
  "$build/test/fuzz/cuda-rewrite-fuzz" \
  -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
  -dict=test/fuzz/cuda.dict -artifact_prefix="$build/crashes/" \
  -print_final_stats=1 ${FUZZ_ARGS:-} \
  "$build/corpus/found" "$build/corpus/seeds"
