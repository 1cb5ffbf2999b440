# Sourced by test/compile/compile-samples.sh and bench/stage.sh: the variants
# of the promote pass they build, and how to make one. The pragma is the one
# place a variant is chosen (docs/promote.md), so a variant is a copy of the
# sample whose `#pragma cuda_rewrite promote` line names its clauses.

# In table order: plain promotion, aggregated pools of 2 and 128, overlap,
# both.
PROMOTE_VARIANTS=(p pa2 pa128 po pao128)

# The clauses for a variant name: p, po, pa<n>, pao<n>.
promote_clauses() {
  case $1 in
  p) echo "" ;;
  po) echo "overlap" ;;
  pao*) echo "aggregate(${1#pao}) overlap" ;;
  pa*) echo "aggregate(${1#pa})" ;;
  esac
}

# Writes to $3 the sample $2 with its promote pragma set for variant $1.
promote_variant_source() {
  sed "s|^#pragma cuda_rewrite promote.*|#pragma cuda_rewrite promote $(promote_clauses "$1")|" \
    "$2" >"$3"
}
