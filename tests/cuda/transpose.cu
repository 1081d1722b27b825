// Matrix transpose through a padded 32x33 shared-memory tile (no bank conflicts), with
// 32x8 thread blocks each moving a 32x32 tile, on a matrix whose sides are not multiples
// of the tile.
// nvcc-flags: -arch=sm_90
#include <vector>

#include "check.h"

constexpr int T = 32, R = 8;

__global__ void transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[T][T + 1];
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  for (int j = 0; j < T; j += R)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * T + threadIdx.x, y = blockIdx.x * T + threadIdx.y;
  for (int j = 0; j < T; j += R)
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  const int rows = 300, cols = 190;
  std::vector<float> in(rows * cols), out(rows * cols), want(rows * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      in[r * cols + c] = float(r * 1000 + c), want[c * rows + r] = float(r * 1000 + c);
  float *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, in.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(float)));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
  dim3 grid((cols + T - 1) / T, (rows + T - 1) / T), block(T, R);
  transpose<<<grid, block>>>(d_in, d_out, rows, cols);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("transposed", out.data(), want.data(), out.size());
  return report("transpose");
}
