// Kernels without a barrier, warp operation or call run their threads to the end in one
// call and do not record where each stopped (codegen: LoweredKernel::plain_exit): threads
// that leave early (exit) or late still give the right results, and a trap in such a
// kernel still ends the launch with cudaErrorLaunchFailure, sticky like any fault.
#include <vector>

#include "check.h"

__global__ void scale(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return; // the last block's extra threads leave first
  x[i] = s * x[i] + float(threadIdx.x & 7);
}

__global__ void leave_odd(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && (i & 1)) asm volatile("exit;");
  if (i < n) x[i] = i;
}

// Traps in one thread of one block, in the middle of the grid.
__global__ void trap_at(const int* x, int* y, int n, int bad) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (x[i] == bad) __trap();
  y[i] = x[i] + 1;
}

int main() {
  const int n = 1000; // not a multiple of the block size
  std::vector<float> h(n), want(n);
  for (int i = 0; i < n; ++i) {
    h[i] = float(i % 37) - 5.0f;
    want[i] = 2.0f * h[i] + float((i % 256) & 7);
  }
  float* d;
  CHECK(cudaMalloc(&d, n * sizeof(float)));
  CHECK(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("scale", h.data(), want.data(), n);

  std::vector<int> xi(n, -1), wi(n);
  int* di;
  CHECK(cudaMalloc(&di, n * sizeof(int)));
  CHECK(cudaMemcpy(di, xi.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  leave_odd<<<(n + 127) / 128, 128>>>(di, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(xi.data(), di, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    wi[i] = (i & 1) ? -1 : i;
  expect_equal("leave_odd", xi.data(), wi.data(), n);

  const int m = 64 * 256;
  std::vector<int> xs(m);
  for (int i = 0; i < m; ++i)
    xs[i] = i;
  int *dx, *dy;
  CHECK(cudaMalloc(&dx, m * sizeof(int)));
  CHECK(cudaMalloc(&dy, m * sizeof(int)));
  CHECK(cudaMemcpy(dx, xs.data(), m * sizeof(int), cudaMemcpyHostToDevice));
  trap_at<<<m / 256, 256>>>(dx, dy, m, 40 * 256 + 77);
  EXPECT(cudaGetLastError() == cudaSuccess);
  cudaError_t sync = cudaDeviceSynchronize();
  if (sync != cudaErrorLaunchFailure) fprintf(stderr, "synchronize: %s\n", cudaGetErrorName(sync));
  EXPECT(sync == cudaErrorLaunchFailure);
  EXPECT(cudaMemcpy(xs.data(), dy, m * sizeof(int), cudaMemcpyDeviceToHost) == cudaErrorLaunchFailure);
  return report("trap_plain");
}
