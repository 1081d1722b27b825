// Row softmax, one warp per row: the row maximum and the sum of exponentials are warp
// reductions with __shfl_xor_sync (every lane gets the result).
#include "cuda_kernels.h"

namespace bench::cuda {

constexpr unsigned kBlock = 256, kRowsPerBlock = kBlock / kWarp;

static __device__ float warp_max(float v) {
  for (int mask = kWarp / 2; mask > 0; mask /= 2)
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, mask));
  return v;
}

static __device__ float warp_sum(float v) {
  for (int mask = kWarp / 2; mask > 0; mask /= 2)
    v += __shfl_xor_sync(kFullMask, v, mask);
  return v;
}

__global__ void softmax_rows(const float* __restrict__ in, float* __restrict__ out, unsigned rows,
                             unsigned cols) {
  unsigned row = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
  unsigned lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const float* x = in + size_t(row) * cols;
  float* y = out + size_t(row) * cols;
  float m = -INFINITY;
  for (unsigned c = lane; c < cols; c += kWarp)
    m = fmaxf(m, x[c]);
  m = warp_max(m);
  float sum = 0;
  for (unsigned c = lane; c < cols; c += kWarp)
    sum += expf(x[c] - m);
  sum = warp_sum(sum);
  float inv = 1.0f / sum;
  for (unsigned c = lane; c < cols; c += kWarp)
    y[c] = expf(x[c] - m) * inv;
}

// buffers: in, out (rows x cols)
void run_softmax(void* const* buffers, const Params& p) {
  unsigned grid = unsigned((p.rows + kRowsPerBlock - 1) / kRowsPerBlock);
  softmax_rows<<<grid, kBlock>>>(static_cast<const float*>(buffers[0]),
                                 static_cast<float*>(buffers[1]), unsigned(p.rows),
                                 unsigned(p.cols));
}

} // namespace bench::cuda
