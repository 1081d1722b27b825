// cooperative_groups reductions and scans: cg::reduce with plus, less, greater, bit_and,
// bit_or and bit_xor over tiles of 32 and 8 threads, cg::inclusive_scan and
// cg::exclusive_scan over tiles of 16, all compared with host loops.
// variants: debug
// nvcc-flags: -arch=sm_80
#include <algorithm>
#include <climits>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <vector>

#include "check.h"

namespace cg = cooperative_groups;
constexpr int kOut = 9;

__global__ void reductions(const int* in, const float* fin, int* out, float* fout) {
  auto block = cg::this_thread_block();
  auto t32 = cg::tiled_partition<32>(block);
  auto t8 = cg::tiled_partition<8>(block);
  auto t16 = cg::tiled_partition<16>(block);
  int r = block.thread_rank();
  int v = in[r];
  unsigned u = unsigned(v) * 0x9e3779b9u;
  int* o = out + r * kOut;
  o[0] = cg::reduce(t32, v, cg::plus<int>());
  o[1] = cg::reduce(t32, v, cg::less<int>());
  o[2] = cg::reduce(t8, v, cg::greater<int>());
  o[3] = int(cg::reduce(t32, u, cg::bit_and<unsigned>()));
  o[4] = int(cg::reduce(t8, u, cg::bit_or<unsigned>()));
  o[5] = int(cg::reduce(t32, u, cg::bit_xor<unsigned>()));
  o[6] = cg::inclusive_scan(t16, v);
  o[7] = cg::exclusive_scan(t16, v, cg::plus<int>());
  o[8] = cg::inclusive_scan(t16, v, cg::greater<int>());
  fout[r] = cg::reduce(t32, fin[r], cg::plus<float>());
}

int main() {
  const int threads = 96;
  std::vector<int> in(threads), out(threads * kOut), want(threads * kOut);
  std::vector<float> fin(threads), fout(threads), fwant(threads);
  for (int i = 0; i < threads; ++i)
    in[i] = (i * 7919) % 1001 - 500, fin[i] = (i % 16) * 0.25f;
  for (int r = 0; r < threads; ++r) {
    int* w = &want[r * kOut];
    int b32 = r & ~31, b8 = r & ~7, b16 = r & ~15;
    int sum = 0, mn = INT_MAX, mx8 = INT_MIN;
    unsigned a = ~0u, o8 = 0, x = 0;
    float fs = 0;
    for (int i = b32; i < b32 + 32; ++i) {
      unsigned u = unsigned(in[i]) * 0x9e3779b9u;
      sum += in[i], mn = std::min(mn, in[i]), a &= u, x ^= u, fs += fin[i];
    }
    for (int i = b8; i < b8 + 8; ++i)
      mx8 = std::max(mx8, in[i]), o8 |= unsigned(in[i]) * 0x9e3779b9u;
    int inc = 0, exc = 0, run_max = INT_MIN;
    for (int i = b16; i <= r; ++i) {
      inc += in[i], run_max = std::max(run_max, in[i]);
      if (i < r) exc += in[i];
    }
    int v[kOut] = {sum, mn, mx8, int(a), int(o8), int(x), inc, exc, run_max};
    std::copy(v, v + kOut, w);
    fwant[r] = fs;
  }
  int *d_in, *d_out;
  float *d_fin, *d_fout;
  CHECK(cudaMalloc(&d_in, threads * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_fin, threads * sizeof(float)));
  CHECK(cudaMalloc(&d_fout, threads * sizeof(float)));
  CHECK(cudaMemcpy(d_in, in.data(), threads * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_fin, fin.data(), threads * sizeof(float), cudaMemcpyHostToDevice));
  reductions<<<1, threads>>>(d_in, d_fin, d_out, d_fout);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(fout.data(), d_fout, threads * sizeof(float), cudaMemcpyDeviceToHost));
  const char* names[kOut] = {"plus",           "less",           "greater (8)",
                             "bit_and",        "bit_or (8)",     "bit_xor",
                             "inclusive_scan", "exclusive_scan", "inclusive max scan"};
  for (int k = 0; k < kOut; ++k) {
    std::vector<int> g, w;
    for (int r = 0; r < threads; ++r)
      g.push_back(out[r * kOut + k]), w.push_back(want[r * kOut + k]);
    expect_equal(names[k], g.data(), w.data(), threads);
  }
  expect_equal("float plus", fout.data(), fwant.data(), threads);
  return report("cg_reduce");
}
