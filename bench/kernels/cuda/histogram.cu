// 256-bin histogram of bytes: each block counts into shared memory with atomics (reading
// four bytes at a time), then adds its counts to the global bins.
#include "cuda_kernels.h"

namespace bench::cuda {

constexpr unsigned kBins = 256;

__global__ void histogram256(const unsigned char* __restrict__ bytes, size_t n,
                             unsigned* __restrict__ bins) {
  __shared__ unsigned local[kBins];
  const unsigned* words = reinterpret_cast<const unsigned*>(bytes);
  size_t n_words = n / 4;
  for (unsigned i = threadIdx.x; i < kBins; i += blockDim.x)
    local[i] = 0;
  __syncthreads();
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n_words;
       i += size_t(gridDim.x) * blockDim.x) {
    unsigned w = words[i];
    atomicAdd(&local[w & 0xff], 1u);
    atomicAdd(&local[(w >> 8) & 0xff], 1u);
    atomicAdd(&local[(w >> 16) & 0xff], 1u);
    atomicAdd(&local[w >> 24], 1u);
  }
  if (blockIdx.x == 0 && threadIdx.x < n % 4)
    atomicAdd(&local[bytes[n_words * 4 + threadIdx.x]], 1u);
  __syncthreads();
  for (unsigned i = threadIdx.x; i < kBins; i += blockDim.x)
    if (local[i]) atomicAdd(&bins[i], local[i]);
}

// buffers: bytes, bins (out, 256 uint32)
void run_histogram(void* const* buffers, const Params& p) {
  constexpr unsigned kBlocks = 1024, kBlock = 256;
  auto* bytes = static_cast<const unsigned char*>(buffers[0]);
  auto* bins = static_cast<unsigned*>(buffers[1]);
  check(cudaMemsetAsync(bins, 0, kBins * sizeof(unsigned)), "cudaMemsetAsync of the bins");
  histogram256<<<kBlocks, kBlock>>>(bytes, p.n, bins);
}

} // namespace bench::cuda
