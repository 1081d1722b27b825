// Sum of floats: each block sums a grid-stride slice, reduces it with warp shuffles and a
// shared array of warp sums, and writes one partial; a second launch of one block sums
// the partials.
#include "cuda_kernels.h"

namespace bench::cuda {

static __device__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

__global__ void reduce_sum(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  __shared__ float warp_sums[32];
  float sum = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    sum += in[i];
  sum = warp_sum(sum);
  unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = lane < blockDim.x / kWarp ? warp_sums[lane] : 0.0f;
    sum = warp_sum(sum);
    if (lane == 0) out[blockIdx.x] = sum;
  }
}

// buffers: x, sum (out, 1 float), partials (scratch, at least 1024 floats)
void run_reduce(void* const* buffers, const Params& p) {
  constexpr unsigned kBlocks = 1024, kBlock = 256;
  auto* x = static_cast<const float*>(buffers[0]);
  auto* sum = static_cast<float*>(buffers[1]);
  auto* partials = static_cast<float*>(buffers[2]);
  reduce_sum<<<kBlocks, kBlock>>>(x, partials, p.n);
  reduce_sum<<<1, 1024>>>(partials, sum, kBlocks);
}

} // namespace bench::cuda
