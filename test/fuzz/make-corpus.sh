#!/usr/bin/env bash
# Usage: test/fuzz/make-corpus.sh <dir> [lit|all]
# Fills <dir> (emptied first) with the fuzzer's seeds, named after their
# paths: the lit test inputs (test/lit/**/*.cu), and with `all` the samples
# too (samples/**/*.cu). The samples are left out by default: they include
# the C++ standard library through samples/common/harness.cuh, which the
# fuzzer parses for real (2-3 s an input against 0.08 s for a lit test;
# README.md). The lit tests' FileCheck lines (// CHECK: ..., // RUN: ...)
# are dropped: the mutator would spend its time in comments. Samples get an
# #include <cmath> first: they rely on the CUDA runtime wrapper's, which the
# fuzzer's stand-in (test/fuzz/include/cuda_runtime.h) leaves out.
set -euo pipefail
dir=${1:?usage: $0 <corpus dir> [lit|all]}
which=${2:-lit}
root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$dir"
mkdir -p "$dir"
cd "$root"
roots=(test/lit)
[ "$which" = all ] && roots+=(samples)
find "${roots[@]}" -name '*.cu' | sort | while read -r file; do
  seed="$dir/$(echo "$file" | tr / _)"
  case "$file" in
  samples/*) echo '#include <cmath>' >"$seed" ;;
  *) : >"$seed" ;;
  esac
  grep -Ev '^[[:space:]]*//[[:space:]]*[A-Z][A-Z0-9_-]*:' "$file" \
    >>"$seed" || true
done
echo "$(find "$dir" -type f | wc -l) seeds in $dir"
