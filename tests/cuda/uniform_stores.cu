// Stores to one address made by some threads only, which the CPU backend turns from a
// vector scatter into one store of the last active lane (codegen/uniform_scatter.h):
// a halo cell written by the first and last thread of each row, one partial sum per warp
// written by its lane 0, a block's total written by lane 0 of warp 0 from the value every
// lane of it read from one slot (stored by one load of that slot), and an address several
// threads of one warp write, whose result must be one of their values (which one is not
// defined in CUDA). MIMIC_QUICK_TIER=0: every launch runs the optimised code, which has
// the pass.
// mimic-env: MIMIC_QUICK_TIER=0
#include <vector>

#include "check.h"

constexpr int kW = 32, kH = 8;

// Each row of the block copies its halo into shared memory through threads 0 and 31.
__global__ void halo_rows(const float* in, float* out, int cols) {
  __shared__ float tile[kH][kW + 2];
  int x = blockIdx.x * kW + threadIdx.x, y = blockIdx.y * kH + threadIdx.y;
  int i = y * cols + x;
  tile[threadIdx.y][threadIdx.x + 1] = in[i];
  if (threadIdx.x == 0) tile[threadIdx.y][0] = x > 0 ? in[i - 1] : -1.0f;
  if (threadIdx.x == kW - 1) tile[threadIdx.y][kW + 1] = x + 1 < cols ? in[i + 1] : -1.0f;
  __syncthreads();
  out[i] = tile[threadIdx.y][threadIdx.x] + 2.0f * tile[threadIdx.y][threadIdx.x + 2];
}

__global__ void warp_partials(const int* in, int* partials) {
  __shared__ int sums[32];
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < blockDim.x / 32) partials[blockIdx.x * (blockDim.x / 32) + threadIdx.x] = sums[threadIdx.x];
}

// A block's sum (as layernorm's): warp sums through shared memory, then warp 0 sums those
// and its lane 0 stores the total, which every lane of warp 0 read from one slot.
__global__ void block_totals(const float* in, float* totals) {
  __shared__ float warp_sums[32];
  __shared__ float total;
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) total = v;
  }
  __syncthreads();
  totals[blockIdx.x * blockDim.x + threadIdx.x] = total;
}

// Threads 3, 7, 11, ... of each block write the block's one slot.
__global__ void shared_slot(int* out) {
  if (threadIdx.x % 4 == 3) out[blockIdx.x] = 1000 * blockIdx.x + threadIdx.x;
}

int main() {
  const int cols = 4 * kW, rows = 3 * kH, n = rows * cols;
  std::vector<float> in(n), out(n), want(n);
  for (int i = 0; i < n; ++i)
    in[i] = float((i * 37) % 101) - 50.0f;
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      float left = x > 0 ? in[y * cols + x - 1] : -1.0f, right = x + 1 < cols ? in[y * cols + x + 1] : -1.0f;
      want[y * cols + x] = left + 2.0f * right;
    }
  float *din, *dout;
  CHECK(cudaMalloc(&din, n * sizeof(float)));
  CHECK(cudaMalloc(&dout, n * sizeof(float)));
  CHECK(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  halo_rows<<<dim3(cols / kW, rows / kH), dim3(kW, kH)>>>(din, dout, cols);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("halo_rows", out.data(), want.data(), n);

  const int blocks = 40, threads = 256, warps = threads / 32;
  std::vector<int> vi(blocks * threads), partials(blocks * warps), wantp(blocks * warps, 0);
  for (int i = 0; i < blocks * threads; ++i) {
    vi[i] = (i * 7919) % 1000 - 400;
    wantp[i / 32] += vi[i];
  }
  int *dvi, *dp;
  CHECK(cudaMalloc(&dvi, vi.size() * sizeof(int)));
  CHECK(cudaMalloc(&dp, partials.size() * sizeof(int)));
  CHECK(cudaMemcpy(dvi, vi.data(), vi.size() * sizeof(int), cudaMemcpyHostToDevice));
  warp_partials<<<blocks, threads>>>(dvi, dp);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(partials.data(), dp, partials.size() * sizeof(int), cudaMemcpyDeviceToHost));
  expect_equal("warp_partials", partials.data(), wantp.data(), partials.size());

  // Integers in floats: every order of summing gives the same totals.
  std::vector<float> vf(blocks * threads), totals(blocks * threads), want_totals(blocks * threads);
  for (int i = 0; i < blocks * threads; ++i)
    vf[i] = float(vi[i]);
  for (int b = 0; b < blocks; ++b) {
    float sum = 0;
    for (int t = 0; t < threads; ++t)
      sum += vf[b * threads + t];
    for (int t = 0; t < threads; ++t)
      want_totals[b * threads + t] = sum;
  }
  float *dvf, *dt;
  CHECK(cudaMalloc(&dvf, vf.size() * sizeof(float)));
  CHECK(cudaMalloc(&dt, totals.size() * sizeof(float)));
  CHECK(cudaMemcpy(dvf, vf.data(), vf.size() * sizeof(float), cudaMemcpyHostToDevice));
  block_totals<<<blocks, threads>>>(dvf, dt);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(totals.data(), dt, totals.size() * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("block_totals", totals.data(), want_totals.data(), totals.size());

  std::vector<int> slots(blocks, -1);
  int* ds;
  CHECK(cudaMalloc(&ds, blocks * sizeof(int)));
  CHECK(cudaMemcpy(ds, slots.data(), blocks * sizeof(int), cudaMemcpyHostToDevice));
  shared_slot<<<blocks, 96>>>(ds);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(slots.data(), ds, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    int t = slots[b] - 1000 * b;
    if (t < 0 || t >= 96 || t % 4 != 3) {
      fprintf(stderr, "shared_slot: block %d holds %d, which none of its writers stored\n", b, slots[b]);
      ++failures;
    }
  }
  return report("uniform_stores");
}
