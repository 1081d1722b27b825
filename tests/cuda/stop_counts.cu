// Thread loops whose threads stop at one of two places (some warps at a shuffle, the
// others at a barrier or at their end): on the CPU the loop counts the threads at the first
// place and sums their indices, and the chain tells from that whether they are a run at
// the block's start or end (codegen/lower.cpp, StopPair). Every other pattern (a warp in
// the middle, every other warp, partial warps) must still be found by reading the stops.
// variants: debug
// mimic-env: MIMIC_QUICK_TIER=0
#include <vector>

#include "check.h"

// Which warps reduce the block's warp sums with shuffles, chosen at run time.
enum Pick { kFirst, kLast, kMiddle, kEven, kFirstThree, kNone, kAll, kPicks };

__device__ bool picked(int pick, unsigned warp, unsigned warps) {
  switch (pick) {
  case kFirst: return warp == 0;
  case kLast: return warp == warps - 1;
  case kMiddle: return warp == warps / 2;
  case kEven: return warp % 2 == 0;
  case kFirstThree: return warp < 3;
  case kNone: return false;
  default: return true;
  }
}

// Each picked warp sums the warp sums (its lane l reads warp l's), between two barriers;
// every thread then adds what its warp found (0 where its warp was not picked).
__global__ void picked_sums(const int* in, int* out, int pick) {
  __shared__ int warp_sums[32];
  __shared__ int found[32];
  unsigned t = threadIdx.x + threadIdx.y * blockDim.x;
  unsigned threads = blockDim.x * blockDim.y;
  unsigned lane = t % 32, warp = t / 32, warps = (threads + 31) / 32;
  int v = in[blockIdx.x * threads + t];
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  if (lane == 0) {
    warp_sums[warp] = v;
    found[warp] = 0;
  }
  __syncthreads();
  if (picked(pick, warp, warps)) {
    int s = lane < warps ? warp_sums[lane] : 0;
    for (int offset = 16; offset > 0; offset /= 2)
      s += __shfl_down_sync(0xffffffffu, s, offset);
    if (lane == 0)
      found[warp] = s;
  }
  __syncthreads();
  out[blockIdx.x * threads + t] = found[warp] + int(t);
}

// Warp 0 sums the warp sums after the other warps ended (a reduction's last step).
__global__ void last_warp_standing(const int* in, int* out) {
  __shared__ int warp_sums[32];
  unsigned t = threadIdx.x, lane = t % 32, warp = t / 32, warps = blockDim.x / 32;
  int v = in[blockIdx.x * blockDim.x + t];
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  if (lane == 0)
    warp_sums[warp] = v;
  __syncthreads();
  if (warp != 0)
    return;
  int s = lane < warps ? warp_sums[lane] : 0;
  for (int offset = 16; offset > 0; offset /= 2)
    s += __shfl_down_sync(0xffffffffu, s, offset);
  if (lane == 0)
    out[blockIdx.x] = s;
}

int main() {
  constexpr int kBlocks = 6, kMost = 256;
  std::vector<int> in(kBlocks * kMost);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = int(i * 37 % 101) - 50;
  int *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, in.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_out, in.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
  // Whole warps in a row, two rows of a 2-D block, and a block of whole warps only in
  // part (96 threads: three warps; 256 as 32 x 8).
  const dim3 shapes[] = {dim3(256), dim3(32, 8), dim3(96), dim3(128, 2)};
  for (dim3 shape : shapes) {
    const int threads = int(shape.x * shape.y), warps = (threads + 31) / 32;
    for (int pick = 0; pick < kPicks; ++pick) {
      picked_sums<<<kBlocks, shape>>>(d_in, d_out, pick);
      CHECK_LAUNCH();
      std::vector<int> got(kBlocks * threads), want(kBlocks * threads);
      CHECK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
      for (int b = 0; b < kBlocks; ++b) {
        int total = 0;
        for (int t = 0; t < threads; ++t)
          total += in[b * threads + t];
        for (int t = 0; t < threads; ++t) {
          int warp = t / 32;
          bool on = pick == kFirst ? warp == 0
                    : pick == kLast ? warp == warps - 1
                    : pick == kMiddle ? warp == warps / 2
                    : pick == kEven ? warp % 2 == 0
                    : pick == kFirstThree ? warp < 3
                    : pick == kAll;
          want[b * threads + t] = (on ? total : 0) + t;
        }
      }
      char name[64];
      snprintf(name, sizeof name, "picked warps %d, block %ux%u", pick, shape.x, shape.y);
      expect_equal(name, got.data(), want.data(), got.size());
    }
  }
  last_warp_standing<<<kBlocks, 256>>>(d_in, d_out);
  CHECK_LAUNCH();
  std::vector<int> sums(kBlocks), want_sums(kBlocks, 0);
  CHECK(cudaMemcpy(sums.data(), d_out, kBlocks * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < kBlocks; ++b)
    for (int t = 0; t < 256; ++t)
      want_sums[b] += in[b * 256 + t];
  expect_equal("last warp standing", sums.data(), want_sums.data(), kBlocks);
  return report("stop_counts");
}
