#!/bin/sh
# Code only a row's first or last thread runs (a tile's halo) moves out of the copy of a
# thread loop for whole rows and runs after it for that thread (codegen/edge_threads.h);
# LLVM's peeling then leaves the copy its full trip count. On tests/codegen/halo_tile.ptx
# (both halo loads of a 32x8 tile) and edge_rows.ptx (tests/cuda/edge_threads.cu's two
# kernels: one whose edge code moves, one whose thread-0 code uses a value the thread
# loaded from shared memory, which stays) and block_sum.ptx (warp 0's lane 0 stores the
# block's total: a loop over the warp that reads a uniform value's slot, not parallel, with
# nothing else to do, is not entered). Behaviour: tests/cuda/edge_threads.cu, and every
# tests/cuda program whose blocks store a total from thread 0.
#   edge_threads.sh MIMIC TILE_PTX ROWS_PTX BLOCK_SUM_PTX
set -eu
mimic=$1 tile=$2 rows=$3 sum=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "edge_threads.sh: $*" >&2; exit 1; }
count() { grep -c "$1" "$2" || true; }
# explain NAME PTX [OPTIONS]: the pass's account of PTX in $out/NAME.txt, its IR in NAME.ll.
explain() {
  name=$1 ptx=$2
  shift 2
  MIMIC_EDGE_THREADS=explain "$mimic" compile --target cpu --cpu znver3 "$@" --emit llvm "$ptx" -o "$out/$name.ll" \
    2> "$out/$name.txt"
}

explain tile "$tile" --block 32,8
[ "$(count 'runs after loop .* for its iteration 0$' "$out/tile.txt")" -ge 1 ] ||
  fail "halo_tile for 32x8: thread 0's halo load did not move: $(cat "$out/tile.txt")"
[ "$(count 'runs after loop .* for its iteration 31$' "$out/tile.txt")" -ge 1 ] ||
  fail "halo_tile for 32x8: thread 31's halo load did not move: $(cat "$out/tile.txt")"
# In the copies for rows wholly inside the grid: in the others the halo's test follows the
# position tests (x > 0), which the code after the loop would not make, and it stays.
# The halo rows store tile[0][tx] after the halo's tile[ty][0]: apart for thread 0 (ty >=
# 1), which SCEV's ranges show where alias analysis cannot.
[ "$(count 'stays: an access after it' "$out/tile.txt")" -eq 0 ] ||
  fail "halo_tile for 32x8: a halo load stayed for an access after it: $(cat "$out/tile.txt")"
[ "$(count 'stays: a test not made in every iteration' "$out/tile.txt")" -ge 1 ] ||
  fail "halo_tile for 32x8: expected the halo loads of rows at the grid's edge to stay: $(cat "$out/tile.txt")"
# The copies are not peeled (blocks named .full...peel); without the pass LLVM peels thread 0.
MIMIC_EDGE_THREADS=0 "$mimic" compile --target cpu --cpu znver3 --block 32,8 --emit llvm "$tile" -o "$out/off.ll"
peeled() { grep -c '^"\{0,1\}[^ ]*\.full[^ ]*peel[^ ]*:' "$1" || true; }
[ "$(peeled "$out/tile.ll")" -eq 0 ] || fail "halo_tile for 32x8: the copies were peeled with the pass on"
[ "$(peeled "$out/off.ll")" -gt 0 ] || fail "halo_tile for 32x8: expected LLVM to peel the copies without the pass"
# For any block shape the loops' trip counts are not known: nothing moves.
explain any "$tile"
[ "$(count 'runs after' "$out/any.txt")" -eq 0 ] || fail "halo_tile for any shape: code moved: $(cat "$out/any.txt")"

explain rows "$rows" --block 24,4
[ "$(count 'mimic_kernel_0.* runs after loop .* for its iteration 0$' "$out/rows.txt")" -eq 1 ] &&
  [ "$(count 'mimic_kernel_0.* runs after loop .* for its iteration 23$' "$out/rows.txt")" -eq 1 ] ||
  fail "edges_move for 24x4: expected thread 0's and thread 23's code to move: $(cat "$out/rows.txt")"
# The loop for rows that may be partial moves it too, if the row's first (last) thread is
# one the call runs, which it checks after the loop.
[ "$(count 'mimic_kernel_0.* runs after loop .*, if the loop runs it$' "$out/rows.txt")" -eq 2 ] ||
  fail "edges_move for 24x4: expected the partial rows' loop to move both, checked: $(cat "$out/rows.txt")"
[ "$(count 'mimic_kernel_1.* stays: a value of the iteration it cannot compute again' "$out/rows.txt")" -ge 1 ] ||
  fail "edges_stay for 24x4: expected thread 0's code to stay: $(cat "$out/rows.txt")"
[ "$(count 'mimic_kernel_1.* runs after' "$out/rows.txt")" -eq 0 ] || fail "edges_stay for 24x4: code moved"

explain sum "$sum" --block 256
[ "$(count 'runs after loop .*, if the loop runs it$' "$out/sum.txt")" -eq 1 ] &&
  [ "$(count 'is left with nothing to do: not entered$' "$out/sum.txt")" -eq 1 ] ||
  fail "block_sum for 256: expected thread 0's store of the total to move and its loop to go: $(cat "$out/sum.txt")"
echo "edge_threads.sh: ok"
