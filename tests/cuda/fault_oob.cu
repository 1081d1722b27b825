// A kernel that writes through a wild (unmapped, near-null) pointer ends with
// cudaErrorIllegalAddress from the synchronisation, the process survives, and the error is
// sticky for every later call.
#include <cstdint>
#include <vector>

#include "check.h"

__global__ void fill(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 3 * i;
}

__global__ void wild_store(int* base, long long offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  base[offset + i] = i;
}

int main() {
  const int n = 256;
  int* d;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  fill<<<2, 128>>>(d, n);
  CHECK_LAUNCH();
  std::vector<int> x(n), want(n);
  CHECK(cudaMemcpy(x.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    want[i] = 3 * i;
  expect_equal("before the fault", x.data(), want.data(), n);
  // From a real allocation to the second page of the address space: never mapped.
  long long offset = (long long)((intptr_t)0x1000 - (intptr_t)d) / (long long)sizeof(int);
  wild_store<<<2, 64>>>(d, offset);
  EXPECT(cudaGetLastError() == cudaSuccess);
  cudaError_t sync = cudaDeviceSynchronize();
  if (sync != cudaErrorIllegalAddress) fprintf(stderr, "synchronize: %s\n", cudaGetErrorName(sync));
  EXPECT(sync == cudaErrorIllegalAddress);
  int* other = nullptr;
  EXPECT(cudaMalloc(&other, 16) == cudaErrorIllegalAddress);
  EXPECT(cudaMemcpy(x.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost) ==
         cudaErrorIllegalAddress);
  EXPECT(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
  return report("fault_oob");
}
