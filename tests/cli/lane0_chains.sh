#!/bin/sh
# A warp chain whose outputs only `lane == 0` reads after it (`if (threadIdx.x % 32 == 0)
# partial[warp] = v` after a block's down-sum) writes back lane 0's value alone for a
# whole warp, so LLVM drops the other lanes' shuffles and adds (codegen/warp_chain.cpp,
# MIMIC_LANE0_CHAINS). Where rows are not whole warps (%tid.x & 31 is not the lane) a
# branch on ntid.x writes every lane, which a known block shape folds away.
# A test of %tid.x itself against 0 counts as well (thread 0 is a lane 0).
# On tests/codegen/block_center.ptx, whose %tid.x register nvcc reuses as a loop counter
# after the test, warp_sum.ptx (its second chain's result read under `threadIdx.x == 0`)
# and block_scan.ptx (scan results every lane reads: none applies).
# Behaviour: tests/cuda/lane0_chain.cu (rows of 8, 16, 32 and more threads).
#   lane0_chains.sh MIMIC BLOCK_CENTER_PTX WARP_SUM_PTX BLOCK_SCAN_PTX
set -eu
mimic=$1 center=$2 warp_sum=$3 scan=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "lane0_chains.sh: $*" >&2; exit 1; }
count() { grep -c "$1" "$2" || true; }
shuffles() { grep -cE 'vperm|vshuf|valign|vextract|vpunpck|vmovshdup|vinsert' "$1" || true; }

"$mimic" compile --target cpu --cpu znver3 --emit llvm "$center" -o "$out/on.ll"
MIMIC_LANE0_CHAINS=0 "$mimic" compile --target cpu --cpu znver3 --emit llvm "$center" -o "$out/off.ll"
[ "$(count '^warp_chain_every_lane' "$out/on.ll")" -eq 1 ] || fail "block_center: its chain does not write back lane 0 alone"
[ "$(count '^warp_chain_every_lane' "$out/off.ll")" -eq 0 ] || fail "MIMIC_LANE0_CHAINS=0 still writes back lane 0 alone"
"$mimic" compile --target cpu --cpu znver3 --emit llvm "$warp_sum" -o "$out/sum.ll"
[ "$(count '^warp_chain_every_lane' "$out/sum.ll")" -eq 2 ] || fail "warp_sum: not both chains (lane == 0, tid == 0) write back lane 0 alone"
"$mimic" compile --target cpu --cpu znver3 --emit llvm "$scan" -o "$out/scan.ll"
[ "$(count '^warp_chain_compute' "$out/scan.ll")" -ge 1 ] || fail "block_scan: no warp chain (the test no longer sees the case)"
[ "$(count '^warp_chain_every_lane' "$out/scan.ll")" -eq 0 ] || fail "block_scan: a chain every lane reads writes back lane 0 alone"

# For blocks of 256 threads the other lanes' work goes; for rows of 16 it stays.
for cpu in znver3 znver4; do
  "$mimic" compile --target cpu --cpu $cpu --block 256 --emit asm "$center" -o "$out/on.s"
  MIMIC_LANE0_CHAINS=0 "$mimic" compile --target cpu --cpu $cpu --block 256 --emit asm "$center" -o "$out/off.s"
  on=$(shuffles "$out/on.s") off=$(shuffles "$out/off.s")
  [ "$on" -lt "$off" ] || fail "$cpu, 256 threads: $on shuffle instructions, $off with every lane written back"
  "$mimic" compile --target cpu --cpu $cpu --block 16,4 --emit asm "$center" -o "$out/on.s"
  MIMIC_LANE0_CHAINS=0 "$mimic" compile --target cpu --cpu $cpu --block 16,4 --emit asm "$center" -o "$out/off.s"
  on=$(shuffles "$out/on.s") off=$(shuffles "$out/off.s")
  [ "$on" -eq "$off" ] || fail "$cpu, rows of 16: $on shuffle instructions, $off with every lane written back"
done
echo "lane0_chains.sh: ok"
