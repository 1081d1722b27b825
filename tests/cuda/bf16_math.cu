// __nv_bfloat16 and __nv_bfloat162 (cuda_bf16.h): conversions from float in each rounding
// mode, arithmetic (add, mul, fma, sub, neg), packed math, comparisons and conversion to
// and from half, against a host reference exact in double and rounded once to bf16.
// nvcc-flags: -arch=sm_80
#include <algorithm>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector>

#include "check.h"

constexpr int kOps = 12;

__global__ void bf16_ops(const float* x, const float* y, const float* z, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nv_bfloat16 a = __float2bfloat16_rn(x[i]), b = __float2bfloat16_rn(y[i]);
  __nv_bfloat16 c = __float2bfloat16_rn(z[i]);
  __nv_bfloat162 a2 = __halves2bfloat162(a, b), b2 = __halves2bfloat162(b, c);
  __nv_bfloat162 f2 = __hfma2(a2, b2, __halves2bfloat162(c, a));
  float* o = out + i * kOps;
  o[0] = __bfloat162float(__hadd(a, b));
  o[1] = __bfloat162float(__hmul(a, b));
  o[2] = __bfloat162float(__hfma(a, b, c));
  o[3] = __bfloat162float(__hsub(a, __hneg(c)));
  o[4] = __low2float(f2);
  o[5] = __high2float(f2);
  o[6] = __low2float(__hmul2(a2, b2)) + 4096.0f * __high2float(__hadd2(a2, b2));
  o[7] = __heq(a, b) + 2 * __hlt(a, c) + 4 * __hgt(b, c);
  float big = x[i] * 1.00390625f + y[i] * 0.0078125f; // exact in float, needs rounding to bf16
  o[8] = __bfloat162float(__float2bfloat16_rn(big));
  o[9] = __bfloat162float(__float2bfloat16_rz(big));
  o[10] = __bfloat162float(__float2bfloat16_rd(big)) - __bfloat162float(__float2bfloat16_ru(big));
  o[11] = __half2float(__float2half(__bfloat162float(__hmax(a, c))));
}

// Round a double to bf16 (nearest even), through float only when exact.
static double r(double v) {
  return double(__bfloat162float(__float2bfloat16_rn(float(v))));
}

int main() {
  const int n = 600;
  std::vector<float> x(n), y(n), z(n), out(n * kOps), want(n * kOps);
  for (int i = 0; i < n; ++i) {
    x[i] = float((i * 37) % 241 - 120) / 8, y[i] = float((i * 91) % 239 - 119) / 8;
    z[i] = float((i * 53) % 233 - 116) / 8;
  }
  for (int i = 0; i < n; ++i) {
    double a = x[i], b = y[i], c = z[i];
    float big = x[i] * 1.00390625f + y[i] * 0.0078125f;
    // Products have at most 16 significant bits, sums a few more: exact in float, so one
    // float->bf16 rounding is the correct rounding of the exact value.
    double v[kOps] = {r(a + b),
                      r(a * b),
                      r(a * b + c),
                      r(a + c),
                      r(a * b + c),
                      r(b * c + a),
                      r(a * b) + 4096 * r(b + c),
                      double((a == b) + 2 * (a < c) + 4 * (b > c)),
                      double(__bfloat162float(__float2bfloat16_rn(big))),
                      double(__bfloat162float(__float2bfloat16_rz(big))),
                      double(__bfloat162float(__float2bfloat16_rd(big))) -
                          double(__bfloat162float(__float2bfloat16_ru(big))),
                      std::max(a, c)};
    for (int k = 0; k < kOps; ++k)
      want[i * kOps + k] = float(v[k]);
  }
  float *d_x, *d_y, *d_z, *d_out;
  CHECK(cudaMalloc(&d_x, n * sizeof(float)));
  CHECK(cudaMalloc(&d_y, n * sizeof(float)));
  CHECK(cudaMalloc(&d_z, n * sizeof(float)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(float)));
  CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_y, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_z, z.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  bf16_ops<<<(n + 127) / 128, 128>>>(d_x, d_y, d_z, d_out, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const char* names[kOps] = {
      "hadd",     "hmul",        "hfma",        "hsub/hneg",         "hfma2.lo",
      "hfma2.hi", "hmul2/hadd2", "comparisons", "float2bfloat16_rn", "float2bfloat16_rz",
      "rd - ru",  "hmax -> half"};
  for (int k = 0; k < kOps; ++k) {
    std::vector<float> g, w;
    for (int i = 0; i < n; ++i)
      g.push_back(out[i * kOps + k]), w.push_back(want[i * kOps + k]);
    expect_equal(names[k], g.data(), w.data(), n);
  }
  return report("bf16_math");
}
