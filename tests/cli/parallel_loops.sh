#!/bin/sh
# Thread loops marked parallel for the vectoriser (codegen/parallel_loops.cpp), on
# tests/codegen/halo_tile.ptx, from
#   __global__ void halo_tile(const float* __restrict__ in, float* __restrict__ out,
#                             unsigned rows, unsigned cols) {
#     __shared__ float tile[10][34];
#     unsigned x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
#     unsigned tx = threadIdx.x + 1, ty = threadIdx.y + 1;
#     bool inside = x < cols && y < rows;
#     if (inside) {
#       size_t i = size_t(y) * cols + x;
#       tile[ty][tx] = in[i];
#       if (threadIdx.x == 0 && x > 0) tile[ty][0] = in[i - 1];
#       if (threadIdx.x == 31 && x + 1 < cols) tile[ty][tx + 1] = in[i + 1];
#     }
#     __syncthreads();
#     if (inside) out[size_t(y) * cols + x] = tile[ty][tx - 1] + tile[ty][tx + 1];
#   }
#   __global__ void shared_histogram(const unsigned* __restrict__ in, unsigned* __restrict__ bins,
#                                    unsigned n) {
#     __shared__ unsigned local[64];
#     local[threadIdx.x % 64] = 0;
#     __syncthreads();
#     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
#     if (i < n) atomicAdd(&local[in[i] % 64], 1u);
#     __syncthreads();
#     if (threadIdx.x < 64) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
#   }
# All of halo_tile's thread loops are parallel, so its tile stores need no run-time
# overlap checks; the loops of shared_histogram with atomics (on .shared memory: a plain
# load, add and store that other threads of the loop repeat on the same bin) are not.
# Behaviour is tested by tests/cuda and tests/ptx.
#   parallel_loops.sh MIMIC PTX
set -eu
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "parallel_loops.sh: $*" >&2; exit 1; }

MIMIC_PARALLEL_LOOPS=explain "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/k.ll" 2> "$out/explain"
# Each of halo_tile's thread loops, and the copy unswitching makes of it for rows past the
# grid (codegen/row_unswitch.h), is parallel; so are their copies for calls of the whole
# block (`.full`, codegen/lower.cpp copy_full_rows).
[ "$(grep -v '\.full' "$out/explain" | grep -c 'mimic_kernel_0 .*: parallel')" -eq 4 ] &&
  [ "$(grep -c 'mimic_kernel_0 [^ ]*\.full[^ ]*: parallel' "$out/explain")" -eq 4 ] &&
  ! grep -q 'mimic_kernel_0 .*: not parallel' "$out/explain" || fail "halo_tile's thread loops are not all parallel"
grep -q 'mimic_kernel_1 .*: not parallel, a call, fence or atomic: .*atomicrmw' "$out/explain" ||
  fail "the loop with the global atomic is not left alone"
grep -q 'mimic_kernel_1 .*: not parallel, an access that is neither' "$out/explain" ||
  fail "the loop with the .shared atomic is not left alone"
! grep -q 'vector.memcheck' "$out/k.ll" || fail "a vectorised loop still checks its accesses for overlap"
grep -q 'llvm.loop.parallel_accesses' "$out/k.ll" || fail "no loop carries llvm.loop.parallel_accesses"
MIMIC_PARALLEL_LOOPS=0 "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/off.ll"
! grep -q 'llvm.loop.parallel_accesses' "$out/off.ll" || fail "MIMIC_PARALLEL_LOOPS=0 does not turn the pass off"
echo "parallel_loops.sh: ok"
