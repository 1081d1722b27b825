// Warp shuffles: __shfl_sync, __shfl_up_sync, __shfl_down_sync and __shfl_xor_sync for
// every width from 32 to 2, source lanes past the width, 32- and 64-bit values, and a
// shuffle among the lower half-warp only (partial member mask), and constant distances
// in a block whose last warp has 16 lanes (sources past the block). The host reference
// follows the PTX ISA's shfl.sync definition (segments, clamps, own value when out of range).
// variants: debug
#include <vector>

#include "check.h"

constexpr int kModes = 4, kWidths = 5;

__global__ void shuffles(int* out, double* dout, int* half_out) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int v = lane * 10 + warp * 1000 + 7;
  double d = v + 0.5;
  const int widths[kWidths] = {32, 16, 8, 4, 2};
  for (int w = 0; w < kWidths; ++w) {
    int width = widths[w];
    int* o = out + ((warp * kWidths + w) * kModes) * 32;
    int src = (lane * 7 + 3) % 37; // sometimes past the width
    o[0 * 32 + lane] = __shfl_sync(0xffffffffu, v, src, width);
    o[1 * 32 + lane] = __shfl_up_sync(0xffffffffu, v, 1 + w % 3, width);
    o[2 * 32 + lane] = __shfl_down_sync(0xffffffffu, v, 1 + w % 2, width);
    o[3 * 32 + lane] = __shfl_xor_sync(0xffffffffu, v, width / 2, width);
    dout[(warp * kWidths + w) * 32 + lane] = __shfl_sync(0xffffffffu, d, 31 - lane, width);
  }
  if (lane < 16) {
    int s = v;
    for (int m = 8; m > 0; m /= 2)
      s += __shfl_xor_sync(0x0000ffffu, s, m, 16);
    half_out[warp * 16 + lane] = s;
  }
}

// A block of 48 threads: the second warp has lanes 0-15 only. Shuffles at constant
// distances within segments of 16 lanes (a butterfly sum, down by 3, up by 5) never name a
// lane past the block as their source, but a lane's neighbour at that distance may be.
__global__ void partial_warp(int* out) {
  int t = threadIdx.x, lane = t % 32;
  unsigned mask = t < 32 ? 0xffffffffu : 0x0000ffffu;
  int v = t * 3 + 1, s = v;
  for (int m = 8; m > 0; m /= 2)
    s += __shfl_xor_sync(mask, s, m, 16);
  out[0 * 48 + t] = s;
  out[1 * 48 + t] = __shfl_down_sync(mask, v, 3, 16);
  out[2 * 48 + t] = __shfl_up_sync(mask, v, 5, 16);
  (void)lane;
}

// shfl.sync's source lane and whether it is in range (PTX ISA, shfl.sync).
static int shfl_source(int mode, int lane, int b, int width) {
  b &= 31; // shfl uses the low five bits of the lane operand
  int seg_mask = (32 - width) & 31, clamp = mode == 1 ? 0 : 31;
  int min_lane = lane & seg_mask, max_lane = min_lane | (clamp & ~seg_mask);
  int j = 0;
  bool ok = false;
  switch (mode) {
  case 0:
    j = min_lane | (b & ~seg_mask), ok = j <= max_lane;
    break;
  case 1:
    j = lane - b, ok = j >= max_lane;
    break;
  case 2:
    j = lane + b, ok = j <= max_lane;
    break;
  case 3:
    j = lane ^ b, ok = j <= max_lane;
    break;
  }
  return ok ? j : lane;
}

int main() {
  const int warps = 2, threads = warps * 32;
  const int widths[kWidths] = {32, 16, 8, 4, 2};
  std::vector<int> out(warps * kWidths * kModes * 32), want(out.size());
  std::vector<double> dout(warps * kWidths * 32), dwant(dout.size());
  std::vector<int> half_out(warps * 16), half_want(warps * 16);
  for (int warp = 0; warp < warps; ++warp) {
    auto val = [&](int l) { return l * 10 + warp * 1000 + 7; };
    for (int w = 0; w < kWidths; ++w)
      for (int lane = 0; lane < 32; ++lane) {
        int width = widths[w], base = ((warp * kWidths + w) * kModes) * 32;
        int b[kModes] = {(lane * 7 + 3) % 37, 1 + w % 3, 1 + w % 2, width / 2};
        for (int m = 0; m < kModes; ++m)
          want[base + m * 32 + lane] = val(shfl_source(m, lane, b[m], width));
        dwant[(warp * kWidths + w) * 32 + lane] = val(shfl_source(0, lane, 31 - lane, width)) + 0.5;
      }
    int sum = 0;
    for (int l = 0; l < 16; ++l)
      sum += val(l);
    for (int l = 0; l < 16; ++l)
      half_want[warp * 16 + l] = sum;
  }
  int *d_out, *d_half;
  double* d_d;
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_d, dout.size() * sizeof(double)));
  CHECK(cudaMalloc(&d_half, half_out.size() * sizeof(int)));
  shuffles<<<1, threads>>>(d_out, d_d, d_half);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(dout.data(), d_d, dout.size() * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(half_out.data(), d_half, half_out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  const char* names[kModes] = {"shfl", "shfl_up", "shfl_down", "shfl_xor"};
  for (int warp = 0; warp < warps; ++warp)
    for (int w = 0; w < kWidths; ++w)
      for (int m = 0; m < kModes; ++m) {
        size_t at = ((warp * kWidths + w) * kModes + m) * 32;
        if (expect_equal(names[m], &out[at], &want[at], 32))
          fprintf(stderr, "  (warp %d, width %d)\n", warp, widths[w]);
      }
  expect_equal("64-bit shfl", dout.data(), dwant.data(), dout.size());

  std::vector<int> partial(3 * 48), partial_want(3 * 48);
  for (int t = 0; t < 48; ++t) {
    auto val = [](int u) { return u * 3 + 1; };
    int segment = t & ~15, sum = 0;
    for (int u = segment; u < segment + 16; ++u)
      sum += val(u);
    partial_want[t] = sum;
    partial_want[48 + t] = val((t % 16) + 3 < 16 ? t + 3 : t);
    partial_want[96 + t] = val((t % 16) >= 5 ? t - 5 : t);
  }
  int* d_partial;
  CHECK(cudaMalloc(&d_partial, partial.size() * sizeof(int)));
  partial_warp<<<1, 48>>>(d_partial);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(partial.data(), d_partial, partial.size() * sizeof(int), cudaMemcpyDeviceToHost));
  expect_equal("partial warp: xor sum", partial.data(), partial_want.data(), 48);
  expect_equal("partial warp: down 3", partial.data() + 48, partial_want.data() + 48, 48);
  expect_equal("partial warp: up 5", partial.data() + 96, partial_want.data() + 96, 48);
  expect_equal("half-warp xor sum", half_out.data(), half_want.data(), half_out.size());
  return report("warp_shfl");
}
