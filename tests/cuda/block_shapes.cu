// One kernel launched with blocks of several shapes (backends/cpu/jit.cpp): its first
// launch's shape gets optimised code with the block's dimensions as constants
// (codegen/block_shape.h), every other shape code for any shape, and the first shape again
// its own code. Each thread writes its mirror's value (across a barrier, through shared
// memory) and the block's dimensions; every element of every launch is checked.
// mimic-env: MIMIC_QUICK_TIER=0 MIMIC_VERBOSE=1 MIMIC_CACHE=0
// expect-stderr: optimised code for blocks of 32x8x1
#include <cstdint>
#include <vector>

#include "check.h"

__global__ void mirror(int* out, int salt) {
  __shared__ int tile[1024];
  const unsigned n = blockDim.x * blockDim.y * blockDim.z;
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  tile[t] = int(t * 3) + salt;
  __syncthreads();
  const unsigned block = blockIdx.x + gridDim.x * blockIdx.y;
  out[block * n + t] = tile[n - 1 - t] + int(blockDim.x * 1000000 + blockDim.y * 1000 + blockDim.z);
}

int main() {
  const dim3 shapes[] = {dim3(32, 8), dim3(16, 16), dim3(64, 2), dim3(8, 4, 2), dim3(32, 8), dim3(256)};
  const dim3 grid(3, 2);
  int* d_out = nullptr;
  CHECK(cudaMalloc(&d_out, 6 * 1024 * sizeof(int)));
  int launch = 0;
  for (const dim3& shape : shapes) {
    const unsigned n = shape.x * shape.y * shape.z, blocks = grid.x * grid.y;
    std::vector<int> out(blocks * n);
    CHECK(cudaMemset(d_out, 0xff, out.size() * sizeof(int)));
    mirror<<<grid, shape>>>(d_out, launch * 7);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (unsigned b = 0; b < blocks; ++b)
      for (unsigned t = 0; t < n; ++t) {
        const int want = int((n - 1 - t) * 3) + launch * 7 + int(shape.x * 1000000 + shape.y * 1000 + shape.z);
        if (out[b * n + t] != want && wrong++ == 0)
          fprintf(stderr, "blocks of %ux%ux%u: block %u thread %u is %d, expected %d\n", shape.x, shape.y, shape.z, b,
                  t, out[b * n + t], want);
      }
    EXPECT(wrong == 0);
    ++launch;
  }
  CHECK(cudaFree(d_out));
  return report("block_shapes");
}
