#!/usr/bin/env bash
# End-to-end test of the CMake package:
#  1. install cuda-rewrite from a build directory into a temporary prefix,
#     then move the prefix (the installed tree must be relocatable), and check
#     what is there: tool, probe, runtime headers, package files, docs;
#  2. configure and build examples/cmake-project against it with nvcc (no GPU
#     needed), check that nvcc compiled the rewritten source, not the
#     original, and that incremental builds re-run the rewrite only when
#     needed;
#  3. the same example against the build tree (cuda_rewrite_DIR=<build dir>);
#  4. the options of cuda_rewrite_sources(), as the build rules they make, in
#     a project with no language (configured only, well under a second).
#
# The tool's --line-directives and --warnings-as-errors are only asked for in
# the example builds where its --help lists them, so that the package can be
# tested against a tool that predates them; step 4 checks the rules anyway.
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
tool=$build_dir/tool/cuda-rewrite
[ -x "$tool" ] ||
  fail "$tool is missing; build the cuda-rewrite target first"

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

# Which of the integration's flags the tool knows (its --help lists them).
# One it does not know is turned off project-wide in the examples, or not
# turned on.
tool_help=$("$tool" --help 2>&1) || fail "$tool --help failed"
tool_has() { grep -qE -- "(^|[[:space:]])$1([=[:space:]]|$)" <<<"$tool_help"; }
known_flags=()
line_directives=1
if ! tool_has --line-directives; then
  line_directives=0
  echo "note: $tool --help lists no --line-directives: the examples are" \
       "configured with CUDA_REWRITE_LINE_DIRECTIVES=OFF"
  known_flags+=(-DCUDA_REWRITE_LINE_DIRECTIVES=OFF)
fi
warnings_as_errors=1
if ! tool_has --warnings-as-errors; then
  warnings_as_errors=0
  echo "note: $tool --help lists no --warnings-as-errors: the build-tree" \
       "example is built without it"
fi

# The generated files of build directory <dir> that hold custom commands
# (Ninja or Makefiles).
rule_files() {
  find "$1" -maxdepth 1 -name build.ninja
  find "$1/CMakeFiles" -name build.make 2>/dev/null
}
# Fails unless the rule of build directory <dir> that writes <output> matches
# the extended regular expression <pattern>; with "!" first, unless it does
# not.
check_rule() {
  local negate=0
  if [ "$1" = "!" ]; then
    negate=1
    shift
  fi
  local dir=$1 output=$2 pattern=$3 rule
  rule=$(grep -h -- "-o $output " $(rule_files "$dir")) ||
    fail "no rewrite rule for $output in $dir"
  if grep -qE -- "$pattern" <<<"$rule"; then
    [ $negate = 0 ] || fail "the rule for $output matches '$pattern': $rule"
  else
    [ $negate = 1 ] || fail "the rule for $output lacks '$pattern': $rule"
  fi
}

# 1. Install, move, check the tree.
step "install $build_dir" \
  cmake --install "$build_dir" --prefix "$work/staging"
mv "$work/staging" "$prefix" || fail "cannot move the installed tree"
# The probe is built unless the build turned it off (without nvcc this test
# is not registered).
probe=1
grep -q "^CUDA_REWRITE_PROBE:BOOL=OFF$" "$build_dir/CMakeCache.txt" && probe=0
installed=(bin/cuda-rewrite)
[ $probe = 0 ] || installed+=(bin/cuda-rewrite-probe)
for f in "${installed[@]}" \
         include/cuda_rewrite/runtime.cuh \
         lib/cmake/cuda_rewrite/cuda_rewriteConfig.cmake \
         lib/cmake/cuda_rewrite/cuda_rewriteConfigVersion.cmake \
         lib/cmake/cuda_rewrite/cuda_rewriteTargets.cmake \
         lib/cmake/cuda_rewrite/CudaRewrite.cmake \
         share/cuda_rewrite/probe/cuda-rewrite-probe.cu \
         share/doc/cuda_rewrite/README.md; do
  [ -e "$prefix/$f" ] || fail "installed tree lacks $f"
done
for f in "$repo"/docs/*.md; do
  [ -e "$prefix/share/doc/cuda_rewrite/${f##*/}" ] ||
    fail "installed tree lacks share/doc/cuda_rewrite/${f##*/}"
done
if grep -rl "$work/staging" "$prefix/lib/cmake" >&2; then
  fail "the installed package names the prefix it was installed into"
fi
# The probe needs a GPU to probe, not to print its usage (exit status 2).
if [ $probe = 1 ]; then
  "$prefix/bin/cuda-rewrite-probe" --no-such-option >"$log" 2>&1
  [ $? = 2 ] && grep -q "usage:" "$log" ||
    fail "bin/cuda-rewrite-probe does not run"
fi

