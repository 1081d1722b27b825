#!/bin/sh
# A warp chain's arithmetic that reads nothing the chain computes is the thread's own
# (codegen/warp_chain.cpp): in scan_tiles (tests/codegen/block_scan.ptx), `lane = tid & 31`
# and its tests sit between the warp scan's shuffles. Each thread computes them itself
# too, so the chain writes back only the scan's value: one 32-lane masked store per chain
# (two chains: the warps' scans and warp 0's scan of their totals), where the lane index
# and three predicates went back through slots as well (9 stores), and the lane index
# reached the code after the barrier as an opaque load rather than a value of the thread
# index.
#   warp_chain_own.sh MIMIC BLOCK_SCAN_PTX
set -eu
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "warp_chain_own.sh: $*" >&2; exit 1; }
MIMIC_QUICK_TIER=0 "$mimic" compile --target cpu --block 256 --emit llvm "$ptx" -o "$out/k.ll"
chains=$(awk '/^define/ { f = $0 } /^warp_chain_groups[0-9]+:/ && f ~ /mimic_kernel_0/ { n++ } END { print n + 0 }' "$out/k.ll")
stores=$(awk '/^define/ { f = $0 } /call .*masked\.store\.v32/ && f ~ /mimic_kernel_0/ { n++ } END { print n + 0 }' "$out/k.ll")
[ "$chains" -eq 2 ] || fail "$chains warp chains in scan_tiles, expected 2"
[ "$stores" -eq 2 ] || fail "scan_tiles' chains write back $stores registers, expected 2 (the scans' values)"
echo "warp_chain_own.sh: ok"
