// 64- and 128-bit integer arithmetic on the device: long long multiply, divide, remainder
// and shifts (signed and unsigned), __int128 multiply, divide and shifts, __umul64hi and
// __mul64hi, compared with the host's own 128-bit arithmetic.
// nvcc-flags: -arch=sm_90
#include <vector>

#include "check.h"

constexpr int kOut = 12;
typedef unsigned __int128 u128;

__global__ void wide(const unsigned long long* x, const unsigned long long* y,
                     unsigned long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long a = x[i], b = y[i] | 1;
  long long sa = (long long)a, sb = (long long)b;
  unsigned long long* o = out + i * kOut;
  o[0] = a * b;
  o[1] = a / b + a % b;
  o[2] = (unsigned long long)(sa / (sb >> 20 | 1)) ^ (unsigned long long)(sa % 977);
  o[3] = (a << (i % 64)) ^ (a >> (i % 61)) ^ (unsigned long long)(sa >> (i % 63));
  o[4] = __umul64hi(a, b);
  o[5] = (unsigned long long)__mul64hi(sa, sb);
  u128 p = (u128)a * b + (u128)i;
  o[6] = (unsigned long long)p;
  o[7] = (unsigned long long)(p >> 64);
  u128 q = p / ((u128)(b >> 3) + 1);
  o[8] = (unsigned long long)q ^ (unsigned long long)(q >> 64);
  __int128 s = (__int128)sa * -(__int128)sb;
  o[9] = (unsigned long long)(s >> 70) ^ (unsigned long long)(s % 1000003);
  o[10] = (unsigned long long)((p << (i % 100)) >> 37);
  o[11] = (a >> 32) * (b & 0xffffffffu) + (unsigned long long)((long long)(int)a * (int)(b >> 7));
}

static void host_wide(unsigned long long a, unsigned long long b, int i, unsigned long long* o) {
  b |= 1;
  long long sa = (long long)a, sb = (long long)b;
  o[0] = a * b;
  o[1] = a / b + a % b;
  o[2] = (unsigned long long)(sa / (sb >> 20 | 1)) ^ (unsigned long long)(sa % 977);
  o[3] = (a << (i % 64)) ^ (a >> (i % 61)) ^ (unsigned long long)(sa >> (i % 63));
  o[4] = (unsigned long long)(((u128)a * b) >> 64);
  o[5] = (unsigned long long)(((__int128)sa * sb) >> 64);
  u128 p = (u128)a * b + (u128)i;
  o[6] = (unsigned long long)p;
  o[7] = (unsigned long long)(p >> 64);
  u128 q = p / ((u128)(b >> 3) + 1);
  o[8] = (unsigned long long)q ^ (unsigned long long)(q >> 64);
  __int128 s = (__int128)sa * -(__int128)sb;
  o[9] = (unsigned long long)(s >> 70) ^ (unsigned long long)(s % 1000003);
  o[10] = (unsigned long long)((p << (i % 100)) >> 37);
  o[11] = (a >> 32) * (b & 0xffffffffu) + (unsigned long long)((long long)(int)a * (int)(b >> 7));
}

int main() {
  const int n = 500;
  std::vector<unsigned long long> x(n), y(n), out(n * kOut), want(n * kOut);
  unsigned long long s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x[i] = s;
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    y[i] = i % 4 == 0 ? s >> (i % 50) : s;
  }
  x[0] = ~0ull, y[0] = ~0ull, x[1] = 1ull << 63, y[1] = 12345; // extremes (no LLONG_MIN / -1)
  for (int i = 0; i < n; ++i)
    host_wide(x[i], y[i], i, &want[i * kOut]);
  unsigned long long *d_x, *d_y, *d_out;
  CHECK(cudaMalloc(&d_x, n * 8));
  CHECK(cudaMalloc(&d_y, n * 8));
  CHECK(cudaMalloc(&d_out, out.size() * 8));
  CHECK(cudaMemcpy(d_x, x.data(), n * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_y, y.data(), n * 8, cudaMemcpyHostToDevice));
  wide<<<(n + 127) / 128, 128>>>(d_x, d_y, d_out, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * 8, cudaMemcpyDeviceToHost));
  const char* names[kOut] = {"mul",      "udiv+urem",      "sdiv^srem",   "shifts",
                             "umul64hi", "mul64hi",        "u128 mul lo", "u128 mul hi",
                             "u128 div", "i128 shift^rem", "u128 shifts", "mixed"};
  for (int k = 0; k < kOut; ++k) {
    std::vector<unsigned long long> g, w;
    for (int i = 0; i < n; ++i)
      g.push_back(out[i * kOut + k]), w.push_back(want[i * kOut + k]);
    expect_equal(names[k], g.data(), w.data(), n);
  }
  return report("int128");
}
