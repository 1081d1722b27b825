// Warp votes: __all_sync, __any_sync and __ballot_sync over full and partial member masks,
// in a warp with only some lanes present (a block of 48 threads), and __activemask where
// the warp is converged and inside a branch taken by some lanes.
#include <vector>

#include "check.h"

__global__ void votes(const int* in, unsigned* out) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int v = in[threadIdx.x];
  unsigned full = warp == 0 ? 0xffffffffu : 0x0000ffffu; // the second warp has 16 lanes
  unsigned* o = out + warp * 8;
  unsigned ballot = __ballot_sync(full, v > 0);
  unsigned all = __all_sync(full, v > -50);
  unsigned any = __any_sync(full, v == 13);
  unsigned active = __activemask();
  unsigned evens = __ballot_sync(full, v % 2 == 0);
  unsigned inner = 0, inner_ok = 1;
  if (v % 2 == 0) {
    inner = __activemask();
    // Inside the branch only lanes that took it can be active, and this one is.
    inner_ok = (inner & (1u << lane)) != 0 && (inner & ~evens) == 0;
  }
  unsigned low = 0;
  if (lane < 8) low = __ballot_sync(0xffu, v > 0) | (__all_sync(0xffu, lane < 8) ? 0x100u : 0u);
  unsigned inner_all = __all_sync(full, inner_ok);
  if (lane == 0) {
    o[0] = ballot, o[1] = all != 0, o[2] = any != 0, o[3] = active, o[4] = low;
    o[5] = inner_all != 0;
  }
}

int main() {
  const int threads = 48;
  std::vector<int> in(threads);
  for (int i = 0; i < threads; ++i)
    in[i] = (i * 37) % 29 - 10;
  in[40] = 13;
  std::vector<unsigned> out(16, 0xdeadu), want(16, 0xdeadu);
  for (int warp = 0; warp < 2; ++warp) {
    int lanes = warp == 0 ? 32 : 16;
    unsigned ballot = 0, all = 1, any = 0, low = 0x100;
    for (int l = 0; l < lanes; ++l) {
      int v = in[warp * 32 + l];
      ballot |= unsigned(v > 0) << l, all &= v > -50, any |= v == 13;
      if (l < 8) low |= unsigned(v > 0) << l;
    }
    unsigned w[6] = {ballot, all, any, lanes == 32 ? 0xffffffffu : 0xffffu, low, 1};
    for (int k = 0; k < 6; ++k)
      want[warp * 8 + k] = w[k];
  }
  int* d_in;
  unsigned* d_out;
  CHECK(cudaMalloc(&d_in, threads * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(unsigned)));
  CHECK(cudaMemcpy(d_in, in.data(), threads * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_out, out.data(), out.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  votes<<<1, threads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  expect_equal("votes (ballot, all, any, activemask, low ballot, inner activemask)", out.data(),
               want.data(), out.size());
  return report("warp_vote");
}
