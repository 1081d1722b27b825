// A failing device assert ends the kernel with cudaErrorAssert, and the error is sticky:
// every later call in the process reports it. A kernel launched before it ran normally.
#include <cassert>
#include <vector>

#include "check.h"

__global__ void square(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = i * i;
}

__global__ void checked(const int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(x[i] != 49); // thread 7 fails
}

int main() {
  const int n = 64;
  int* d;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  square<<<1, n>>>(d, n);
  CHECK_LAUNCH();
  std::vector<int> x(n), want(n);
  CHECK(cudaMemcpy(x.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    want[i] = i * i;
  expect_equal("before the assert", x.data(), want.data(), n);
  checked<<<2, 32>>>(d, n);
  EXPECT(cudaGetLastError() == cudaSuccess); // the launch itself is fine
  cudaError_t sync = cudaDeviceSynchronize();
  if (sync != cudaErrorAssert) fprintf(stderr, "synchronize: %s\n", cudaGetErrorName(sync));
  EXPECT(sync == cudaErrorAssert);
  int* other = nullptr;
  EXPECT(cudaMalloc(&other, 16) == cudaErrorAssert);
  EXPECT(cudaMemcpy(x.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost) == cudaErrorAssert);
  square<<<1, n>>>(d, n);
  EXPECT(cudaGetLastError() == cudaErrorAssert);
  EXPECT(cudaDeviceSynchronize() == cudaErrorAssert);
  return report("assert_device");
}
