// A 5-point stencil read straight from global memory (no shared tile), in rows of 256
// threads and in 32x8 blocks, on a grid whose size leaves partial blocks. Its loads of
// in[i + cols] are vector loads since codegen/address_gep.cpp sums invariant address terms
// of loops without a preheader (tests/cli/address_gep.sh checks the code; this, results).
#include <vector>

#include "check.h"

__global__ void stencil_rows(const float* __restrict__ in, float* __restrict__ out, unsigned rows, unsigned cols,
                             float centre, float neighbour) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= cols || y >= rows) return;
  size_t i = size_t(y) * cols + x;
  float v = in[i];
  if (x > 0 && y > 0 && x + 1 < cols && y + 1 < rows)
    v = centre * v + neighbour * (in[i - 1] + in[i + 1] + in[i - cols] + in[i + cols]);
  out[i] = v;
}

int main() {
  const unsigned rows = 37, cols = 1000;
  const float centre = 0.5f, neighbour = 0.125f;
  const size_t n = size_t(rows) * cols;
  std::vector<float> in(n), want(n), got(n);
  for (size_t i = 0; i < n; ++i)
    in[i] = float((i * 7) % 31) - 15.0f;
  for (unsigned y = 0; y < rows; ++y)
    for (unsigned x = 0; x < cols; ++x) {
      size_t i = size_t(y) * cols + x;
      float v = in[i];
      if (x > 0 && y > 0 && x + 1 < cols && y + 1 < rows)
        v = std::fma(v, centre, neighbour * (((in[i - 1] + in[i + 1]) + in[i - cols]) + in[i + cols]));
      want[i] = v;
    }
  float *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const dim3 shapes[] = {dim3(256, 1), dim3(32, 8)};
  for (dim3 block : shapes) {
    CHECK(cudaMemset(d_out, 0, n * sizeof(float)));
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    stencil_rows<<<grid, block>>>(d_in, d_out, rows, cols, centre, neighbour);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    expect_near(block.x == 256 ? "rows of 256" : "32x8 blocks", got.data(), want.data(), n, 1e-6);
  }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  return report("stencil_direct");
}
