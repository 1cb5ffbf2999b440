#!/usr/bin/env bash
# The test command (README): build, then run every test CTest knows about:
# unit tests, lit tests, an nvcc compile of every rewritten sample and of
# the GPU tests, the CMake package example and, built with clang++-22 (the
# default, as scripts/setup.sh builds), a one-minute fuzz run. Needs no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="${CXX:-clang++-22}"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
