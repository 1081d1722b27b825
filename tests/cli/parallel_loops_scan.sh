#!/bin/sh
# Thread loops of a block scan (tests/codegen/block_scan.ptx, bench/kernels/cuda/scan.cu's
# scan_tiles) marked parallel although the optimiser dropped two loads' tags:
#   - the shared window's base, loaded from the block state, merged with another load of
#     it and no longer marked invariant;
#   - `before = 0; __syncthreads(); if (warp) before = warp_totals[warp - 1]`: the register
#     restored from its spill slot on one path and loaded from shared memory on the other,
#     one load through a select of the two addresses.
# Before, the thread loop after the scan's second barrier stayed scalar ("cannot identify
# array bounds"). Behaviour is tested by tests/cuda/prefix_scan.cu.
#   parallel_loops_scan.sh MIMIC PTX
set -eu
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "parallel_loops_scan.sh: $*" >&2; exit 1; }

MIMIC_PARALLEL_LOOPS=explain "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/k.ll" 2> "$out/explain"
grep 'mimic_kernel_0 ' "$out/explain" > "$out/scan_tiles"
[ -s "$out/scan_tiles" ] || fail "no thread loop of scan_tiles explained"
! grep -q 'not parallel, an access that is neither .* load ' "$out/scan_tiles" ||
  fail "a thread loop of scan_tiles is left alone for a load: $(grep 'not parallel' "$out/scan_tiles")"
[ "$(grep -c ': parallel' "$out/scan_tiles")" -ge 5 ] || fail "fewer than 5 of scan_tiles' thread loops are parallel"
echo "parallel_loops_scan.sh: ok"
