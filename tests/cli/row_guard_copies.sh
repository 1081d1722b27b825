#!/bin/sh
# Row guards in tests/codegen/stencil_tile.ptx, for its 32x8 blocks (codegen/row_guards.h,
# row_unswitch.h):
# - `x == 0` (from `x > 0`) is settled for rows that do not hold x = 0, so the copy of the
#   computing loop for inner rows loads the five tile cells as whole vectors, without masks
#   (before, the four neighbours stayed masked in every row);
# - the tile-loading loop gets a copy for inner rows in each of its three forms (the halo
#   rows and the others): whole-vector loads and stores, the unswitching after the row
#   guards allowing a cost of 500 (at 150 only one form was copied).
# - in tests/codegen/block_scan.ptx, `if (threadIdx.x == 0)` (an equality with a
#   position in the block, true in every row) is left in the loop, not made a test that no
#   row would pass (MIMIC_ROW_GUARDS=explain says which tests each loop makes), and the
#   rounds of an interchanged loop settle their tests too. add_tile_offsets' guard of that
#   loop (`k > 1023`, a position in the block above a constant) is taken as usually failing:
#   its loop is copied for rows that all enter, where the block's offset
#   (`tile_sums[blockIdx.x]`, read before the loop) is loaded once, not lane by lane under
#   the guard's test.
#   row_guard_copies.sh MIMIC STENCIL_TILE_PTX BLOCK_SCAN_PTX
set -eu
mimic=$1
ptx=$2
scan=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "row_guard_copies.sh: $*" >&2; exit 1; }
export MIMIC_QUICK_TIER=0
"$mimic" compile --target cpu --block 32,8 --emit llvm "$ptx" -o "$out/k.ll"
# One line per vector loop: fma calls, masked loads, whole float-vector loads and stores.
awk '/^[A-Za-z0-9._$"]+:/ { name = $1; body = (name ~ /^vector\.body/) }
     body && /@llvm\.fma/ { fma[name]++ }
     body && /@llvm\.masked\.load/ { masked[name]++ }
     body && /= load <[0-9]+ x float>/ { loads[name]++ }
     body && /store <[0-9]+ x float>/ { stores[name]++ }
     body { seen[name] = 1 }
     END { for (n in seen) print n, fma[n] + 0, masked[n] + 0, loads[n] + 0, stores[n] + 0 }' \
  "$out/k.ll" > "$out/loops"
[ -s "$out/loops" ] || fail "no vector loop"
awk '$2 > 0 && $3 == 0 && $4 >= 5' "$out/loops" | grep -q . ||
  fail "no computing loop that loads the tile without masks: $(tr '\n' ';' < "$out/loops")"
copies=$(awk '$2 == 0 && $4 >= 1 && $5 >= 1' "$out/loops" | wc -l)
[ "$copies" -ge 3 ] || fail "$copies tile-loading loops with whole-vector loads and stores, expected 3 or more"
MIMIC_ROW_GUARDS=explain "$mimic" compile --target cpu --block 32,8 --emit llvm "$ptx" -o /dev/null 2> "$out/stencil.txt"
grep -q "tests made for the row's ends:.* ne" "$out/stencil.txt" || fail "stencil: no x == 0 among the rows' tests"
MIMIC_ROW_GUARDS=explain "$mimic" compile --target cpu --block 256 --emit llvm "$scan" -o /dev/null 2> "$out/scan.txt"
grep -q "mimic_kernel_0.*position in the block for equality: left in the loop" "$out/scan.txt" ||
  fail "scan: threadIdx.x == 0 not left in the loop: $(cat "$out/scan.txt")"
! grep "mimic_kernel_0.*made for the row's ends:.* \(ne\|eq\)" "$out/scan.txt" ||
  fail "scan: an equality among the rows' tests"
# add_tile_offsets' loop `for (k = tid; k < 1024; k += blockDim.x) if (base + k < n) ...` is
# interchanged (thread_interchange.h); the loop over the row's threads in each round is a
# thread loop too, whose `base + k < n` is settled per row.
grep -q "mimic_kernel_2.*loop at ix.threads.*made for the row's ends: ult" "$out/scan.txt" ||
  fail "scan: the rounds of add_tile_offsets' loop do not settle base + k < n per row"
grep -q "mimic_kernel_2.*loop at dispatch: 1 test made for the row's ends: ule" "$out/scan.txt" ||
  fail "scan: add_tile_offsets' guard k > 1023 not settled for rows that all enter: $(cat "$out/scan.txt")"
"$mimic" compile --target cpu --block 256 --emit llvm "$scan" -o "$out/scan.ll"
# (the copy's vector loop loads it in its preheader, once, and broadcasts it)
awk '/^define / { in2 = ($0 ~ /@mimic_kernel_2[.(]/) }
     /^[A-Za-z0-9._$"]+:/ { block = $1 }
     in2 && block ~ /^vector\.ph/ && /= load i32, ptr/ { n++ }
     END { exit n == 0 }' "$out/scan.ll" ||
  fail "scan: add_tile_offsets loads its offset lane by lane in every copy"
echo "row_guard_copies.sh: ok ($copies tile-loading copies)"
