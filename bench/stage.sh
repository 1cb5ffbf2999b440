#!/usr/bin/env bash
# Rewrites every sample for bench/run.py. Runs on the machine with the tool
# (it needs clang's libraries); the GPU machine has none, so the rewritten
# sources travel there instead (carry build-bench/rewritten):
#
#   bench/stage.sh [--allow-refused] [SAMPLE...]
#
# SAMPLE is <pass>, <pass>/<name> (every element type of it) or
# <pass>/<name>:<type> (one). For each samples/<pass>/<name>.cu, each element
# type it lists in a line `// bench-types: float double` (none: float only)
# and each variant of its pass (variants_of below; keep in step with
# REWRITTEN_VARIANTS in bench/run.py):
#   aggregate   warp, block, kernel  (--aggregate-granularity=<variant>)
#   promote     p, pa2, pa128, po, pao128 (a copy of the sample whose pragma
#               names the variant: scripts/promote-variants.sh)
#   fuse        rewritten, hybrid, hybrid-y (the sample's fuse pragmas with
#               hybrid(0.5), split along x, or hybrid(0.5, y) added)
#   other       rewritten            (the tool as it is)
# it writes build-bench/rewritten/<variant>/<pass>/<name>.cu (float) or
# <variant>/<pass>/<name>.<type>.cu (any other type, parsed with
# -DSAMPLE_REAL=<type> after the -I flags), and logs every tool run (command,
# exit status, output, verdict) to build-bench/rewritten/stage.log, where
# run.py finds why a variant is absent. The log names a configuration
# <pass>/<name> (float) or <pass>/<name>:<type>, as run.py's tables do.
#
# A variant is not produced (its file is deleted, so that a stale one is never
# benchmarked) when the tool exits non-zero or, for a variant that forces a
# granularity, prints a remark refusing it (see refusal_of). The other
# variants go on; the exit status is then 1, or 0 with --allow-refused.
#   CUDA_REWRITE        the tool (default build/tool/cuda-rewrite)
#   CUDA_REWRITE_FLAGS  extra tool options, e.g.
#                       --gpu-spec=bench/gpu-specs/h100.json
#   REWRITTEN_DIR       where to write (default build-bench/rewritten)
# Exit status: 0 every variant produced (or --allow-refused), 1 some not,
# 2 usage error, no tool, no sample matches, or a bad bench-types line.
set -euo pipefail
cd "$(dirname "$0")/.."

command="bench/stage.sh${*:+ $*}"
allow_refused=0
while (($#)); do
  case $1 in
  --allow-refused) allow_refused=1 ;;
  --) shift; break ;;
  -*) echo "stage.sh: unknown option '$1'" >&2
      echo "usage: bench/stage.sh [--allow-refused] [SAMPLE...]" >&2
      exit 2 ;;
  *) break ;;
  esac
  shift
done

tool=${CUDA_REWRITE:-build/tool/cuda-rewrite}
out_dir=${REWRITTEN_DIR:-build-bench/rewritten}
read -r -a flags <<<"${CUDA_REWRITE_FLAGS:-}"
if [[ ! -x $tool ]]; then
  echo "stage.sh: no executable tool at '$tool' (build it, or set CUDA_REWRITE)" >&2
  exit 2
fi
# Remarks are how a refused granularity shows (the tool is silent about it
# otherwise and exits 0); they only go to the log.
has_remarks=0
for f in "${flags[@]}"; do [[ $f == --remarks ]] && has_remarks=1; done
((has_remarks)) || flags+=(--remarks)

. scripts/promote-variants.sh

variants_of() { # The variants of pass $1, in table order.
  case $1 in
  aggregate) echo warp block kernel ;;
  promote) echo "${PROMOTE_VARIANTS[@]}" ;;
  fuse) echo rewritten hybrid hybrid-y ;;
  pipeline) echo megakernel ;; # the other models: environment (run.py)
  *) echo rewritten ;;
  esac
}

variant_flags() { # Tool options that make variant $2 of pass $1.
  case $1 in
  aggregate) echo "--aggregate-granularity=$2" ;;
  esac
}

# The first line of tool output $3 that refuses variant $2 of pass $1, if it
# forces a granularity: a remark saying "not rewritten" (other than "not
# annotated") or "refus...", tagged [<pass>] or naming the granularity.
refusal_of() {
  [[ -n $(variant_flags "$1" "$2") || $1 == promote ]] || return 0
  grep -E 'remark: ' "$3" | grep -Ei 'not rewritten|refus' |
    grep -v 'not annotated' | grep -E "\\[$1\\]\$|granularity" | head -n 1 ||
    true
}

