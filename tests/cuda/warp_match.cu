// __match_any_sync and __match_all_sync on 32- and 64-bit values, over the full warp and
// over a partial member mask.
// nvcc-flags: -arch=sm_75
#include <vector>

#include "check.h"

__global__ void match(const int* in, unsigned* out) {
  int lane = threadIdx.x % 32;
  int v = in[threadIdx.x];
  unsigned long long w = (unsigned long long)(v % 3) << 40 | 5;
  unsigned* o = out + threadIdx.x * 6;
  int pred = -1;
  o[0] = __match_any_sync(0xffffffffu, v);
  o[1] = __match_any_sync(0xffffffffu, w);
  o[2] = __match_all_sync(0xffffffffu, v, &pred);
  o[3] = pred;
  unsigned all_same = __match_all_sync(0xffffffffu, 99ull, &pred);
  o[4] = all_same | (pred ? 0 : 1);
  o[5] = lane % 2 == 0 ? __match_any_sync(0x55555555u, v / 2) : 0;
}

int main() {
  const int threads = 64;
  std::vector<int> in(threads);
  for (int i = 0; i < threads; ++i)
    in[i] = i < 32 ? (i * 7) % 5 : 4; // warp 1: all lanes equal
  std::vector<unsigned> out(threads * 6), want(threads * 6);
  for (int t = 0; t < threads; ++t) {
    int warp = t / 32, lane = t % 32;
    unsigned any = 0, any64 = 0, any_even = 0;
    bool all = true;
    for (int l = 0; l < 32; ++l) {
      int u = in[warp * 32 + l];
      any |= unsigned(u == in[t]) << l;
      any64 |= unsigned(u % 3 == in[t] % 3) << l;
      if (l % 2 == 0) any_even |= unsigned(u / 2 == in[t] / 2) << l;
      all &= u == in[t];
    }
    unsigned w[6] = {any, any64,       all ? 0xffffffffu : 0u,
                     all, 0xffffffffu, lane % 2 == 0 ? any_even : 0};
    for (int k = 0; k < 6; ++k)
      want[t * 6 + k] = w[k];
  }
  int* d_in;
  unsigned* d_out;
  CHECK(cudaMalloc(&d_in, threads * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, in.data(), threads * sizeof(int), cudaMemcpyHostToDevice));
  match<<<1, threads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  expect_equal("match (any, any64, all, pred, all const, any even lanes)", out.data(), want.data(),
               out.size());
  return report("warp_match");
}
