#!/usr/bin/env bash
# On the GPU machine: runs campaign directories that `difftest.py prepare`
# wrote here (they travel as one tarball: the sources compress tenfold),
# prints each one's verdicts and copies its results.json to $OUT (default
# ./difftest-results) as <dir>.results.json, for `difftest.py report` here.
#
#   bash test/fuzz/difftest/gpu-run.sh [--tar FILE] DIR...
#
# e.g. here:  tar czf build-difftest/carry.tgz -C build-difftest systolic-s1
#      there: bash test/fuzz/difftest/gpu-run.sh --tar build-difftest/carry.tgz build-difftest/systolic-s1
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${OUT:-difftest-results}
mkdir -p "$out"
if [[ ${1:-} == --tar ]]; then
  tar xzf "$2" -C "$(dirname "$2")"
  shift 2
fi
export PATH=$PATH:/usr/local/cuda/bin
for dir in "$@"; do
  python3 test/fuzz/difftest/difftest.py run "$dir" --jobs "$(nproc)" \
    > "$out/$(basename "$dir").log" 2>&1 || true
  cp "$dir/results.json" "$out/$(basename "$dir").results.json"
  grep -v "^ " "$out/$(basename "$dir").log" | tail -2 || true
  grep "^  " "$out/$(basename "$dir").log" | head -5 || true
  # Results that differ under other definitions, however many.
  grep -F "!!!" "$out/$(basename "$dir").log" || true
done
