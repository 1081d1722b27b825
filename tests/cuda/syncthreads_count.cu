// __syncthreads_count, __syncthreads_and and __syncthreads_or over predicates that hold
// for none, some and all threads of a block, with blocks of different shapes.
#include <vector>

#include "check.h"

__global__ void votes(const int* in, int* out) {
  int t = threadIdx.x + threadIdx.y * blockDim.x;
  int v = in[blockIdx.x * blockDim.x * blockDim.y + t];
  int* o = out + blockIdx.x * 9;
  int c1 = __syncthreads_count(v > 0);
  int c2 = __syncthreads_count(v % 3 == 0);
  int c3 = __syncthreads_count(1);
  int a1 = __syncthreads_and(v > -1000);
  int a2 = __syncthreads_and(v > 0);
  int o1 = __syncthreads_or(v == 42);
  int o2 = __syncthreads_or(v > 100000);
  int a3 = __syncthreads_and(t != 17);
  int o3 = __syncthreads_or(t == int(blockDim.x * blockDim.y) - 1);
  if (t == 0) {
    o[0] = c1, o[1] = c2, o[2] = c3, o[3] = a1 != 0, o[4] = a2 != 0, o[5] = o1 != 0;
    o[6] = o2 != 0, o[7] = a3 != 0, o[8] = o3 != 0;
  }
}

int main() {
  const int blocks = 4;
  const dim3 block(16, 8);
  const int per = block.x * block.y, n = blocks * per;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i)
    in[i] = (i * 53) % 401 - 100;
  for (int i = 0; i < per; ++i)
    in[2 * per + i] = 5; // block 2: all positive, none 42, 17 not special
  in[per + 3] = 42;
  std::vector<int> want(blocks * 9), out(blocks * 9);
  for (int b = 0; b < blocks; ++b) {
    int c1 = 0, c2 = 0, a1 = 1, a2 = 1, o1 = 0;
    for (int t = 0; t < per; ++t) {
      int v = in[b * per + t];
      c1 += v > 0, c2 += v % 3 == 0, a1 &= v > -1000, a2 &= v > 0, o1 |= v == 42;
    }
    int w[9] = {c1, c2, per, a1, a2, o1, 0, 0, 1};
    for (int k = 0; k < 9; ++k)
      want[b * 9 + k] = w[k];
  }
  int *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  votes<<<blocks, block>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  expect_equal("block votes", out.data(), want.data(), out.size());
  return report("syncthreads_count");
}
