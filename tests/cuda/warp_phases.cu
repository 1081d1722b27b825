// Some warps shuffle between two barriers while the others wait at the second one (the
// block reductions of softmax, layernorm and reduce end with `if (warp == 0) { shuffles }`).
// The CPU backend's kernels go on through these themselves (codegen/lower.cpp,
// chain_whole_block): the first warps, the last warps, or a run in the middle (which the
// executor takes), in blocks with a partial last warp, in a loop around the barriers,
// while the other warps have ended, and after some threads exited. Each block's results are checked against the host.
#include <cstdint>
#include <vector>

#include "check.h"

constexpr unsigned kFull = 0xffffffffu;

__device__ int warp_sum(int v) {
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_xor_sync(kFull, v, o);
  return v;
}

// Warps [first, last] of each block (a negative `first` counts from the block's last
// warp) add up their lanes' values; thread 0 then combines them, `rounds` times.
__global__ void phases(const int* in, int* out, int first, int last, int rounds) {
  __shared__ int sums[32];
  const unsigned t = threadIdx.x, warp = t / 32, warps = (blockDim.x + 31) / 32;
  const int lo = first < 0 ? int(warps) + first : first, hi = first < 0 ? int(warps) + last : last;
  int v = in[blockIdx.x * blockDim.x + t], total = 0;
#pragma unroll 1
  for (int r = 0; r < rounds; ++r) {
    if (t < 32) sums[t] = 0;
    __syncthreads();
    if (int(warp) >= lo && int(warp) <= hi) {
      int s = warp_sum(v + r);
      if (t % 32 == 0) sums[warp] = s;
    }
    __syncthreads();
    if (t == 0)
      for (unsigned w = 0; w < warps; ++w) sums[31] += w < 31 ? sums[w] * int(w + 1) : 0;
    __syncthreads();
    total += sums[31];
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + t] = total;
}

// After the barrier only warp 0 goes on (reduce's last step): the others have ended.
__global__ void warp0_last(const int* in, int* out) {
  __shared__ int sums[32];
  const unsigned t = threadIdx.x, warp = t / 32;
  int s = warp_sum(in[blockIdx.x * blockDim.x + t]);
  if (t % 32 == 0) sums[warp] = s;
  __syncthreads();
  if (warp != 0) return;
  int v = t < blockDim.x / 32 ? sums[t] * int(t + 1) : 0;
  v = warp_sum(v);
  out[blockIdx.x * 32 + t] = v;
}

// Threads past `live` exit first; the rest sum their warps as above (warp 0 only).
__global__ void after_exits(const int* in, int* out, unsigned live) {
  __shared__ int sums[32];
  const unsigned t = threadIdx.x;
  if (t >= live) return;
  int v = in[blockIdx.x * blockDim.x + t];
  if (t < 32) sums[t] = 0;
  __syncthreads();
  if (t < 32) sums[t] = warp_sum(v);
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = sums[t % 32] + int(t);
}

static std::vector<int> expected_phases(const std::vector<int>& in, unsigned block, unsigned blocks, int first,
                                        int last, int rounds) {
  std::vector<int> want(in.size());
  const unsigned warps = (block + 31) / 32;
  const int lo = first < 0 ? int(warps) + first : first, hi = first < 0 ? int(warps) + last : last;
  for (unsigned b = 0; b < blocks; ++b) {
    int total = 0;
    for (int r = 0; r < rounds; ++r) {
      int sums[32] = {};
      for (int w = lo; w <= hi; ++w) {
        int s = 0;
        for (unsigned l = 0; l < 32; ++l) s += in[b * block + w * 32 + l] + r;
        sums[w] = s;
      }
      for (unsigned w = 0; w < warps && w < 31; ++w) sums[31] += sums[w] * int(w + 1);
      total += sums[31];
    }
    for (unsigned t = 0; t < block; ++t) want[b * block + t] = total;
  }
  return want;
}

int main() {
  const unsigned blocks = 37;
  struct Case {
    const char* what;
    unsigned block;
    int first, last, rounds;
  };
  const Case cases[] = {
      {"warp 0 (256 threads)", 256, 0, 0, 1},
      {"warps 0-1 (256 threads), 3 rounds", 256, 0, 1, 3},
      {"the last warp (256 threads)", 256, -1, -1, 1},
      {"the last two warps (128 threads), 4 rounds", 128, -2, -1, 4},
      {"warps 2-3 of 8 (in the middle)", 256, 2, 3, 2},
      {"every warp (96 threads)", 96, 0, 2, 2},
      {"warp 0 of a partial last warp (80 threads)", 80, 0, 0, 2},
      {"one warp per block (32 threads)", 32, 0, 0, 3},
  };
  for (const Case& c : cases) {
    const size_t n = size_t(c.block) * blocks;
    std::vector<int> in(n), got(n);
    for (size_t i = 0; i < n; ++i) in[i] = int((i * 2654435761u) % 1000) - 500;
    int *din, *dout;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dout, n * sizeof(int)));
    CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    phases<<<blocks, c.block>>>(din, dout, c.first, c.last, c.rounds);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(got.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<int> want = expected_phases(in, c.block, blocks, c.first, c.last, c.rounds);
    expect_equal(c.what, got.data(), want.data(), n);
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));
  }
  {
    const unsigned block = 256;
    const size_t n = size_t(block) * blocks;
    std::vector<int> in(n), got(32 * blocks), want(32 * blocks);
    for (size_t i = 0; i < n; ++i) in[i] = int((i * 40503u) % 301) - 150;
    for (unsigned b = 0; b < blocks; ++b) {
      int total = 0;
      for (unsigned w = 0; w < block / 32; ++w)
        for (unsigned l = 0; l < 32; ++l) total += in[b * block + w * 32 + l] * int(w + 1);
      for (unsigned l = 0; l < 32; ++l) want[b * 32 + l] = total;
    }
    int *din, *dout;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dout, got.size() * sizeof(int)));
    CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    warp0_last<<<blocks, block>>>(din, dout);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(got.data(), dout, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
    expect_equal("warp 0 after the other warps ended", got.data(), want.data(), got.size());
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));
  }
  {
    const unsigned block = 128, live = 70;
    const size_t n = size_t(block) * blocks;
    std::vector<int> in(n), got(n, -1), want(n, -1);
    for (size_t i = 0; i < n; ++i) in[i] = int(i % 97) - 40;
    for (unsigned b = 0; b < blocks; ++b) {
      int warp0 = 0;
      for (unsigned l = 0; l < 32; ++l) warp0 += in[b * block + l];
      for (unsigned t = 0; t < live; ++t) {
        want[b * block + t] = warp0 + int(t); // every lane of warp 0 stored the warp's sum
      }
    }
    int *din, *dout;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dout, n * sizeof(int)));
    CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dout, got.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    after_exits<<<blocks, block>>>(din, dout, live);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(got.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    expect_equal("warp 0 after threads 70-127 exited", got.data(), want.data(), n);
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));
  }
  return report("warp_phases");
}
