#!/bin/sh
# scan_tiles (tests/codegen/block_scan.ptx) stores a thread's four items to out[4 * i + k]
# under `i + k < n`. In the copy of the thread loop for rows inside the bounds
# (codegen/row_guards.h) the tests are settled; folding those branches
# (row_unswitch.h: FoldSettledBranches) leaves the four stores unconditional, and with
# one base pointer for `out` (address_gep.h) the vectoriser makes them one interleaved
# group: one <32 x i32> store of the shuffled items for 8 threads, on AVX2 (which has no
# scatter, so the items went one by one) as on AVX-512.
#   interleaved_rows.sh MIMIC BLOCK_SCAN_PTX
set -eu
mimic=$1 ptx=$2
fail() { echo "interleaved_rows.sh: $*" >&2; exit 1; }
for cpu in znver3 sapphirerapids; do
  n=$(MIMIC_QUICK_TIER=0 "$mimic" compile --target cpu --cpu "$cpu" --block 256 --emit llvm "$ptx" -o - |
    grep -c 'store <[0-9]* x i32> %interleaved' || true)
  [ "$n" -ge 1 ] || fail "$cpu: no interleaved store of scan's items"
done
echo "interleaved_rows.sh: ok"
