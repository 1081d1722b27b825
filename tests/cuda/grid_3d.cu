// Three-dimensional grids and blocks: every thread records its global linear index from
// blockIdx/threadIdx/blockDim/gridDim in x, y and z, plus %laneid, %warpid-independent
// lane arithmetic and the special registers for the grid shape.
// nvcc-flags: -arch=sm_75
#include <vector>

#include "check.h"

__global__ void where(int* out, int* shape) {
  int bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;
  int block = (bz * gridDim.y + by) * gridDim.x + bx;
  int local = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  int per_block = blockDim.x * blockDim.y * blockDim.z;
  int global = block * per_block + local;
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  out[global] = block * 10000 + local * 10 + (lane == unsigned(local % 32));
  if (global == 0) {
    shape[0] = gridDim.x, shape[1] = gridDim.y, shape[2] = gridDim.z;
    shape[3] = blockDim.x, shape[4] = blockDim.y, shape[5] = blockDim.z;
  }
}

int main() {
  const dim3 grid(3, 4, 2), block(8, 4, 3);
  const int per_block = 8 * 4 * 3, blocks = 3 * 4 * 2, n = per_block * blocks;
  int *d_out, *d_shape;
  CHECK(cudaMalloc(&d_out, n * sizeof(int)));
  CHECK(cudaMalloc(&d_shape, 6 * sizeof(int)));
  CHECK(cudaMemset(d_out, 0xff, n * sizeof(int)));
  where<<<grid, block>>>(d_out, d_shape);
  CHECK_LAUNCH();
  std::vector<int> out(n), want(n);
  int shape[6], want_shape[6] = {3, 4, 2, 8, 4, 3};
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(shape, d_shape, sizeof shape, cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b)
    for (int l = 0; l < per_block; ++l)
      want[b * per_block + l] = b * 10000 + l * 10 + 1;
  expect_equal("thread coordinates", out.data(), want.data(), n);
  expect_equal("grid shape", shape, want_shape, 6);
  return report("grid_3d");
}
