#!/usr/bin/env bash
# Usage: test/fuzz/smoke.sh <fuzzer> <work dir> <seconds>
# ctest's fuzz-smoke (cmake/FuzzSmoke.cmake): fuzzes from the lit tests'
# inputs for the given time. Fails on a crash, a sanitizer report, a hang
# (20 s an input) or more than 4 GB; the reproducer is in <work dir>, and
# `<fuzzer> <reproducer>` replays it (README.md).
set -euo pipefail
fuzzer=$1
work=$2
seconds=$3
here="$(cd "$(dirname "$0")" && pwd)"
"$here/make-corpus.sh" "$work/seeds" lit
mkdir -p "$work/found"
rm -rf "$work/tmp" && mkdir -p "$work/tmp"
TMPDIR="$work/tmp" UBSAN_OPTIONS=print_stacktrace=1 \
  "$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
  -dict="$here/cuda.dict" -artifact_prefix="$work/" -print_final_stats=1 \
  "$work/found" "$work/seeds"
