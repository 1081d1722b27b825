// The CPU backend's code tiers (backends/cpu/tiers.h): a kernel's first launch runs quick
// code while the optimised code is compiled in the background, and the blocks that start
// after it is linked run it. Both must give the same results, also in one launch whose
// blocks ran some with each. Here a block reduction (shared memory, barriers, warp
// shuffles: the quick code saves registers at split points that the optimised code
// computes again) is launched again and again for 3 seconds, each launch on new values,
// and every row of every launch is checked exactly. MIMIC_VERBOSE's note says the
// optimised code took over; without the JIT cache (MIMIC_CACHE=0) the first launch always
// starts with quick code.
// mimic-env: MIMIC_QUICK_TIER=1 MIMIC_VERBOSE=1 MIMIC_CACHE=0
// expect-stderr: optimised code in use
#include <chrono>
#include <cstdint>
#include <vector>

#include "check.h"

constexpr int kCols = 256, kRows = 2048;

__global__ void row_sums(const int* in, int* out, int offset) {
  __shared__ int warp_sums[kCols / 32];
  const int row = blockIdx.x, t = threadIdx.x;
  int v = in[row * kCols + t] + offset * (t % 7);
  for (int d = 16; d > 0; d /= 2)
    v += __shfl_down_sync(0xffffffffu, v, d);
  if (t % 32 == 0) warp_sums[t / 32] = v;
  __syncthreads();
  if (t < 32) {
    int s = t < kCols / 32 ? warp_sums[t] : 0;
    for (int d = 16; d > 0; d /= 2)
      s += __shfl_down_sync(0xffffffffu, s, d);
    if (t == 0) out[row] = s * 3 + row;
  }
}

int main() {
  std::vector<int> in(kRows * kCols), out(kRows), base(kRows, 0);
  for (int i = 0; i < kRows * kCols; ++i)
    in[i] = int((uint32_t(i) * 2654435761u) >> 20) - 2048;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c)
      base[r] += in[r * kCols + c];
  int sevenths = 0; // sum over a row of (t % 7)
  for (int c = 0; c < kCols; ++c)
    sevenths += c % 7;
  int *d_in = nullptr, *d_out = nullptr;
  CHECK(cudaMalloc(&d_in, in.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
  const auto start = std::chrono::steady_clock::now();
  int launches = 0, bad_launches = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(3)) {
    const int offset = launches % 1000;
    CHECK(cudaMemset(d_out, 0xff, out.size() * sizeof(int)));
    row_sums<<<kRows, kCols>>>(d_in, d_out, offset);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int r = 0; r < kRows; ++r)
      if (out[r] != (base[r] + offset * sevenths) * 3 + r) {
        if (wrong++ == 0)
          fprintf(stderr, "launch %d: row %d is %d, expected %d\n", launches, r, out[r],
                  (base[r] + offset * sevenths) * 3 + r);
      }
    bad_launches += wrong != 0;
    ++launches;
  }
  EXPECT(bad_launches == 0);
  EXPECT(launches >= 2);
  printf("%d launches, %d with wrong rows\n", launches, bad_launches);
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  return report("quick_tier");
}
