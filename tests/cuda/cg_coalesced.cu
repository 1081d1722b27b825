// cooperative_groups::coalesced_threads in divergent code: warp-aggregated atomics hand
// out unique slots (a stream compaction), the group's rank orders the lanes that took the
// branch, and its leader broadcasts with shfl.
#include <algorithm>
#include <cooperative_groups.h>
#include <vector>

#include "check.h"

namespace cg = cooperative_groups;

__device__ int aggregated_increment(int* counter) {
  cg::coalesced_group g = cg::coalesced_threads();
  int base = 0;
  if (g.thread_rank() == 0) base = atomicAdd(counter, int(g.size()));
  return g.shfl(base, 0) + int(g.thread_rank());
}

__global__ void compact(const int* in, int n, int* out, int* count, int* checks) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x % 32;
  if (i < n && in[i] % 3 != 0) {
    int slot = aggregated_increment(count);
    out[slot] = in[i];
    // Whatever lanes the group holds, it holds this one, and its ranks follow lane order.
    cg::coalesced_group g = cg::coalesced_threads();
    unsigned below = __activemask() & ((1u << lane) - 1);
    bool ok = g.size() >= 1 && g.size() <= 32 && g.thread_rank() == unsigned(__popc(below));
    if (!ok) atomicAdd(checks, 1);
  }
}

int main() {
  const int n = 3000;
  std::vector<int> in(n), want;
  for (int i = 0; i < n; ++i) {
    in[i] = (i * 7919) % 6007;
    if (in[i] % 3 != 0) want.push_back(in[i]);
  }
  int *d_in, *d_out, *d_count, *d_checks;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, n * sizeof(int)));
  CHECK(cudaMalloc(&d_count, sizeof(int)));
  CHECK(cudaMalloc(&d_checks, sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_count, 0, sizeof(int)));
  CHECK(cudaMemset(d_checks, 0, sizeof(int)));
  compact<<<(n + 127) / 128, 128>>>(d_in, n, d_out, d_count, d_checks);
  CHECK_LAUNCH();
  int count = 0, checks = 0;
  CHECK(cudaMemcpy(&count, d_count, sizeof count, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&checks, d_checks, sizeof checks, cudaMemcpyDeviceToHost));
  expect_value("compacted count", count, int(want.size()));
  expect_value("lanes with a wrong group rank", checks, 0);
  if (count == int(want.size())) {
    std::vector<int> out(count);
    CHECK(cudaMemcpy(out.data(), d_out, count * sizeof(int), cudaMemcpyDeviceToHost));
    std::sort(out.begin(), out.end());
    std::sort(want.begin(), want.end());
    expect_equal("compacted values (sorted)", out.data(), want.data(), count);
  }
  return report("cg_coalesced");
}
