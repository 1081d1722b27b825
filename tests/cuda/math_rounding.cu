// Arithmetic with explicit rounding modes: __fadd/__fmul/__fmaf/__fdiv/__frcp/__fsqrt in
// _rn, _rz, _ru, _rd, the double forms __dadd/__dmul/__fma/__ddiv, and conversions
// __double2float_r*, __float2int_r*, __int2float_r*, __ll2double_r*, checked bit for bit
// against the host computing the same operations under fesetround.
#include <cfenv>
#include <cmath>
#include <vector>

#include "check.h"

constexpr int kOps = 12;

#define ALL_MODES(F, ...)                                                                          \
  { F##_rn(__VA_ARGS__), F##_rz(__VA_ARGS__), F##_ru(__VA_ARGS__), F##_rd(__VA_ARGS__) }

__global__ void rounded(const float* a, const float* b, const float* c, const double* d,
                        const long long* l, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i];
  double dx = d[i], dy = double(y) / 3.0;
  double r[kOps][4] = {ALL_MODES(__fadd, x, y),
                       ALL_MODES(__fmul, x, y),
                       ALL_MODES(__fmaf, x, y, z),
                       ALL_MODES(__fdiv, x, y),
                       ALL_MODES(__frcp, y),
                       ALL_MODES(__fsqrt, fabsf(x)),
                       ALL_MODES(__dadd, dx, dy),
                       ALL_MODES(__dmul, dx, dy),
                       ALL_MODES(__fma, dx, dy, dx),
                       ALL_MODES(__double2float, dx * 1.0000001),
                       ALL_MODES(__float2int, x * 1000.0f),
                       ALL_MODES(__ll2double, l[i])};
  for (int k = 0; k < kOps; ++k)
    for (int m = 0; m < 4; ++m)
      out[(i * kOps + k) * 4 + m] = r[k][m];
}

int main() {
  const int n = 512;
  std::vector<float> a(n), b(n), c(n);
  std::vector<double> d(n), out(n * kOps * 4), want(n * kOps * 4);
  std::vector<long long> l(n);
  unsigned s = 12345;
  auto next = [&] { return s = s * 1664525u + 1013904223u; };
  for (int i = 0; i < n; ++i) {
    // Magnitudes between 1/16 and 16: a*b+c is exact in 64 bits, so the host's long double
    // fma rounds only once.
    a[i] =
        ldexpf(1.0f + float(next() >> 9) / (1 << 23), int(next() % 9) - 4) * (next() & 1 ? 1 : -1);
    b[i] = ldexpf(1.0f + float(next() >> 9) / (1 << 23), int(next() % 9) - 4);
    c[i] =
        ldexpf(1.0f + float(next() >> 9) / (1 << 23), int(next() % 9) - 4) * (next() & 1 ? 1 : -1);
    d[i] = double(a[i]) * (1.0 + double(next()) / 4294967296.0 / 1024.0);
    l[i] = ((long long)next() << 31 | next()) * (i % 2 ? -1 : 1);
  }
  const int modes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
  for (int m = 0; m < 4; ++m) {
    for (int i = 0; i < n; ++i) {
      fesetround(FE_TONEAREST); // the operands the device computes in round-to-nearest
      volatile float x = a[i], y = b[i], z = c[i], xk = a[i] * 1000.0f;
      volatile double dx = d[i], dy = double(b[i]) / 3.0, scaled = d[i] * 1.0000001;
      fesetround(modes[m]);
      float fv = float((long double)x * y + z);
      double dv = std::fma((double)dx, (double)dy, (double)dx);
      float rounded_x = m == 0   ? nearbyintf(xk)
                        : m == 1 ? truncf(xk)
                        : m == 2 ? ceilf(xk)
                                 : floorf(xk);
      double r[kOps] = {
          float(x + y),           float(x * y), fv,      float(x / y), float(1.0f / y),
          float(sqrtf(fabsf(x))), dx + dy,      dx * dy, dv,           double(float(scaled)),
          double(int(rounded_x)), double(l[i])};
      for (int k = 0; k < kOps; ++k)
        want[(i * kOps + k) * 4 + m] = r[k];
    }
  }
  fesetround(FE_TONEAREST);
  float *d_a, *d_b, *d_c;
  double *d_d, *d_out;
  long long* d_l;
  CHECK(cudaMalloc(&d_a, n * sizeof(float)));
  CHECK(cudaMalloc(&d_b, n * sizeof(float)));
  CHECK(cudaMalloc(&d_c, n * sizeof(float)));
  CHECK(cudaMalloc(&d_d, n * sizeof(double)));
  CHECK(cudaMalloc(&d_l, n * sizeof(long long)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(double)));
  CHECK(cudaMemcpy(d_a, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_b, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_c, c.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_d, d.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_l, l.data(), n * sizeof(long long), cudaMemcpyHostToDevice));
  rounded<<<(n + 127) / 128, 128>>>(d_a, d_b, d_c, d_d, d_l, d_out, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(double), cudaMemcpyDeviceToHost));
  const char* names[kOps] = {"fadd", "fmul", "fmaf", "fdiv",         "frcp",      "fsqrt",
                             "dadd", "dmul", "fma",  "double2float", "float2int", "ll2double"};
  const char* mode_names[4] = {"rn", "rz", "ru", "rd"};
  for (int k = 0; k < kOps; ++k)
    for (int m = 0; m < 4; ++m) {
      std::vector<double> g, w;
      for (int i = 0; i < n; ++i)
        g.push_back(out[(i * kOps + k) * 4 + m]), w.push_back(want[(i * kOps + k) * 4 + m]);
      char name[32];
      snprintf(name, sizeof name, "%s_%s", names[k], mode_names[m]);
      expect_equal(name, g.data(), w.data(), n);
    }
  return report("math_rounding");
}
