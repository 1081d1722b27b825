#!/bin/sh
# A block sum with warp shuffles and a barrier (tests/codegen/warp_sum.ptx, from
#   __global__ void block_sum(const float* x, float* out) {
#     __shared__ float warp_sums[32];
#     float v = x[blockIdx.x * blockDim.x + threadIdx.x];
#     for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
#     if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
#     __syncthreads();
#     if (threadIdx.x < 32) {
#       v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
#       for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
#       if (threadIdx.x == 0) out[blockIdx.x] = v;
#     }
#   }),
# compiled for the CPU: each run of shuffles is one warp chain (codegen/warp_chain.cpp),
# computed a warp at a time from the lanes' published registers (32-lane masked loads);
# the kernel goes on past the barrier and the chains itself when the whole block (or
# whole warps) got there together (chain_barrier, chain_warp), and also when warp 0 alone
# goes on to its shuffles after the barrier while the other warps end (chain_block_release,
# tests/cuda/warp_phases.cu), and no shuffle reads its source lanes by an unconditional
# gather. A chain has a copy for whole warps (no masks, no tests of lanes). Where a thread
# loop has one stop (every thread reaches the same barrier or warp chain), the kernel goes on without reading the threads' stops (chain_known_barrier,
# chain_known_warp); after warp 0's own run, a look at warp 0 alone tells whether the
# whole block now waits at the barrier the others wait at (chain_block_joined).
# Behaviour is tested by tests/cuda (warp_shfl, reduce_warp, softmax_layernorm, ...).
#   warp_chain.sh MIMIC PTX
set -eu
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "warp_chain.sh: $*" >&2; exit 1; }

"$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/k.ll"
grep -q '^chain_barrier' "$out/k.ll" || fail "no in-kernel release of the barrier"
grep -q '^chain_warp:' "$out/k.ll" || fail "no in-kernel release of the shuffles"
grep -q '^chain_block_release:' "$out/k.ll" || fail "no in-kernel release of warp 0 alone"
grep -q '^chain_known_barrier:' "$out/k.ll" || fail "a loop with one stop, at a barrier, is scanned"
grep -q '^chain_known_warp:' "$out/k.ll" || fail "a loop with one stop, at a warp chain, is scanned"
grep -q '^chain_block_joined_loop:' "$out/k.ll" || fail "after warp 0's run the whole block is read again"
[ "$(grep -c '^warp_chain_compute' "$out/k.ll")" -eq 2 ] || fail "the two runs of shuffles are not two warp chains"
[ "$(grep -c 'masked.load.v32' "$out/k.ll")" -ge 2 ] || fail "a warp chain does not read its lanes as one vector"
# Each chain is made twice: for any group of lanes (above) and for a whole warp, whose
# lanes' slots it reads without a mask and whose shuffles choose lanes by constants.
[ "$(grep -c '^warp_chain_part' "$out/k.ll")" -eq 2 ] || fail "no chain for any group beside the whole warp's"
[ "$(grep -c '= load <32 x float>' "$out/k.ll")" -ge 2 ] || fail "no whole-warp chain that reads its lanes unmasked"
! grep -q 'masked.gather.*splat (i1 true)' "$out/k.ll" || fail "a shuffle reads its source lanes by a gather"
# Its shuffles are all in chains, which read their lanes from their own slots: releasing
# whole warps in the kernel copies nothing (no shfl_exchange -> shfl_released).
! grep -q 'llvm.memcpy' "$out/k.ll" || fail "a release copies what only per-thread shuffles read"
echo "warp_chain.sh: ok"
