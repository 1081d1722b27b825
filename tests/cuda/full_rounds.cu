// Grid-stride loops whose rounds stay scalar (data-dependent increments of a shared
// histogram) run rounds in which every thread of the row is inside the loop without the
// per-thread state test (codegen/thread_interchange.h, full rounds). The rounds must switch
// back when threads leave: a length that leaves the last round partial, threads that never
// enter the loop, and trip counts that differ from thread to thread.
#include <vector>

#include "check.h"

// skip: every skip-th thread stays out of the loop (0: none); spread: thread t starts
// t % spread strides later, so that trip counts differ within a row.
__global__ void histogram(const unsigned char* data, int n, unsigned* bins, int skip, int spread) {
  __shared__ unsigned local[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    local[i] = 0;
  __syncthreads();
  const int stride = blockDim.x * gridDim.x;
  if (skip == 0 || threadIdx.x % skip != 0)
    for (int i = blockIdx.x * blockDim.x + threadIdx.x + (spread ? int(threadIdx.x) % spread : 0) * stride; i < n;
         i += stride)
      atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    if (local[i]) atomicAdd(&bins[i], local[i]);
}

int main() {
  const int n = 300000 + 77;
  std::vector<unsigned char> data(n);
  for (int i = 0; i < n; ++i)
    data[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
  unsigned char* d_data;
  unsigned* d_bins;
  CHECK(cudaMalloc(&d_data, n));
  CHECK(cudaMalloc(&d_bins, 256 * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_data, data.data(), n, cudaMemcpyHostToDevice));
  const int blocks = 13, threads = 256, stride = blocks * threads;
  struct Case {
    const char* name;
    int skip, spread;
  } cases[] = {{"all threads", 0, 0}, {"every third thread out", 3, 0}, {"spread starts", 0, 5}};
  for (const Case& c : cases) {
    std::vector<unsigned> want(256, 0), got(256, 0);
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < threads; ++t) {
        if (c.skip && t % c.skip == 0) continue;
        for (int i = b * threads + t + (c.spread ? t % c.spread : 0) * stride; i < n; i += stride)
          ++want[data[i]];
      }
    CHECK(cudaMemset(d_bins, 0, 256 * sizeof(unsigned)));
    histogram<<<blocks, threads>>>(d_data, n, d_bins, c.skip, c.spread);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(got.data(), d_bins, 256 * sizeof(unsigned), cudaMemcpyDeviceToHost));
    expect_equal(c.name, got.data(), want.data(), 256);
  }
  CHECK(cudaFree(d_data));
  CHECK(cudaFree(d_bins));
  return report("full_rounds");
}
