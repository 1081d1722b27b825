#!/bin/sh
# Shared-memory loads the same in every thread, read once per row of threads
# (codegen/uniform_loads.h), on tests/codegen/block_center.ptx, from
#   __global__ void block_center(const float* x, float* y, unsigned n) {
#     __shared__ float partial[8];
#     __shared__ float total;
#     float v = threadIdx.x < n ? x[threadIdx.x] : 0.0f;
#     for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
#     if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
#     __syncthreads();
#     if (threadIdx.x == 0) {
#       float s = 0;
#       for (int w = 0; w < blockDim.x / 32; ++w) s += partial[w];
#       total = s;
#     }
#     __syncthreads();
#     float mean = total / n;
#     for (unsigned c = threadIdx.x; c < n; c += blockDim.x) y[c] = x[c] - mean;
#   }
# `total` after the second barrier is read once per row (tagged !mimic.uniform), and the
# loop over c sees the mean as invariant: no per-thread array of means in the interchanged
# loop (its stores of y go through a parameter, which cannot reach shared memory). The
# `partial[w]` reads after the first barrier stay per thread: thread 0's loop stores
# `total`, which may be any of them as far as the pass can tell. Behaviour is tested by
# tests/cuda/block_uniform_loads.cu.
#   uniform_loads.sh MIMIC PTX
set -eu
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "uniform_loads.sh: $*" >&2; exit 1; }

"$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/k.ll"
n=$(grep -c 'load float, ptr .*!mimic.uniform' "$out/k.ll" || true)
[ "$n" = 1 ] || fail "expected one load of total read once per row, found $n"
! grep -q 'fdiv <[0-9]* x float>' "$out/k.ll" || fail "the mean is still computed per thread (vector fdiv)"
echo "uniform_loads.sh: ok"
