#!/bin/sh
# A thread loop whose threads stop at one of two places (`if (warp == 0) { shuffles }`
# between two barriers: warp 0 at a shuffle, the other warps at the second barrier) counts
# the threads at the first place and sums their indices; the chain (`chain_pair`) tells
# from these whether they stopped as two runs and goes on without its scan of next[] and
# barrier[] over the block. See codegen/lower.cpp, StopPair. On tests/codegen/block_sum.ptx
# (the block reduction of bench/kernels' layernorm and softmax). MIMIC_STOP_COUNTS=0 leaves
# the scan alone. Behaviour: tests/cuda/stop_counts.cu (warps picked at the block's start,
# end, middle, every other one; a block of two rows; warps that end).
#   stop_counts.sh MIMIC PTX...
set -eu
mimic=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "stop_counts.sh: $*" >&2; exit 1; }
count() { grep -c "$1" "$2" || true; }

for ptx in "$@"; do
  name=$(basename "$ptx" .ptx)
  "$mimic" compile --target cpu --cpu znver3 --emit llvm "$ptx" -o "$out/on.ll"
  MIMIC_STOP_COUNTS=0 "$mimic" compile --target cpu --cpu znver3 --emit llvm "$ptx" -o "$out/off.ll"
  [ "$(count '^chain_block_loop' "$out/off.ll")" -ge 1 ] || fail "$name: no scan of the block to begin with (the test no longer sees the case)"
  [ "$(count '^chain_pair' "$out/on.ll")" -ge 1 ] || fail "$name: the chain does not use the loop's counts"
  [ "$(count '^chain_block_loop' "$out/on.ll")" -ge 1 ] || fail "$name: the scan is gone (it must stay for the other patterns)"
  [ "$(count '^chain_pair' "$out/off.ll")" -eq 0 ] || fail "$name: MIMIC_STOP_COUNTS=0 still counts"
done
echo "stop_counts.sh: ok"
