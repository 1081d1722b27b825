// SAXPY in place: y = a * x + y.
#include "cuda_kernels.h"

namespace bench::cuda {

__global__ void saxpy_kernel(size_t n, float a, const float* __restrict__ x,
                             float* __restrict__ y) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// buffers: x, y (in/out)
void run_saxpy(void* const* buffers, const Params& p) {
  constexpr unsigned kBlock = 256;
  unsigned grid = unsigned((p.n + kBlock - 1) / kBlock);
  saxpy_kernel<<<grid, kBlock>>>(p.n, p.alpha, static_cast<const float*>(buffers[0]),
                                 static_cast<float*>(buffers[1]));
}

} // namespace bench::cuda
