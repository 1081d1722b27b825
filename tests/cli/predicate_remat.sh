#!/bin/sh
# Predicates live across a split point that are computed from the thread index and values
# the same in every thread (`threadIdx.x < n`, `threadIdx.x % 32 == 0` in
# tests/codegen/block_center.ptx, kernel in tests/cli/uniform_loads.sh) are computed again
# where the thread resumes (codegen/spill_remat.h), as other registers are. A predicate
# lives in its spill slot as a byte; passed on unchanged past a second split point, its
# save is the restored byte truncated to i1 and extended back, which must count as the
# slot's own value, or the slot is kept for every predicate of a kernel with two or more
# barriers. Behaviour: tests/cuda/block_uniform_loads.cu and every kernel with barriers.
#   predicate_remat.sh MIMIC PTX
set -eu
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "predicate_remat.sh: $*" >&2; exit 1; }

"$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/k.ll"
bytes=$(grep 'mimic.spill' "$out/k.ll" | grep -c ' i8 \| <[0-9]* x i8>' || true)
[ "$bytes" -eq 0 ] || fail "$bytes spill accesses of predicate bytes are left"
echo "predicate_remat.sh: ok"
