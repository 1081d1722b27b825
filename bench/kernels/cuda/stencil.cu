// One Jacobi sweep of a 5-point stencil on a rows x cols grid: each 32x8 block loads its
// tile and a one-cell halo into shared memory; boundary cells are copied unchanged.
#include "cuda_kernels.h"

namespace bench::cuda {

constexpr unsigned kBx = 32, kBy = 8;

__global__ void stencil5(const float* __restrict__ in, float* __restrict__ out, unsigned rows,
                         unsigned cols, float centre, float neighbour) {
  __shared__ float tile[kBy + 2][kBx + 2];
  unsigned x = blockIdx.x * kBx + threadIdx.x, y = blockIdx.y * kBy + threadIdx.y;
  unsigned tx = threadIdx.x + 1, ty = threadIdx.y + 1;
  bool inside = x < cols && y < rows;
  if (inside) {
    size_t i = size_t(y) * cols + x;
    tile[ty][tx] = in[i];
    if (threadIdx.x == 0 && x > 0) tile[ty][0] = in[i - 1];
    if (threadIdx.x == kBx - 1 && x + 1 < cols) tile[ty][tx + 1] = in[i + 1];
    if (threadIdx.y == 0 && y > 0) tile[0][tx] = in[i - cols];
    if (threadIdx.y == kBy - 1 && y + 1 < rows) tile[ty + 1][tx] = in[i + cols];
  }
  __syncthreads();
  if (!inside) return;
  float v = tile[ty][tx];
  if (x > 0 && y > 0 && x + 1 < cols && y + 1 < rows)
    v = centre * v +
        neighbour * (tile[ty][tx - 1] + tile[ty][tx + 1] + tile[ty - 1][tx] + tile[ty + 1][tx]);
  out[size_t(y) * cols + x] = v;
}

// buffers: in, out (rows x cols); alpha: centre weight, beta: neighbour weight
void run_stencil(void* const* buffers, const Params& p) {
  dim3 grid(unsigned((p.cols + kBx - 1) / kBx), unsigned((p.rows + kBy - 1) / kBy));
  stencil5<<<grid, dim3(kBx, kBy)>>>(static_cast<const float*>(buffers[0]),
                                     static_cast<float*>(buffers[1]), unsigned(p.rows),
                                     unsigned(p.cols), p.alpha, p.beta);
}

} // namespace bench::cuda
