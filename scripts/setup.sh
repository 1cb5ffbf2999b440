#!/usr/bin/env bash
# The set-up command (README): install the dependencies (Debian 12), build
# cuda-rewrite, and rewrite a sample to show it working.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
  clang-22 libclang-22-dev llvm-22-dev llvm-22-tools libclang-rt-22-dev \
  cmake ninja-build g++ libgtest-dev python3 patch
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="${CXX:-clang++-22}"
cmake --build build -j "$(nproc)"
echo "== cuda-rewrite --list samples/systolic/2d5pt.cu"
build/tool/cuda-rewrite --list samples/systolic/2d5pt.cu -- -I samples/common
echo "== cuda-rewrite --diff samples/systolic/2d5pt.cu"
build/tool/cuda-rewrite --diff --remarks samples/systolic/2d5pt.cu -- -I samples/common
