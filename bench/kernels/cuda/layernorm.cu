// Layer normalisation of each row (one block of 256 threads per row): mean, then the
// variance about it, each a warp-shuffle reduction combined across warps in shared memory;
// y = (x - mean) * rsqrt(var + eps) * gamma + beta.
#include "cuda_kernels.h"

namespace bench::cuda {

constexpr unsigned kBlock = 256;

static __device__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  __shared__ float total;
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(kFullMask, v, offset);
  unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / kWarp ? warp_sums[lane] : 0.0f;
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      v += __shfl_down_sync(kFullMask, v, offset);
    if (lane == 0) total = v;
  }
  __syncthreads();
  return total;
}

__global__ void layernorm_rows(const float* __restrict__ in, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ out,
                               unsigned cols, float eps) {
  const float* x = in + size_t(blockIdx.x) * cols;
  float* y = out + size_t(blockIdx.x) * cols;
  float sum = 0;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x)
    sum += x[c];
  float mean = block_sum(sum) / cols;
  float squares = 0;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x) {
    float d = x[c] - mean;
    squares += d * d;
  }
  float var = block_sum(squares) / cols;
  float inv_std = rsqrtf(var + eps);
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x)
    y[c] = (x[c] - mean) * inv_std * gamma[c] + beta[c];
}

// buffers: x (rows x cols), gamma (cols), beta (cols), y (out); alpha: epsilon
void run_layernorm(void* const* buffers, const Params& p) {
  layernorm_rows<<<unsigned(p.rows), kBlock>>>(
      static_cast<const float*>(buffers[0]), static_cast<const float*>(buffers[1]),
      static_cast<const float*>(buffers[2]), static_cast<float*>(buffers[3]), unsigned(p.cols),
      p.alpha);
}

} // namespace bench::cuda
