#!/usr/bin/env bash
# Rewrites every sample for bench/run.py. Runs on the machine with the tool
# (it needs clang's libraries); the GPU machine has none, so the rewritten
# sources travel there instead:
#
#   bench/stage.sh [SAMPLE...]       # <pass> or <pass>/<name>; default: all
#
# writes build-bench/rewritten/<pass>/<name>.cu for each
# samples/<pass>/<name>.cu and stops at the first tool failure.
#   CUDA_REWRITE        the tool (default build/tool/cuda-rewrite)
#   CUDA_REWRITE_FLAGS  extra tool options, e.g.
#                       --gpu-spec=bench/gpu-specs/h100.json --remarks
#   REWRITTEN_DIR       where to write (default build-bench/rewritten)
set -euo pipefail
cd "$(dirname "$0")/.."

tool=${CUDA_REWRITE:-build/tool/cuda-rewrite}
out_dir=${REWRITTEN_DIR:-build-bench/rewritten}
read -r -a flags <<<"${CUDA_REWRITE_FLAGS:-}"
if [[ ! -x $tool ]]; then
  echo "stage.sh: no executable tool at '$tool' (build it, or set CUDA_REWRITE)" >&2
  exit 2
fi

selected() { # Is samples/$1.cu among the arguments (none: all)?
  (($# == 1)) && return 0
  local sample=$1 f
  shift
  for f; do
    [[ $sample == "$f" || $sample == "${f%/}"/* ]] && return 0
  done
  return 1
}

count=0
for src in samples/*/*.cu; do
  rel=${src#samples/}
  rel=${rel%.cu}
  [[ $rel == common/* ]] && continue
  selected "$rel" "$@" || continue
  dst=$out_dir/$rel.cu
  mkdir -p "$(dirname "$dst")"
  # A stale copy must not survive a failed rewrite and get benchmarked.
  rm -f "$dst"
  echo "stage.sh: $src -> $dst" >&2
  if ! "$tool" "${flags[@]}" "$src" -o "$dst" -- -I samples/common \
      -I runtime/include; then
    echo "stage.sh: cuda-rewrite failed on $src; stopping" >&2
    exit 1
  fi
  count=$((count + 1))
done
if ((count == 0)); then
  echo "stage.sh: no sample matches" >&2
  exit 2
fi
echo "stage.sh: $count sample(s) rewritten into $out_dir" >&2
