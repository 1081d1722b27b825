// Matrix transpose through a 32x33 shared tile (the padding avoids bank conflicts); blocks
// of 32x8 threads, each thread moving four elements.
#include "cuda_kernels.h"

namespace bench::cuda {

constexpr unsigned kTile = 32, kRows = 8;

__global__ void transpose_tiled(float* __restrict__ out, const float* __restrict__ in,
                                unsigned rows, unsigned cols) {
  __shared__ float tile[kTile][kTile + 1];
  unsigned x = blockIdx.x * kTile + threadIdx.x;
  unsigned y = blockIdx.y * kTile + threadIdx.y;
  for (unsigned j = 0; j < kTile; j += kRows)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[size_t(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  for (unsigned j = 0; j < kTile; j += kRows)
    if (x < rows && y + j < cols)
      out[size_t(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// buffers: in (rows x cols), out (cols x rows)
void run_transpose(void* const* buffers, const Params& p) {
  dim3 grid(unsigned((p.cols + kTile - 1) / kTile), unsigned((p.rows + kTile - 1) / kTile));
  transpose_tiled<<<grid, dim3(kTile, kRows)>>>(static_cast<float*>(buffers[1]),
                                                static_cast<const float*>(buffers[0]),
                                                unsigned(p.rows), unsigned(p.cols));
}

} // namespace bench::cuda