# The element types samples/$1.cu lists (`// bench-types: float double`),
# float when it lists none.
types_of() {
  local types
  types=$(awk 'sub(/^\/\/ bench-types: /, "") { print; exit }' \
    "samples/$1.cu")
  echo "${types:-float}"
}

selected() { # Is configuration $1 (<pass>/<name>[:<type>]) among the rest?
  (($# == 1)) && return 0
  local config=$1 sample=${1%%:*} f
  shift
  for f; do
    [[ $config == "$f" || $sample == "$f" || $sample == "${f%/}"/* ||
      ($config == "$sample" && $f == "$sample:float") ]] && return 0
  done
  return 1
}

# Every configuration to stage: "<source> <type> <config>", config being
# <pass>/<name> for float and <pass>/<name>:<type> for another type.
configs=()
for src in samples/*/*.cu; do
  rel=${src#samples/}
  [[ $rel == common/* ]] && continue
  rel=${rel%.cu}
  for type in $(types_of "$rel"); do
    if [[ ! $type =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then
      echo "stage.sh: $src: bad type '$type' in its bench-types line" >&2
      exit 2
    fi
    config=$rel
    [[ $type == float ]] || config+=":$type"
    selected "$config" "$@" && configs+=("$src $type $config")
  done
done
if ((${#configs[@]} == 0)); then
  echo "stage.sh: no sample matches" >&2
  exit 2
fi

mkdir -p "$out_dir"
log=$out_dir/stage.log
# A full staging starts the log afresh; staging a subset adds to it (run.py
# reads the last verdict of each sample and variant).
(($# == 0)) && : >"$log"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -n $(git status --porcelain -- . 2>/dev/null) ]] && commit+="+dirty"
echo "#### $(date -u '+%Y-%m-%d %H:%M UTC') $command (commit $commit," \
  "tool $tool ${flags[*]})" >>"$log"
tmp=$(mktemp)
variant_dir=$(mktemp -d) # promote variants' sources
trap 'rm -rf "$tmp" "$variant_dir"' EXIT

produced=0 refused=0
for entry in "${configs[@]}"; do
  read -r src type config <<<"$entry"
  rel=${src#samples/}
  rel=${rel%.cu}
  pass=${rel%%/*}
  suffix=.cu defines=()
  if [[ $type != float ]]; then
    suffix=.$type.cu
    defines=(-DSAMPLE_REAL="$type")
  fi
  for variant in $(variants_of "$pass"); do
    dst=$out_dir/$variant/$rel$suffix
    mkdir -p "$(dirname "$dst")"
    # A stale copy must not survive a failed rewrite and get benchmarked.
    rm -f "$dst"
    read -r -a vflags <<<"$(variant_flags "$pass" "$variant")"
    input=$src
    if [[ $pass == promote ]]; then
      input=$variant_dir/$(basename "$src")
      promote_variant_source "$variant" "$src" "$input"
    elif [[ $pass == fuse && $variant == hybrid* ]]; then
      # Half of each tile in registers, the cost model choosing the tile.
      clause='hybrid(0.5)'
      [[ $variant == hybrid-y ]] && clause='hybrid(0.5, y)'
      input=$variant_dir/$(basename "$src")
      sed "s/^#pragma cuda_rewrite fuse\$/#pragma cuda_rewrite fuse $clause/" \
        "$src" >"$input"
    fi
    argv=("$tool" "${flags[@]}" "${vflags[@]}" "$input" -o "$dst" -- \
      -I samples/common -I runtime/include "${defines[@]}")
    echo "stage.sh: $src -> $dst" >&2
    rc=0
    "${argv[@]}" >"$tmp" 2>&1 || rc=$?
    reason=
    if ((rc != 0)); then
      reason=$(grep -m 1 -E 'error|Unknown' "$tmp" || tail -n 1 "$tmp" || true)
      reason="tool exit $rc: ${reason:-no output}"
    elif [[ ! -f $dst ]]; then
      reason="the tool wrote no $dst"
    else
      reason=$(refusal_of "$pass" "$variant" "$tmp")
    fi
    {
      echo "==== stage $config $variant"
      echo "\$ ${argv[*]}"
      cat "$tmp"
      if [[ -n $reason ]]; then
        echo "STAGE $config $variant exit=$rc status=refused: $reason"
      else
        echo "STAGE $config $variant exit=$rc status=ok"
      fi
    } >>"$log"
    if [[ -n $reason ]]; then
      rm -f "$dst"
      refused=$((refused + 1))
      echo "stage.sh: $config $variant REFUSED: $reason" >&2
    else
      produced=$((produced + 1))
    fi
  done
done
echo "stage.sh: ${#configs[@]} sample configuration(s), $produced variant(s)" \
  "rewritten into $out_dir, $refused refused or failed (log: $log)" >&2
if ((refused && !allow_refused)); then
  exit 1
fi
exit 0
