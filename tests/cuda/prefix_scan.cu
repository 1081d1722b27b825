// An exclusive prefix sum over many blocks: a work-efficient (Blelloch) scan of each block's
// tile in shared memory, a scan of the block totals, and a pass adding them back.
#include <vector>

#include "check.h"

constexpr int B = 256; // threads per block; each scans 2 * B elements

__global__ void scan_tiles(const int* in, int* out, int* totals, int n) {
  __shared__ int s[2 * B];
  int t = threadIdx.x, base = blockIdx.x * 2 * B;
  s[2 * t] = base + 2 * t < n ? in[base + 2 * t] : 0;
  s[2 * t + 1] = base + 2 * t + 1 < n ? in[base + 2 * t + 1] : 0;
  int offset = 1;
  for (int d = B; d > 0; d >>= 1) { // up-sweep
    __syncthreads();
    if (t < d) {
      int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
      s[bi] += s[ai];
    }
    offset *= 2;
  }
  if (t == 0) {
    if (totals) totals[blockIdx.x] = s[2 * B - 1];
    s[2 * B - 1] = 0;
  }
  for (int d = 1; d < 2 * B; d *= 2) { // down-sweep
    offset >>= 1;
    __syncthreads();
    if (t < d) {
      int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
      int v = s[ai];
      s[ai] = s[bi];
      s[bi] += v;
    }
  }
  __syncthreads();
  if (base + 2 * t < n) out[base + 2 * t] = s[2 * t];
  if (base + 2 * t + 1 < n) out[base + 2 * t + 1] = s[2 * t + 1];
}

__global__ void add_totals(int* out, const int* scanned_totals, int n) {
  int i = blockIdx.x * 2 * B + threadIdx.x;
  int add = scanned_totals[blockIdx.x];
  if (i < n) out[i] += add;
  if (i + B < n) out[i + B] += add;
}

int main() {
  const int n = 100000, tile = 2 * B, tiles = (n + tile - 1) / tile; // tiles <= 2 * B
  std::vector<int> in(n), out(n), want(n);
  for (int i = 0; i < n; ++i)
    in[i] = (i * 7919) % 13 - 4;
  for (int i = 0, acc = 0; i < n; ++i)
    want[i] = acc, acc += in[i];
  int *d_in, *d_out, *d_totals, *d_scanned;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, n * sizeof(int)));
  CHECK(cudaMalloc(&d_totals, tiles * sizeof(int)));
  CHECK(cudaMalloc(&d_scanned, tiles * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  scan_tiles<<<tiles, B>>>(d_in, d_out, d_totals, n);
  scan_tiles<<<1, B>>>(d_totals, d_scanned, nullptr, tiles);
  add_totals<<<tiles, B>>>(d_out, d_scanned, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  expect_equal("exclusive scan", out.data(), want.data(), n);
  return report("prefix_scan");
}
