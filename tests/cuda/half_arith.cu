// __half and __half2 arithmetic (cuda_fp16.h): add, sub, mul, fma, neg, abs, min, max,
// division and comparisons, scalar and packed, against a host reference computed exactly in
// double and rounded once to half (inputs are multiples of 1/16, so it is exact).
// nvcc-flags: -arch=sm_75
#include <algorithm>
#include <cuda_fp16.h>
#include <vector>

#include "check.h"

constexpr int kOps = 14;

__global__ void half_ops(const float* x, const float* y, const float* z, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half a = __float2half_rn(x[i]), b = __float2half_rn(y[i]), c = __float2half_rn(z[i]);
  __half2 a2 = __halves2half2(a, b), b2 = __halves2half2(b, c), c2 = __halves2half2(c, a);
  __half2 s2 = __hadd2(a2, b2), m2 = __hmul2(a2, b2), f2 = __hfma2(a2, b2, c2);
  __half2 d2 = __hsub2(a2, b2);
  float* o = out + i * kOps;
  o[0] = __half2float(__hadd(a, b));
  o[1] = __half2float(__hsub(a, b));
  o[2] = __half2float(__hmul(a, b));
  o[3] = __half2float(__hfma(a, b, c));
  o[4] = __half2float(__hneg(a)) + 100.0f * __half2float(__habs(b));
  o[5] = __half2float(__hmin(a, b)) * 1000.0f + __half2float(__hmax(b, c));
  o[6] = __low2float(s2) + 1000.0f * __high2float(s2);
  o[7] = __low2float(m2);
  o[8] = __high2float(m2);
  o[9] = __low2float(f2);
  o[10] = __high2float(f2);
  o[11] = __low2float(d2) - __high2float(d2) * 1000.0f;
  o[12] = __heq(a, b) + 2 * __hlt(a, b) + 4 * __hge(b, c) + 8 * __hne(a, c);
  o[13] = __half2float(__hdiv(a, __hadd(__habs(b), __float2half(0.0625f))));
}

static double h(double v) {
  return double(__half2float(__double2half(v)));
}

int main() {
  const int n = 257 * 3;
  std::vector<float> x(n), y(n), z(n), out(n * kOps), want(n * kOps);
  for (int i = 0; i < n; ++i) {
    x[i] = float((i * 37) % 257 - 128) / 16, y[i] = float((i * 91) % 255 - 127) / 16;
    z[i] = float((i * 53) % 253 - 126) / 16;
  }
  for (int i = 0; i < n; ++i) {
    double a = x[i], b = y[i], c = z[i];
    std::vector<double> v = {h(a + b),
                             h(a - b),
                             h(a * b),
                             h(a * b + c),
                             -a + 100 * fabs(b),
                             std::min(a, b) * 1000 + std::max(b, c),
                             h(a + b) + 1000 * h(b + c),
                             h(a * b),
                             h(b * c),
                             h(a * b + c),
                             h(b * c + a),
                             h(a - b) - 1000 * h(b - c),
                             double((a == b) + 2 * (a < b) + 4 * (b >= c) + 8 * (a != c)),
                             h(a / (fabs(b) + 0.0625))};
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
  half_ops<<<(n + 127) / 128, 128>>>(d_x, d_y, d_z, d_out, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const char* names[kOps] = {"hadd",      "hsub",  "hmul",        "hfma",     "hneg/habs",
                             "hmin/hmax", "hadd2", "hmul2.lo",    "hmul2.hi", "hfma2.lo",
                             "hfma2.hi",  "hsub2", "comparisons", "hdiv"};
  for (int k = 0; k < kOps; ++k) {
    std::vector<float> g, w;
    for (int i = 0; i < n; ++i)
      g.push_back(out[i * kOps + k]), w.push_back(want[i * kOps + k]);
    // __hdiv may differ from the correctly rounded quotient by one unit in the last place.
    expect_near(names[k], g.data(), w.data(), n, k == 13 ? 1.0 / 1024 : 0, k == 13);
  }
  return report("half_arith");
}
