// A 256-bin histogram of bytes: privatised per block in shared memory with shared atomics,
// merged with global atomics; and the same with one private copy per warp.
#include <vector>

#include "check.h"

__global__ void hist_block(const unsigned char* data, int n, unsigned* bins) {
  __shared__ unsigned local[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    local[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    if (local[i]) atomicAdd(&bins[i], local[i]);
}

__global__ void hist_warp(const unsigned char* data, int n, unsigned* bins) {
  extern __shared__ unsigned per_warp[]; // 256 bins per warp
  int warps = blockDim.x / 32, w = threadIdx.x / 32;
  for (int i = threadIdx.x; i < 256 * warps; i += blockDim.x)
    per_warp[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&per_warp[w * 256 + data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) {
    unsigned sum = 0;
    for (int k = 0; k < warps; ++k)
      sum += per_warp[k * 256 + b];
    atomicAdd(&bins[b], sum);
  }
}

int main() {
  const int n = 1 << 20;
  std::vector<unsigned char> data(n);
  std::vector<unsigned> want(256, 0), got(256);
  unsigned s = 1;
  for (int i = 0; i < n; ++i) {
    s = s * 1103515245u + 12345u;
    data[i] = (unsigned char)((s >> 16) % (i % 3 == 0 ? 256 : 40)); // skewed
    want[data[i]]++;
  }
  unsigned char* d_data;
  unsigned* d_bins;
  CHECK(cudaMalloc(&d_data, n));
  CHECK(cudaMalloc(&d_bins, 256 * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_data, data.data(), n, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_bins, 0, 256 * sizeof(unsigned)));
  hist_block<<<32, 256>>>(d_data, n, d_bins);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), d_bins, 256 * sizeof(unsigned), cudaMemcpyDeviceToHost));
  expect_equal("block-private histogram", got.data(), want.data(), 256);
  CHECK(cudaMemset(d_bins, 0, 256 * sizeof(unsigned)));
  hist_warp<<<16, 128, 4 * 256 * sizeof(unsigned)>>>(d_data, n, d_bins);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), d_bins, 256 * sizeof(unsigned), cudaMemcpyDeviceToHost));
  expect_equal("warp-private histogram", got.data(), want.data(), 256);
  return report("histogram");
}
