// Kernels that prefetch (PTX prefetch.global.L1/.L2, as CUDA code reading ahead writes it
// with inline assembly): on Mimic a prefetch is llvm.prefetch, made vectorisable first so
// that the thread loop around it is still widened (codegen/prefetch_calls.h). Prefetches
// change no result: each thread ahead of its own reads, thread 0 of each block only, one
// per thread of addresses a row apart, and addresses past the end of the allocation.
#include <cstdint>
#include <vector>

#include "check.h"

__device__ __forceinline__ void prefetch_l1(const void* p) { asm volatile("prefetch.global.L1 [%0];" ::"l"(p)); }
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// y = 2x + 1, each thread prefetching its element 4 KB on (past the end for the last ones)
// and thread 0 of each block the next block's first line.
__global__ void ahead(const float* __restrict__ x, float* __restrict__ y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  prefetch_l2(x + i + 1024);
  if (threadIdx.x == 0) prefetch_l1(x + i + blockDim.x);
  y[i] = 2.0f * x[i] + 1.0f;
}

// Row sums, one thread per row, prefetching the next column of its row as it goes: lanes a
// row apart, one prefetch each.
__global__ void row_sums(const float* __restrict__ m, float* __restrict__ sums, unsigned rows, unsigned cols) {
  unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0;
  for (unsigned c = 0; c < cols; ++c) {
    prefetch_l1(m + size_t(r) * cols + c + 16);
    s += m[size_t(r) * cols + c];
  }
  sums[r] = s;
}

int main() {
  {
    const unsigned n = 256 * 37 + 5;
    std::vector<float> x(n), y(n), want(n);
    for (unsigned i = 0; i < n; ++i) {
      x[i] = float(i % 113) * 0.5f;
      want[i] = 2.0f * x[i] + 1.0f;
    }
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    ahead<<<(n + 255) / 256, 256>>>(dx, dy, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    expect_equal("ahead", y.data(), want.data(), n);
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
  }
  {
    const unsigned rows = 300, cols = 40;
    std::vector<float> m(size_t(rows) * cols), sums(rows), want(rows);
    for (size_t i = 0; i < m.size(); ++i)
      m[i] = float(i % 17);
    for (unsigned r = 0; r < rows; ++r) {
      float s = 0;
      for (unsigned c = 0; c < cols; ++c)
        s += m[size_t(r) * cols + c];
      want[r] = s;
    }
    float *dm, *ds;
    CHECK(cudaMalloc(&dm, m.size() * sizeof(float)));
    CHECK(cudaMalloc(&ds, rows * sizeof(float)));
    CHECK(cudaMemcpy(dm, m.data(), m.size() * sizeof(float), cudaMemcpyHostToDevice));
    row_sums<<<(rows + 127) / 128, 128>>>(dm, ds, rows, cols);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(sums.data(), ds, rows * sizeof(float), cudaMemcpyDeviceToHost));
    expect_equal("row_sums", sums.data(), want.data(), rows);
    CHECK(cudaFree(dm));
    CHECK(cudaFree(ds));
  }
  return report("prefetch_ahead");
}
