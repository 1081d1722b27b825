// Bitonic sort of each 2048-key segment in shared memory by a block of 1024 threads, one
// compare-exchange per thread per step: 66 steps, each behind a __syncthreads.
#include "cuda_kernels.h"

namespace bench::cuda {

constexpr unsigned kSegment = 2048, kBlock = kSegment / 2;

__global__ void bitonic_sort_segments(const unsigned* __restrict__ in, unsigned* __restrict__ out) {
  __shared__ unsigned keys[kSegment];
  size_t base = size_t(blockIdx.x) * kSegment;
  unsigned t = threadIdx.x;
  keys[t] = in[base + t];
  keys[t + kBlock] = in[base + t + kBlock];
  for (unsigned size = 2; size <= kSegment; size *= 2) {
    for (unsigned stride = size / 2; stride > 0; stride /= 2) {
      __syncthreads();
      unsigned i = 2 * t - (t & (stride - 1)); // the lower index of this thread's pair
      unsigned j = i + stride;
      bool ascending = (i & size) == 0;
      unsigned a = keys[i], b = keys[j];
      if ((a > b) == ascending) {
        keys[i] = b;
        keys[j] = a;
      }
    }
  }
  __syncthreads();
  out[base + t] = keys[t];
  out[base + t + kBlock] = keys[t + kBlock];
}

// buffers: in, out; n a multiple of 2048
void run_bitonic(void* const* buffers, const Params& p) {
  bitonic_sort_segments<<<unsigned(p.n / kSegment), kBlock>>>(
      static_cast<const unsigned*>(buffers[0]), static_cast<unsigned*>(buffers[1]));
}

} // namespace bench::cuda
