// A __device__ function with a shuffle in a loop, called from a kernel: in a -G build the
// function is not inlined by nvcc, so Mimic inlines it (it waits for the warp) and its loop
// counter lives across the split points. (This hung once: the O3 pipeline, and per-entry
// thread loops for such kernels.)
// variants: debug
#include <vector>

#include "check.h"

__device__ int warp_sum(int v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void sums(int* out) {
  int v = warp_sum(int(threadIdx.x) * 3 + 1);
  if (threadIdx.x % 32 == 0)
    out[threadIdx.x / 32] = v;
}

int main() {
  const int warps = 4;
  int* d_out;
  CHECK(cudaMalloc(&d_out, warps * sizeof(int)));
  sums<<<1, 32 * warps>>>(d_out);
  CHECK_LAUNCH();
  std::vector<int> got(warps), want(warps);
  CHECK(cudaMemcpy(got.data(), d_out, warps * sizeof(int), cudaMemcpyDeviceToHost));
  for (int w = 0; w < warps; ++w) {
    want[w] = 0;
    for (int l = 0; l < 32; ++l)
      want[w] += (w * 32 + l) * 3 + 1;
  }
  expect_equal("warp sums", got.data(), want.data(), warps);
  CHECK(cudaFree(d_out));
  return report("shuffle_in_function");
}
