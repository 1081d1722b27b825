#!/bin/sh
# A kernel written for blocks of several rows (it reads %tid.y or %tid.z) gets a copy of
# each thread loop for calls of the whole block, in which every row is whole: the row's
# loop goes from its first thread to first + ntid.x, a constant trip count where the
# block's shape is known (codegen/lower.cpp, copy_full_rows; `full_rows`, `.full`). On
# tests/codegen/halo_tile.ptx (a 32x8 tile with a halo, two thread loops), blur_rows.ptx
# (a 2-D kernel without barriers: one thread loop) and bitonic_step.ptx (one-row blocks:
# no copy). MIMIC_FULL_ROWS=0 makes none. Behaviour:
# tests/cuda/full_rows.cu (rows of 24, 7x3x2 and 75x1 blocks, calls the chain makes for
# warp 0 of 64x2 and 16x16 blocks).
#   full_rows.sh MIMIC ROWS_PTX NO_BARRIER_PTX ONE_ROW_PTX
set -eu
mimic=$1 rows=$2 no_barrier=$3 one_row=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "full_rows.sh: $*" >&2; exit 1; }
count() { grep -c "$1" "$2" || true; }

"$mimic" compile --target cpu --cpu znver3 --emit llvm "$rows" -o "$out/on.ll"
[ "$(count '^full_rows[0-9]*:' "$out/on.ll")" -eq 2 ] || fail "halo_tile: expected a copy of each of its two thread loops"
MIMIC_FULL_ROWS=0 "$mimic" compile --target cpu --cpu znver3 --emit llvm "$rows" -o "$out/off.ll"
[ "$(count '^full_rows' "$out/off.ll")" -eq 0 ] || fail "MIMIC_FULL_ROWS=0 still copies"
# For the block's shape, the copies' rows fold: a 32x8 block's copy has no run-time check
# of the rows' indices, where the loops for any row have them.
"$mimic" compile --target cpu --cpu znver3 --block 32,8 --emit llvm "$rows" -o "$out/shaped.ll"
MIMIC_FULL_ROWS=0 "$mimic" compile --target cpu --cpu znver3 --block 32,8 --emit llvm "$rows" -o "$out/shaped_off.ll"
on=$(count '^vector.scevcheck' "$out/shaped.ll")
off=$(count '^vector.scevcheck' "$out/shaped_off.ll")
[ "$on" -eq "$off" ] || fail "halo_tile for 32x8: the copies add run-time checks ($on with them, $off without)"
# And a constant trip count (32): the vectoriser leaves no scalar loop over a copy's
# threads, where a trip count it cannot see leaves a remainder loop (blocks named .full
# that end a loop: none, against 4 when the row's end lost its no-wrap flag).
scalar=$(awk '/^"?[^ ]*\.full[^ ]*"?:/ { copy = 1; next } /^[^ ].*:/ { copy = 0 } copy && /!llvm\.loop/' "$out/shaped.ll" | wc -l)
[ "$scalar" -eq 0 ] || fail "halo_tile for 32x8: $scalar scalar loop(s) left in the copies (the trip count is not constant)"
"$mimic" compile --target cpu --cpu znver3 --emit llvm "$no_barrier" -o "$out/flat.ll"
[ "$(count '^full_rows:' "$out/flat.ll")" -eq 1 ] || fail "blur_rows: expected a copy of its one thread loop"
"$mimic" compile --target cpu --cpu znver3 --emit llvm "$one_row" -o "$out/one.ll"
[ "$(count '^full_rows' "$out/one.ll")" -eq 0 ] || fail "bitonic_step (one-row blocks) got copies"
echo "full_rows.sh: ok"
