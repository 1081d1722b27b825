// redux.sync on f32 (sm_100a): min and max over the warp, with .abs and .NaN, including
// signed zeros, infinities and NaN lanes, and over a partial member mask.
// nvcc-flags: -gencode arch=compute_100a,code=[sm_100a,compute_100a]
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "check.h"

constexpr int kOps = 7;

__global__ void reduce(const float* in, float* out) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float v = in[threadIdx.x], r[kOps];
  asm volatile("redux.sync.min.f32 %0, %1, 0xffffffff;" : "=f"(r[0]) : "f"(v));
  asm volatile("redux.sync.max.f32 %0, %1, 0xffffffff;" : "=f"(r[1]) : "f"(v));
  asm volatile("redux.sync.min.abs.f32 %0, %1, 0xffffffff;" : "=f"(r[2]) : "f"(v));
  asm volatile("redux.sync.max.abs.f32 %0, %1, 0xffffffff;" : "=f"(r[3]) : "f"(v));
  asm volatile("redux.sync.min.NaN.f32 %0, %1, 0xffffffff;" : "=f"(r[4]) : "f"(v));
  asm volatile("redux.sync.max.abs.NaN.f32 %0, %1, 0xffffffff;" : "=f"(r[5]) : "f"(v));
  r[6] = 0;
  if (lane % 2)
    asm volatile("redux.sync.max.f32 %0, %1, 0xaaaaaaaa;" : "=f"(r[6]) : "f"(v));
  if (lane == 1)
    for (int k = 0; k < kOps; ++k)
      out[warp * kOps + k] = r[k];
}

static uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Reference: -0 orders below +0; NaN lanes are skipped unless .NaN, which makes the result
// the canonical NaN.
static float ref(const float* v, unsigned mask, bool max, bool abs, bool nan) {
  bool any = false, seen_nan = false;
  float acc = 0;
  for (int l = 0; l < 32; ++l) {
    if (!(mask >> l & 1))
      continue;
    float x = abs ? std::fabs(v[l]) : v[l];
    if (std::isnan(x)) {
      seen_nan = true;
      continue;
    }
    auto key = [](float f) { return f == 0 ? (std::signbit(f) ? -0.5 : 0.5) * 1e-300 : double(f); };
    if (!any || (max ? key(x) > key(acc) : key(x) < key(acc)))
      acc = x;
    any = true;
  }
  if (!any || (seen_nan && nan)) {
    uint32_t q = 0x7fffffff;
    std::memcpy(&acc, &q, 4);
  }
  return acc;
}

int main() {
  const int warps = 4;
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> in(32 * warps);
  for (int i = 0; i < 32 * warps; ++i)
    in[i] = float((i * 37) % 61) - 30.5f;
  in[3] = -0.0f; // warp 0: zeros of both signs with nothing smaller in magnitude
  in[4] = 0.0f;
  in[32 + 5] = -inf; // warp 1: infinities
  in[32 + 9] = inf;
  in[64 + 7] = nan; // warp 2: a NaN on an even lane (outside the odd mask)
  in[96 + 11] = nan; // warp 3: a NaN on an odd lane
  in[96 + 12] = -1e30f;
  float *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, in.size() * 4));
  CHECK(cudaMalloc(&d_out, warps * kOps * 4));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
  reduce<<<1, 32 * warps>>>(d_in, d_out);
  CHECK_LAUNCH();
  std::vector<float> out(warps * kOps);
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<uint32_t> got, want;
  for (int w = 0; w < warps; ++w) {
    const float* v = &in[w * 32];
    float r[kOps] = {ref(v, ~0u, false, false, false), ref(v, ~0u, true, false, false),
                     ref(v, ~0u, false, true, false),  ref(v, ~0u, true, true, false),
                     ref(v, ~0u, false, false, true),  ref(v, ~0u, true, true, true),
                     ref(v, 0xaaaaaaaau, true, false, false)};
    for (int k = 0; k < kOps; ++k) {
      got.push_back(bits(out[w * kOps + k]));
      want.push_back(bits(r[k]));
    }
  }
  expect_equal("redux.f32", got.data(), want.data(), got.size());
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  return report("warp_redux_f32");
}
