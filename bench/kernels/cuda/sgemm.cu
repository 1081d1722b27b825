// C = A * B for n x n row-major matrices (n a multiple of 16): the shared-memory tiled
// kernel of the CUDA programming guide, one output per thread.
#include "cuda_kernels.h"

namespace bench::cuda {

constexpr unsigned kTile = 16;

__global__ void sgemm_tiled(const float* __restrict__ a, const float* __restrict__ b,
                            float* __restrict__ c, unsigned n) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile];
  unsigned row = blockIdx.y * kTile + threadIdx.y;
  unsigned col = blockIdx.x * kTile + threadIdx.x;
  float sum = 0;
  for (unsigned t = 0; t < n; t += kTile) {
    as[threadIdx.y][threadIdx.x] = a[size_t(row) * n + t + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[size_t(t + threadIdx.y) * n + col];
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < kTile; ++k)
      sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  c[size_t(row) * n + col] = sum;
}

// buffers: a, b, c (out)
void run_sgemm(void* const* buffers, const Params& p) {
  unsigned n = unsigned(p.n);
  dim3 grid(n / kTile, n / kTile);
  sgemm_tiled<<<grid, dim3(kTile, kTile)>>>(static_cast<const float*>(buffers[0]),
                                            static_cast<const float*>(buffers[1]),
                                            static_cast<float*>(buffers[2]), n);
}

} // namespace bench::cuda
