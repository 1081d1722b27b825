// The ways the runtime launches a kernel: <<<>>> with dim3 and a stream, cudaLaunchKernel
// with an argument array, cudaLaunchKernelEx with a launch configuration (and a priority
// attribute), template kernels instantiated for several types, and cudaFuncGetAttributes.
// variants: all
#include <vector>

#include "check.h"

template <typename T> __global__ void affine(T* x, T a, T b, int n) {
  int i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}

template <typename T> static int check_affine(const char* what, T* d, int n, T want0, T step) {
  std::vector<T> h(n), w(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    w[i] = want0 + step * T(i);
  expect_equal(what, h.data(), w.data(), n);
  return 0;
}

template <typename T> static int iota(T* d, int n) {
  std::vector<T> h(n);
  for (int i = 0; i < n; ++i)
    h[i] = T(i);
  CHECK(cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  return 0;
}

int main() {
  const int n = 5000;
  int* di;
  double* dd;
  long long* dl;
  CHECK(cudaMalloc(&di, n * sizeof(int)));
  CHECK(cudaMalloc(&dd, n * sizeof(double)));
  CHECK(cudaMalloc(&dl, n * sizeof(long long)));
  if (iota(di, n) || iota(dd, n) || iota(dl, n)) return 1;
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  // <<<>>> with a 2D grid on a stream: x = 2x + 3
  affine<int><<<dim3(10, 2), 256, 0, s>>>(di, 2, 3, n);
  CHECK(cudaGetLastError());
  // cudaLaunchKernel: x = 0.5x - 1
  double a = 0.5, b = -1;
  int count = n;
  void* args[] = {&dd, &a, &b, &count};
  CHECK(cudaLaunchKernel((const void*)affine<double>, dim3(20), dim3(256), args, 0, s));
  // cudaLaunchKernelEx: x = -x + 7, with a priority attribute
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(40);
  config.blockDim = dim3(128);
  config.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributePriority;
  attr[0].val.priority = 0;
  config.attrs = attr;
  config.numAttrs = 1;
  CHECK(cudaLaunchKernelEx(&config, affine<long long>, dl, -1LL, 7LL, n));
  CHECK(cudaStreamSynchronize(s));
  if (check_affine("<<<>>>", di, n, 3, 2) || check_affine("cudaLaunchKernel", dd, n, -1.0, 0.5) ||
      check_affine("cudaLaunchKernelEx", dl, n, 7LL, -1LL))
    return 1;
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, affine<int>));
  EXPECT(fa.maxThreadsPerBlock >= 256);
  EXPECT(fa.numRegs >= 0);
  // A launch that cannot be made: too many threads per block.
  affine<int><<<1, 2048>>>(di, 1, 0, n);
  EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaStreamDestroy(s));
  return report("launch_api");
}