# Builds the example in build directory <dir> and checks that nvcc compiled
# the rewrite; <line directives> 1: and that the rewrite has #line
# directives naming the original. <only rewrite> 1: builds the rewrite
# alone, no nvcc (Ninja only: Makefiles have no target for it), and checks
# from compile_commands.json that nvcc would compile it.
build_example() {
  local dir=$1 line_directives=$2 only_rewrite=${3:-0}
  local rewritten=$dir/cuda_rewrite/src/main.cu
  if [ "$only_rewrite" = 1 ] && [ "${generator[1]}" = Ninja ]; then
    step "rewrite the example's source in $dir" \
      cmake --build "$dir" --target "$rewritten"
  else
    only_rewrite=0
    step "build the example in $dir" cmake --build "$dir"
  fi
  grep -q "Rewriting" "$log" || fail "the build did not run the rewrite step"
  [ -f "$rewritten" ] || fail "no rewritten source $rewritten"
  if grep -nE "#[[:space:]]*pragma[[:space:]]+cuda_rewrite|_Pragma\(\"cuda_rewrite" "$rewritten" >&2; then
    fail "$rewritten still has cuda_rewrite pragmas"
  fi
  if [ "$line_directives" = 1 ] &&
     ! grep -qE "^#[[:space:]]*(line[[:space:]]+)?[0-9]+[[:space:]]+\"$src/src/main\.cu\"" "$rewritten"; then
    fail "$rewritten has no #line directive naming $src/src/main.cu"
  fi
  [ "$only_rewrite" = 1 ] || [ -x "$dir/app" ] ||
    fail "no executable $dir/app"

  # nvcc must have compiled the rewritten copy and never the original.
  python3 - "$dir/compile_commands.json" "$rewritten" "$src/src/main.cu" \
      >"$log" 2>&1 <<'PY' || fail "compile_commands.json check failed"
import json, os, sys
db, rewritten, original = sys.argv[1:]
files = [os.path.realpath(os.path.join(e["directory"], e["file"]))
         for e in json.load(open(db))]
assert os.path.realpath(rewritten) in files, f"{rewritten} not compiled: {files}"
assert os.path.realpath(original) not in files, f"{original} compiled: {files}"
PY
}

# Configures the example copy into build directory <dir>, against the package
# <where> names, with the given extra cmake arguments (how to find it, flags).
configure_example() {
  local dir=$1 where=$2
  shift 2
  step "configure the example against $where" \
    cmake -S "$src" -B "$dir" "${generator[@]}" \
      -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@"
}

# 2. The example against the installed package. A copy, so that touching its
# source below leaves the checkout alone.
cp -R "$repo/examples/cmake-project" "$src" || fail "cannot copy the example"

configure_example "$bld" "$prefix" -DCMAKE_PREFIX_PATH="$prefix" \
  "${known_flags[@]}"
rewritten=$bld/cuda_rewrite/src/main.cu
check_rule "$bld" "$rewritten" "$prefix/bin/cuda-rewrite "
[ $line_directives = 0 ] ||
  check_rule "$bld" "$rewritten" "cuda-rewrite --line-directives "
check_rule ! "$bld" "$rewritten" "--warnings-as-errors"
build_example "$bld" $line_directives

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

# 3. The build tree as the package: its tool, the source tree's runtime
# headers and CudaRewrite.cmake. With --warnings-as-errors project-wide,
# since the example's one candidate must be rewritten, not refused. Only the
# rewrite is built: nvcc compiling the same rewrite against the same headers
# was step 2, and would cost the test a third of its time again.
tree_bld=$work/build-tree
tree_flags=("${known_flags[@]}")
[ $warnings_as_errors = 0 ] ||
  tree_flags+=(-DCUDA_REWRITE_WARNINGS_AS_ERRORS=ON)
configure_example "$tree_bld" "the build tree $build_dir" \
  -Dcuda_rewrite_DIR="$build_dir" "${tree_flags[@]}"
tree_rewritten=$tree_bld/cuda_rewrite/src/main.cu
check_rule "$tree_bld" "$tree_rewritten" "$tool "
[ $warnings_as_errors = 0 ] ||
  check_rule "$tree_bld" "$tree_rewritten" " --warnings-as-errors "
# (-isystem, as for any imported target's include directories)
grep -q -- "$repo/runtime/include" "$tree_bld/compile_commands.json" ||
  fail "nvcc does not see the build tree's runtime headers $repo/runtime/include"
build_example "$tree_bld" $line_directives 1

# 4. cuda_rewrite_sources()'s options and variables, as build rules.
opts=$work/options
mkdir -p "$opts/src" || fail "cannot create $opts"
for f in a b c d; do
  cp "$src/src/main.cu" "$opts/src/$f.cu" || fail "cannot copy main.cu"
done
cat >"$opts/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(cuda_rewrite_options NONE)
find_package(cuda_rewrite REQUIRED)
add_custom_target(t_default)
cuda_rewrite_sources(t_default src/a.cu)
add_custom_target(t_keywords)
cuda_rewrite_sources(t_keywords src/b.cu WARNINGS_AS_ERRORS NO_LINE_DIRECTIVES)
# Flags that OPTIONS gives already are not added again.
add_custom_target(t_options)
cuda_rewrite_sources(t_options src/c.cu WARNINGS_AS_ERRORS
                     OPTIONS --line-directives=false --warnings-as-errors)
# Project-wide settings, as -D on the command line would make them.
set(CUDA_REWRITE_LINE_DIRECTIVES OFF)
set(CUDA_REWRITE_WARNINGS_AS_ERRORS ON)
add_custom_target(t_variables)
cuda_rewrite_sources(t_variables src/d.cu)
EOF
step "configure the options project" \
  cmake -S "$opts" -B "$opts/build" "${generator[@]}" \
    -Dcuda_rewrite_DIR="$prefix/lib/cmake/cuda_rewrite"
out=$opts/build/cuda_rewrite/src
check_rule "$opts/build" "$out/a.cu" \
  "cuda-rewrite --line-directives $opts/src/a.cu "
check_rule "$opts/build" "$out/b.cu" \
  "cuda-rewrite --warnings-as-errors $opts/src/b.cu "
check_rule "$opts/build" "$out/c.cu" \
  "cuda-rewrite --line-directives=false --warnings-as-errors $opts/src/c.cu "
check_rule "$opts/build" "$out/d.cu" \
  "cuda-rewrite --warnings-as-errors $opts/src/d.cu "

[ "${KEEP_TMP:-0}" = 1 ] && echo "work directory kept: $work" || rm -rf "$work"
echo "PASS: cmake-package"
echo "1 passed, 0 failed"
