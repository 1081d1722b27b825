#!/bin/sh
# Thread loops unswitched on conditions of their row (codegen/row_unswitch.h).
#   tests/codegen/halo_tile.ptx (from tests/cli/parallel_loops.sh): `x < cols && y < rows`
#     with y = blockIdx.y * 8 + threadIdx.y is, for a row of threads, a test of y alone
#     plus one per lane: both of its thread loops get a copy for rows past the grid.
#   tests/codegen/block_scan.ptx (see tests/cli/parallel_loops_scan.sh): `before = 0;
#     __syncthreads(); if (warp) before = warp_totals[warp - 1]` is one load through a
#     select of a spill slot and shared memory, without tags; the thread loop runs in warp
#     pieces, where `warp` is invariant, and in the copy for warp != 0 only the shared-
#     memory load is left: the loop must stay parallel (codegen/parallel_loops.h).
# MIMIC_ROW_UNSWITCH=0 turns the pass off: the same checks then find no copies, so the
# test sees the pass itself. Behaviour is tested by tests/cuda/stencil2d.cu, transpose.cu
# gemm_tiled.cu (grids whose edge cuts rows) and prefix_scan.cu.
#   row_unswitch.sh MIMIC HALO_TILE_PTX BLOCK_SCAN_PTX
set -eu
mimic=$1 halo=$2 scan=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "row_unswitch.sh: $*" >&2; exit 1; }

copies() { # PTX [env...]: the thread loops' unswitched copies, as MIMIC_PARALLEL_LOOPS lists them
  ptx=$1
  shift
  env "$@" MIMIC_PARALLEL_LOOPS=explain "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/k.ll" \
    2>"$out/explain"
  grep -v '\.full' "$out/explain" | grep -c '^mimic: parallel loops: mimic_kernel_0 [^ ]*\.us[0-9]*: parallel' || true
}

[ "$(copies "$halo")" -eq 2 ] || fail "halo_tile: expected both thread loops unswitched on the row's y < rows"
[ "$(copies "$halo" MIMIC_ROW_UNSWITCH=0)" -eq 0 ] || fail "halo_tile: copies with the pass off"

copies "$scan" >/dev/null
with=$(grep -c 'not parallel' "$out/explain" || true)
[ "$(grep -c '\.us[0-9]*: parallel' "$out/explain")" -ge 1 ] || fail "block_scan: no thread loop unswitched"
copies "$scan" MIMIC_ROW_UNSWITCH=0 >/dev/null
without=$(grep -c 'not parallel' "$out/explain" || true)
[ "$with" -eq "$without" ] ||
  fail "block_scan: $with thread loops not parallel with unswitching, $without without"
echo "row_unswitch.sh: ok"
