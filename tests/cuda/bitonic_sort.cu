// Bitonic sort: 1024 keys sorted inside one block in shared memory, and 16384 key/value
// pairs sorted in global memory by one launch per merge step.
// variants: debug
#include <algorithm>
#include <vector>

#include "check.h"

__global__ void sort_block(unsigned* keys) {
  __shared__ unsigned s[1024];
  int t = threadIdx.x;
  s[t] = keys[t];
  s[t + 512] = keys[t + 512];
  for (int size = 2; size <= 1024; size *= 2)
    for (int stride = size / 2; stride > 0; stride /= 2) {
      __syncthreads();
      int pos = 2 * t - (t & (stride - 1)); // the lower element of this thread's pair
      bool up = (pos & size) == 0;
      unsigned a = s[pos], b = s[pos + stride];
      if ((a > b) == up) {
        s[pos] = b;
        s[pos + stride] = a;
      }
    }
  __syncthreads();
  keys[t] = s[t];
  keys[t + 512] = s[t + 512];
}

__global__ void merge_step(unsigned* keys, int* values, int size, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = i ^ stride;
  if (j <= i) return;
  bool up = (i & size) == 0;
  if ((keys[i] > keys[j]) == up) {
    unsigned k = keys[i];
    keys[i] = keys[j], keys[j] = k;
    int v = values[i];
    values[i] = values[j], values[j] = v;
  }
}

int main() {
  std::vector<unsigned> small(1024), big(16384);
  std::vector<int> vals(16384);
  unsigned s = 7;
  for (auto& k : small)
    k = s = s * 1664525u + 1013904223u;
  for (int i = 0; i < 16384; ++i)
    big[i] = (s = s * 1664525u + 1013904223u) >> 20, vals[i] = int(big[i] * 3 + 1); // duplicates
  unsigned *d_small, *d_big;
  int* d_vals;
  CHECK(cudaMalloc(&d_small, 1024 * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_big, big.size() * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_vals, vals.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_small, small.data(), 1024 * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_big, big.data(), big.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_vals, vals.data(), vals.size() * sizeof(int), cudaMemcpyHostToDevice));
  sort_block<<<1, 512>>>(d_small);
  for (int size = 2; size <= 16384; size *= 2)
    for (int stride = size / 2; stride > 0; stride /= 2)
      merge_step<<<16384 / 256, 256>>>(d_big, d_vals, size, stride);
  CHECK_LAUNCH();
  std::vector<unsigned> got_small(1024), got_big(16384);
  std::vector<int> got_vals(16384), want_vals(16384);
  CHECK(cudaMemcpy(got_small.data(), d_small, 1024 * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_big.data(), d_big, big.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_vals.data(), d_vals, vals.size() * sizeof(int), cudaMemcpyDeviceToHost));
  std::sort(small.begin(), small.end());
  std::sort(big.begin(), big.end());
  for (int i = 0; i < 16384; ++i)
    want_vals[i] = int(got_big[i] * 3 + 1); // each value travelled with its key
  expect_equal("block sort", got_small.data(), small.data(), 1024);
  expect_equal("global sort", got_big.data(), big.data(), big.size());
  expect_equal("values", got_vals.data(), want_vals.data(), vals.size());
  return report("bitonic_sort");
}
