// Warp reductions of sm_80: __reduce_add_sync, __reduce_min_sync and __reduce_max_sync
// (signed and unsigned), __reduce_and_sync, __reduce_or_sync and __reduce_xor_sync, over
// the full warp and over the odd lanes only.
// nvcc-flags: -arch=sm_80
#include <algorithm>
#include <climits>
#include <vector>

#include "check.h"

constexpr int kOps = 9;

__global__ void reduce(const int* in, unsigned* out) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int v = in[threadIdx.x];
  unsigned u = unsigned(v) * 2246822519u;
  unsigned* o = out + warp * kOps;
  unsigned r[kOps];
  r[0] = __reduce_add_sync(0xffffffffu, unsigned(v));
  r[1] = unsigned(__reduce_min_sync(0xffffffffu, v));
  r[2] = unsigned(__reduce_max_sync(0xffffffffu, v));
  r[3] = __reduce_min_sync(0xffffffffu, u);
  r[4] = __reduce_max_sync(0xffffffffu, u);
  r[5] = __reduce_and_sync(0xffffffffu, u);
  r[6] = __reduce_or_sync(0xffffffffu, u);
  r[7] = __reduce_xor_sync(0xffffffffu, u);
  r[8] = lane % 2 ? unsigned(__reduce_add_sync(0xaaaaaaaau, v)) : 0;
  if (lane == 0)
    for (int k = 0; k < 8; ++k)
      o[k] = r[k];
  if (lane == 1) o[8] = r[8];
}

int main() {
  const int warps = 3, threads = warps * 32;
  std::vector<int> in(threads);
  for (int i = 0; i < threads; ++i)
    in[i] = (i * 7919) % 2001 - 1000;
  std::vector<unsigned> out(warps * kOps), want(warps * kOps);
  for (int w = 0; w < warps; ++w) {
    unsigned r[kOps] = {0, unsigned(INT_MAX), unsigned(INT_MIN), ~0u, 0, ~0u, 0, 0, 0};
    int mn = INT_MAX, mx = INT_MIN;
    for (int l = 0; l < 32; ++l) {
      int v = in[w * 32 + l];
      unsigned u = unsigned(v) * 2246822519u;
      r[0] += unsigned(v), mn = std::min(mn, v), mx = std::max(mx, v);
      r[3] = std::min(r[3], u), r[4] = std::max(r[4], u), r[5] &= u, r[6] |= u, r[7] ^= u;
      if (l % 2) r[8] += unsigned(v);
    }
    r[1] = unsigned(mn), r[2] = unsigned(mx);
    std::copy(r, r + kOps, &want[w * kOps]);
  }
  int* d_in;
  unsigned* d_out;
  CHECK(cudaMalloc(&d_in, threads * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, in.data(), threads * sizeof(int), cudaMemcpyHostToDevice));
  reduce<<<1, threads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  expect_equal("add, min, max, umin, umax, and, or, xor, odd-lane add", out.data(), want.data(),
               out.size());
  return report("warp_redux");
}
