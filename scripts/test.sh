#!/usr/bin/env bash
# The test command (README): build, then run every test CTest knows about:
# unit tests, lit tests, an nvcc compile of every rewritten sample and of
# the GPU tests, and the CMake package example. Needs no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
