// Divergence inside a warp: per-lane loop trip counts, nested branches, early-exiting
// lanes, and __syncwarp-ordered exchanges through shared memory after the warp reconverges.
#include <vector>

#include "check.h"

__global__ void diverge(const int* in, int* out) {
  __shared__ int slot[64];
  int t = threadIdx.x, lane = t % 32;
  int v = in[t];
  slot[t] = 0;
  __syncwarp();
  int acc = 0;
  for (int i = 0; i < lane % 7 + 1; ++i) { // different trip counts per lane
    if ((v + i) % 3 == 0)
      acc += i;
    else if (i % 2)
      acc -= v;
    else
      acc ^= i << 4;
  }
  if (lane % 5 == 4) {
    out[t] = acc * 3; // these lanes leave early
    return;
  }
  int k = v;
  while (k > 1) // Collatz steps: data-dependent loop
    k = k % 2 ? 3 * k + 1 : k / 2, ++acc;
  unsigned alive = ~0x21084210u; // lanes with lane % 5 != 4 stay
  slot[t] = acc;
  __syncwarp(alive);
  int neighbour = slot[(t & ~31) | ((lane + 1) % 32)];
  __syncwarp(alive);
  out[t] = acc + neighbour;
}

int main() {
  const int threads = 64;
  std::vector<int> in(threads), want(threads), acc(threads);
  for (int i = 0; i < threads; ++i)
    in[i] = (i * 13) % 41 + 1;
  for (int t = 0; t < threads; ++t) {
    int lane = t % 32, v = in[t], a = 0;
    for (int i = 0; i < lane % 7 + 1; ++i)
      a = (v + i) % 3 == 0 ? a + i : i % 2 ? a - v : a ^ (i << 4);
    if (lane % 5 == 4) {
      want[t] = a * 3;
      acc[t] = -1;
      continue;
    }
    for (int k = v; k > 1; ++a)
      k = k % 2 ? 3 * k + 1 : k / 2;
    acc[t] = a;
  }
  for (int t = 0; t < threads; ++t) {
    int lane = t % 32;
    int nb = (t & ~31) | ((lane + 1) % 32);
    if (lane % 5 != 4) // a neighbour that left early left its slot 0
      want[t] = acc[t] + ((nb % 32) % 5 == 4 ? 0 : acc[nb]);
  }
  std::vector<int> out(threads);
  int *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, threads * sizeof(int)));
  CHECK(cudaMalloc(&d_out, threads * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), threads * sizeof(int), cudaMemcpyHostToDevice));
  diverge<<<1, threads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, threads * sizeof(int), cudaMemcpyDeviceToHost));
  expect_equal("divergent results", out.data(), want.data(), threads);
  return report("warp_divergence");
}
