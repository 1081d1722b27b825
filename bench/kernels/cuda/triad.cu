// STREAM triad: a = b + s * c.
#include "cuda_kernels.h"

namespace bench::cuda {

__global__ void triad_kernel(float* a, const float* b, const float* c, float s, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] + s * c[i];
}

// buffers: a (out), b, c
void run_triad(void* const* buffers, const Params& p) {
  constexpr unsigned kBlock = 256;
  unsigned grid = unsigned((p.n + kBlock - 1) / kBlock);
  triad_kernel<<<grid, kBlock>>>(static_cast<float*>(buffers[0]),
                                 static_cast<const float*>(buffers[1]),
                                 static_cast<const float*>(buffers[2]), p.alpha, p.n);
}

} // namespace bench::cuda
