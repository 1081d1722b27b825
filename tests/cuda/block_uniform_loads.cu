// Block-wide values read from shared memory after a barrier (the CPU backend reads such a
// load once per row of threads when nothing in the thread loop may write it,
// codegen/uniform_loads.h): a block-normalisation kernel on 2-D blocks whose mean, read
// after one barrier, is used after three more while the same shared variable is rewritten
// by a second reduction; a row-dependent offset into a shared array (not the same for
// every row); and a thread that writes a shared variable and reads it back in the same
// stretch between barriers, which must see its own write.
// variants: debug
#include <cmath>
#include <vector>

#include "check.h"

__device__ float block_sum(float v, float* partial, float* total) {
  unsigned t = threadIdx.y * blockDim.x + threadIdx.x, n = blockDim.x * blockDim.y;
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_down_sync(0xffffffffu, v, o);
  if (t % 32 == 0) partial[t / 32] = v;
  __syncthreads();
  if (t < 32) {
    v = t < n / 32 ? partial[t] : 0.0f;
    for (int o = 16; o > 0; o /= 2)
      v += __shfl_down_sync(0xffffffffu, v, o);
    if (t == 0) *total = v;
  }
  __syncthreads();
  return *total;
}

// One block per row of `cols` values; blockDim (32, 4): four rows of threads.
__global__ void normalise(const float* x, float* y, float* stats, int cols) {
  __shared__ float partial[32];
  __shared__ float total;
  __shared__ float per_row[4];
  unsigned t = threadIdx.y * blockDim.x + threadIdx.x, n = blockDim.x * blockDim.y;
  const float* r = x + size_t(blockIdx.x) * cols;
  float s = 0;
  for (int c = t; c < cols; c += n) s += r[c];
  float mean = block_sum(s, partial, &total) / cols;
  if (threadIdx.x == 0) per_row[threadIdx.y] = mean * float(threadIdx.y + 1);
  float squares = 0;
  for (int c = t; c < cols; c += n) squares += (r[c] - mean) * (r[c] - mean);
  float inv_std = rsqrtf(block_sum(squares, partial, &total) / cols + 1e-5f);
  float scale = per_row[threadIdx.y]; // the same in a row, not in the block
  for (int c = t; c < cols; c += n)
    y[size_t(blockIdx.x) * cols + c] = (r[c] - mean) * inv_std + scale;
  if (t == 0) stats[2 * blockIdx.x] = mean, stats[2 * blockIdx.x + 1] = inv_std;
}

// Thread 0 of each block writes flags[which] (which = 0, unknown to nvcc, so that it reads
// flags[0] back from memory) and reads flags[0] before the next barrier; the others read it
// after the barrier.
__global__ void own_write(int* out, int which) {
  __shared__ int flags[2];
  if (threadIdx.x == 0) flags[0] = -1;
  __syncthreads();
  int seen = 0;
  if (threadIdx.x == 0) {
    flags[which] = int(blockIdx.x) * 10 + 7;
    seen = flags[0];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = seen;
  __syncthreads();
  out[gridDim.x * blockDim.x + blockIdx.x * blockDim.x + threadIdx.x] = flags[0];
}

int main() {
  const int rows = 23, cols = 333;
  std::vector<float> x(size_t(rows) * cols), y(x.size()), stats(2 * rows);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i) * 0.71f) * 3 + float(i % 17) * 0.2f;
  float *dx, *dy, *dstats;
  CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
  CHECK(cudaMalloc(&dy, y.size() * sizeof(float)));
  CHECK(cudaMalloc(&dstats, stats.size() * sizeof(float)));
  CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  normalise<<<rows, dim3(32, 4)>>>(dx, dy, dstats, cols);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(stats.data(), dstats, stats.size() * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < cols; ++c) mean += x[size_t(r) * cols + c];
    mean /= cols;
    for (int c = 0; c < cols; ++c) var += (x[size_t(r) * cols + c] - mean) * (x[size_t(r) * cols + c] - mean);
    double inv_std = 1 / std::sqrt(var / cols + 1e-5);
    if (std::fabs(stats[2 * r] - mean) > 1e-4 * (1 + std::fabs(mean)) ||
        std::fabs(stats[2 * r + 1] - inv_std) > 1e-4 * inv_std) {
      if (bad++ < 5) fprintf(stderr, "row %d: mean %g inv_std %g, expected %g %g\n", r, stats[2 * r], stats[2 * r + 1], mean, inv_std);
      continue;
    }
    for (int c = 0; c < cols; ++c) {
      int ty = (c % 128) / 32;
      double want = (x[size_t(r) * cols + c] - mean) * inv_std + mean * (ty + 1);
      double got = y[size_t(r) * cols + c];
      if (std::fabs(got - want) > 1e-3 * (1 + std::fabs(want)) && bad++ < 5)
        fprintf(stderr, "y[%d][%d] = %g, expected %g\n", r, c, got, want);
    }
  }
  EXPECT(bad == 0);

  const int blocks = 5, threads = 96;
  std::vector<int> out(2 * blocks * threads);
  int* dout;
  CHECK(cudaMalloc(&dout, out.size() * sizeof(int)));
  own_write<<<blocks, threads>>>(dout, 0);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  std::vector<int> want(out.size(), 0);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) {
      want[b * threads + t] = t == 0 ? b * 10 + 7 : 0;
      want[blocks * threads + b * threads + t] = b * 10 + 7;
    }
  expect_equal("own_write", out.data(), want.data(), out.size());
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  CHECK(cudaFree(dstats));
  CHECK(cudaFree(dout));
  return report("block_uniform_loads");
}
