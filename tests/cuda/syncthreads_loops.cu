// __syncthreads inside loops (a shared-memory tree reduction, a loop whose trip count is
// read from shared memory), under conditions that differ between blocks but are uniform
// inside one, and after a whole block returns early.
#include <algorithm>
#include <vector>

#include "check.h"

constexpr int B = 256;

__global__ void reduce_tree(const int* in, int* out, int* rounds_out) {
  __shared__ int s[B];
  __shared__ int rounds;
  int t = threadIdx.x;
  if (blockIdx.x == 5) return; // a whole block leaves before any barrier
  s[t] = in[blockIdx.x * B + t];
  if (t == 0) rounds = 1 + blockIdx.x % 3;
  __syncthreads();
  if (blockIdx.x % 2 == 0) { // uniform per block: sum
    for (int stride = B / 2; stride > 0; stride /= 2) {
      if (t < stride) s[t] += s[t + stride];
      __syncthreads();
    }
  } else { // max, with a differently shaped loop
    int stride = 1;
    while (stride < B) {
      if (t % (2 * stride) == 0) s[t] = max(s[t], s[t + stride]);
      stride *= 2;
      __syncthreads();
    }
  }
  int result = s[0];
  __syncthreads();
  // A loop whose bound every thread reads from shared memory: each round rotates s by one.
  s[t] = t;
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    int v = s[(t + 1) % B];
    __syncthreads();
    s[t] = v;
    __syncthreads();
  }
  if (t == 0) {
    out[blockIdx.x] = result;
    rounds_out[blockIdx.x] = s[0];
  }
}

int main() {
  const int blocks = 8, n = blocks * B;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i)
    in[i] = (i * 7919) % 4001 - 2000;
  std::vector<int> want(blocks, -1), want_rot(blocks, -1);
  for (int b = 0; b < blocks; ++b) {
    if (b == 5) continue;
    int acc = b % 2 == 0 ? 0 : in[b * B];
    for (int t = 0; t < B; ++t)
      acc = b % 2 == 0 ? acc + in[b * B + t] : std::max(acc, in[b * B + t]);
    want[b] = acc;
    want_rot[b] = 1 + b % 3; // after r rotations s[0] holds r
  }
  int *d_in, *d_out, *d_rot;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, blocks * sizeof(int)));
  CHECK(cudaMalloc(&d_rot, blocks * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_out, 0xff, blocks * sizeof(int)));
  CHECK(cudaMemset(d_rot, 0xff, blocks * sizeof(int)));
  reduce_tree<<<blocks, B>>>(d_in, d_out, d_rot);
  CHECK_LAUNCH();
  std::vector<int> out(blocks), rot(blocks);
  CHECK(cudaMemcpy(out.data(), d_out, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(rot.data(), d_rot, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  expect_equal("reduced", out.data(), want.data(), blocks);
  expect_equal("rotated", rot.data(), want_rot.data(), blocks);
  return report("syncthreads_loops");
}
