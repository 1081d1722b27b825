#!/bin/sh
# The shared-memory tiled GEMM (tests/codegen/tiled_gemm.ptx, from
#   __global__ void tiled_gemm(const float* a, const float* b, float* c, unsigned n) {
#     __shared__ float as[16][16], bs[16][16];
#     unsigned row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
#     float sum = 0;
#     for (unsigned t = 0; t < n; t += 16) {
#       as[threadIdx.y][threadIdx.x] = a[size_t(row) * n + t + threadIdx.x];
#       bs[threadIdx.y][threadIdx.x] = b[size_t(t + threadIdx.y) * n + col];
#       __syncthreads();
#       for (unsigned k = 0; k < 16; ++k) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
#       __syncthreads();
#     }
#     c[size_t(row) * n + col] = sum;
#   }):
# the tile counter t lives across both barriers, the same in every thread: it is loaded
# once per row of threads (codegen/spill_remat.h), not per thread, so every thread loop
# vectorises (a per-thread counter left the tile-load loop "not vectorized: cannot
# identify array bounds"). And a row of 16 threads takes the vector loop: thread loops are
# marked for vectorisation (mimic.thread.loop's llvm.loop.vectorize.enable), so the
# vectoriser does not weigh its run-time checks against the trip count (it wanted 32 or 40
# threads, and sgemm's tile loads ran scalar); the check in front of each thread loop's
# vector body asks for at most 16. That is checked with row unswitching off
# (codegen/row_unswitch.h): the copies it makes of two small loops (rows past the grid, the
# final store of c) are interleaved four times by the vectoriser, 32 threads per vector
# iteration, which costs a 16-thread row a scalar pass over a few instructions once per
# kernel. Behaviour is tested by tests/cuda/gemm_tiled.cu.
#   loop_counter.sh MIMIC PTX
set -eu
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
MIMIC_ROW_UNSWITCH=0 MIMIC_LLVM_OPTIONS=-pass-remarks-missed=loop-vectorize \
  "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/k.ll" 2> "$out/remarks"
if grep -q "not vectorized" "$out/remarks"; then
  cat "$out/remarks" >&2
  echo "loop_counter.sh: a thread loop was not vectorised" >&2
  exit 1
fi
# The thread loops' minimum trip counts (the executor's scan of the stop points, over
# %end, is not a thread loop).
big=$(grep -o 'min.iters.check[0-9]* = icmp ult i32 %[0-9a-z.]*, [0-9]*' "$out/k.ll" | grep -v '%end,' |
  awk '$NF > 16 { print }')
if [ -n "$big" ]; then
  echo "$big" >&2
  echo "loop_counter.sh: a thread loop's vector body needs more than 16 threads in a row" >&2
  exit 1
fi
grep -q 'min.iters.check' "$out/k.ll" || { echo "loop_counter.sh: no vector loop" >&2; exit 1; }
echo "loop_counter.sh: ok"
