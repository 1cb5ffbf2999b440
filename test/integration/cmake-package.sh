#!/usr/bin/env bash
# End-to-end test of the CMake package: install cuda-rewrite from a build
# directory into a temporary prefix, configure and build
# examples/cmake-project against it with nvcc (no GPU needed), and check that
# nvcc compiled the rewritten source, not the original.
#
# Usage: test/integration/cmake-package.sh [<tool build dir>]   (default: build)
# Environment: CUDACXX (nvcc to use), KEEP_TMP=1 (keep the work directory).
# Prints "1 passed, 0 failed" or "0 passed, 1 failed" last; exit status 0/1.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=${1:-build}
case $build_dir in
  /*) ;;
  *) [ -d "$build_dir" ] || build_dir=$repo/$build_dir ;;
esac

work=
log=

fail() {
  echo "FAIL: cmake-package: $*" >&2
  if [ -n "$log" ] && [ -s "$log" ]; then
    echo "--- last output ($log) ---" >&2
    tail -n 40 "$log" >&2
  fi
  [ -n "$work" ] && echo "work directory kept: $work" >&2
  echo "0 passed, 1 failed"
  exit 1
}

# Runs a command with its output in $log; fails the test with <what> if it
# fails.
step() {
  local what=$1
  shift
  echo "== $what"
  "$@" >"$log" 2>&1 || fail "$what failed: $*"
}

# Modification time with sub-second resolution, to see whether a build step
# rewrote a file.
mtime() { stat -c %y "$1"; }

[ -d "$build_dir" ] || fail "no build directory $build_dir"
build_dir=$(cd "$build_dir" && pwd)
[ -x "$build_dir/tool/cuda-rewrite" ] ||
  fail "$build_dir/tool/cuda-rewrite is missing; build the cuda-rewrite target first"

nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || fail "nvcc not found (set CUDACXX)"
generator=("-G" "Unix Makefiles")
command -v ninja >/dev/null && generator=("-G" "Ninja")

work=$(mktemp -d "${TMPDIR:-/tmp}/cuda-rewrite-cmake-package.XXXXXX") ||
  fail "cannot create a work directory"
prefix=$work/prefix
src=$work/example
bld=$work/build
log=$work/log

step "install $build_dir into $prefix" \
  cmake --install "$build_dir" --prefix "$prefix"
for f in bin/cuda-rewrite include/cuda_rewrite/runtime.cuh \
         lib/cmake/cuda_rewrite/cuda_rewriteConfig.cmake \
         lib/cmake/cuda_rewrite/cuda_rewriteConfigVersion.cmake \
         lib/cmake/cuda_rewrite/cuda_rewriteTargets.cmake \
         lib/cmake/cuda_rewrite/CudaRewrite.cmake; do
  [ -e "$prefix/$f" ] || fail "installed tree lacks $f"
done

# A copy, so that touching its source below leaves the checkout alone.
cp -R "$repo/examples/cmake-project" "$src" || fail "cannot copy the example"

step "configure the example" \
  cmake -S "$src" -B "$bld" "${generator[@]}" \
    -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CUDA_COMPILER="$nvcc" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
grep -q "$prefix/bin/cuda-rewrite" "$bld/CMakeCache.txt" "$bld"/*.ninja \
    "$bld"/CMakeFiles/app.dir/build.make 2>/dev/null ||
  fail "the build does not run the installed tool $prefix/bin/cuda-rewrite"

step "build the example" cmake --build "$bld"
rewritten=$bld/cuda_rewrite/src/main.cu
grep -q "Rewriting" "$log" || fail "the build did not run the rewrite step"
[ -f "$rewritten" ] || fail "no rewritten source $rewritten"
if grep -nE "#[[:space:]]*pragma[[:space:]]+cuda_rewrite|_Pragma\(\"cuda_rewrite" "$rewritten" >&2; then
  fail "$rewritten still has cuda_rewrite pragmas"
fi
[ -x "$bld/app" ] || fail "no executable $bld/app"

# nvcc must have compiled the rewritten copy and never the original.
python3 - "$bld/compile_commands.json" "$rewritten" "$src/src/main.cu" \
    >"$log" 2>&1 <<'PY' || fail "compile_commands.json check failed"
import json, os, sys
db, rewritten, original = sys.argv[1:]
files = [os.path.realpath(os.path.join(e["directory"], e["file"]))
         for e in json.load(open(db))]
assert os.path.realpath(rewritten) in files, f"{rewritten} not compiled: {files}"
assert os.path.realpath(original) not in files, f"{original} compiled: {files}"
PY

# Incremental builds: nothing to redo without changes; an edit of the original
# re-runs the rewrite.
before=$(mtime "$rewritten")
step "rebuild without changes" cmake --build "$bld"
[ "$(mtime "$rewritten")" = "$before" ] ||
  fail "a rebuild without changes re-ran the rewrite"
sleep 1
touch "$src/src/main.cu"
step "rebuild after editing src/main.cu" cmake --build "$bld"
[ "$(mtime "$rewritten")" != "$before" ] ||
  fail "editing src/main.cu did not re-run the rewrite"

[ "${KEEP_TMP:-0}" = 1 ] && echo "work directory kept: $work" || rm -rf "$work"
echo "PASS: cmake-package"
echo "1 passed, 0 failed"
