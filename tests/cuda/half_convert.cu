// Conversions between half, float, double and integers in every rounding mode
// (__float2half_rn/rz/rd/ru, __half2int_rn/rz/rd/ru, __int2half_rn, __double2half,
// __half_as_ushort ...) over specials (zeros, subnormals, overflow, infinities, NaN), and
// __hisnan/__hisinf. The expected bits are those of the same conversions done by the host
// side of cuda_fp16.h (software, exact), spot-checked against literal values.
// nvcc-flags: -arch=sm_86
#include <cmath>
#include <cuda_fp16.h>
#include <vector>

#include "check.h"

constexpr int kOut = 13;

__host__ __device__ void convert(float f, double d, int k, unsigned short* o) {
  o[0] = __half_as_ushort(__float2half_rn(f));
  o[1] = __half_as_ushort(__float2half_rz(f));
  o[2] = __half_as_ushort(__float2half_rd(f));
  o[3] = __half_as_ushort(__float2half_ru(f));
  o[4] = __half_as_ushort(__double2half(d));
  __half h = __float2half_rn(f);
  bool finite = !__hisnan(h) && !__hisinf(h);
#ifdef __CUDA_ARCH__
  int rn = __half2int_rn(h), rz = __half2int_rz(h), rd = __half2int_rd(h), ru = __half2int_ru(h);
#else // the half->int intrinsics are device-only; a half's value is exact as a float
  float v = __half2float(h);
  int rn = int(std::nearbyint(v)), rz = int(std::trunc(v)), rd = int(std::floor(v));
  int ru = int(std::ceil(v));
#endif
  o[5] = finite ? (unsigned short)rn : 0;
  o[6] = finite ? (unsigned short)rz : 0;
  o[7] = finite ? (unsigned short)rd : 0;
  o[8] = finite ? (unsigned short)ru : 0;
  o[9] = __half_as_ushort(__int2half_rn(k));
  o[10] = __half_as_ushort(__uint2half_rn(unsigned(k) * 977u));
  o[11] = __hisnan(h) * 2 + (__hisinf(h) != 0);
  o[12] = __half_as_ushort(__ushort_as_half((unsigned short)(k * 41))) ^ 0x8000u;
}

__global__ void convert_all(const float* f, const double* d, const int* k, unsigned short* out,
                            int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) convert(f[i], d[i], k[i], out + i * kOut);
}

int main() {
  std::vector<float> f = {
      0.0f,      -0.0f,    1.0f,           -1.0f,         0.1f,         -0.1f,    65504.0f,
      65519.0f,  65520.0f, -70000.0f,      1e-7f,         -3e-8f,       5.96e-8f, 2.5f,
      3.5f,      -2.5f,    1.00048828125f, 1.0009765625f, 0.33333334f,  1e30f,    INFINITY,
      -INFINITY, NAN,      6.1e-5f,        1234.567f,     -0.49999997f, 32767.5f, 2049.0f};
  for (int i = 0; i < 200; ++i)
    f.push_back((i - 100) * 7.3f + i * 0.0013f);
  int n = int(f.size());
  std::vector<double> d(n);
  std::vector<int> k(n);
  for (int i = 0; i < n; ++i)
    d[i] = double(f[i]) * (1 + 1e-9), k[i] = (i * 7919) % 140001 - 70000;
  std::vector<unsigned short> out(n * kOut), want(n * kOut);
  for (int i = 0; i < n; ++i)
    convert(f[i], d[i], k[i], &want[i * kOut]);
  // Spot checks of the host reference itself.
  EXPECT(want[2 * kOut + 0] == 0x3c00); // 1.0
  EXPECT(want[7 * kOut + 0] == 0x7bff &&
         want[8 * kOut + 0] == 0x7c00);                         // 65519 -> max, 65520 -> inf
  EXPECT(want[8 * kOut + 1] == 0x7bff);                         // rz never overflows to inf
  EXPECT(want[13 * kOut + 5] == 2 && want[14 * kOut + 5] == 4); // ties to even
  EXPECT(want[16 * kOut + 0] == 0x3c00 && want[16 * kOut + 3] == 0x3c01);
  float* d_f;
  double* d_d;
  int* d_k;
  unsigned short* d_out;
  CHECK(cudaMalloc(&d_f, n * sizeof(float)));
  CHECK(cudaMalloc(&d_d, n * sizeof(double)));
  CHECK(cudaMalloc(&d_k, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(unsigned short)));
  CHECK(cudaMemcpy(d_f, f.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_d, d.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_k, k.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  convert_all<<<(n + 63) / 64, 64>>>(d_f, d_d, d_k, d_out, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(unsigned short), cudaMemcpyDeviceToHost));
  const char* names[kOut] = {"float2half_rn", "float2half_rz", "float2half_rd", "float2half_ru",
                             "double2half",   "half2int_rn",   "half2int_rz",   "half2int_rd",
                             "half2int_ru",   "int2half_rn",   "uint2half_rn",  "isnan/isinf",
                             "ushort_as_half"};
  for (int c = 0; c < kOut; ++c) {
    std::vector<unsigned short> g, w;
    for (int i = 0; i < n; ++i)
      g.push_back(out[i * kOut + c]), w.push_back(want[i * kOut + c]);
    if (c > 4) // conversions to half: any NaN matches any NaN
      expect_equal(names[c], g.data(), w.data(), n);
    else {
      for (int i = 0; i < n; ++i)
        if ((g[i] & 0x7fff) > 0x7c00 && (w[i] & 0x7fff) > 0x7c00) g[i] = w[i];
      expect_equal(names[c], g.data(), w.data(), n);
    }
  }
  return report("half_convert");
}
