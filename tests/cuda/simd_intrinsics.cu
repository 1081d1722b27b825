// SIMD-within-a-word intrinsics on 2x16 and 4x8 lanes: __vadd2/4, __vsub2/4, __vaddss4,
// __vabsdiffu4, __vmaxu4, __vmins2, __vcmpeq4, __vcmpgtu2, __vavgu4, __vsads4 and __vneg2,
// against per-lane host loops written from their definitions.
// nvcc-flags: -arch=sm_90
#include <vector>

#include "check.h"

constexpr int kOps = 12;

__global__ void simd(const unsigned* a, const unsigned* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  unsigned r[kOps] = {__vadd2(x, y),    __vadd4(x, y),   __vsub2(x, y),
                      __vsub4(x, y),    __vaddss4(x, y), __vabsdiffu4(x, y),
                      __vmaxu4(x, y),   __vmins2(x, y),  __vcmpeq4(x, y ^ (x & 0x00ff00ffu)),
                      __vcmpgtu2(x, y), __vavgu4(x, y),  __vsads4(x, y) ^ (__vneg2(x) << 1)};
  for (int k = 0; k < kOps; ++k)
    out[i * kOps + k] = r[k];
}

template <int Bits, typename F> static unsigned lanes(unsigned x, unsigned y, F f) {
  unsigned r = 0, mask = (1u << Bits) - 1;
  for (int s = 0; s < 32; s += Bits)
    r |= (unsigned(f((x >> s) & mask, (y >> s) & mask)) & mask) << s;
  return r;
}

template <int Bits> static int sx(unsigned v) {
  return int(v << (32 - Bits)) >> (32 - Bits);
}

static unsigned sat8(int v) {
  return unsigned(v < -128 ? -128 : v > 127 ? 127 : v);
}

int main() {
  const int n = 800;
  std::vector<unsigned> a(n), b(n), out(n * kOps), want(n * kOps);
  unsigned s = 2463534242u;
  for (int i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5, a[i] = s;
    s ^= s << 13, s ^= s >> 17, s ^= s << 5, b[i] = i % 5 == 0 ? a[i] ^ 0x00ff0000u : s;
  }
  for (int i = 0; i < n; ++i) {
    unsigned x = a[i], y = b[i];
    unsigned sads = 0;
    for (int k = 0; k < 4; ++k)
      sads += unsigned(abs(sx<8>((x >> 8 * k) & 0xff) - sx<8>((y >> 8 * k) & 0xff)));
    unsigned r[kOps] = {
        lanes<16>(x, y, [](unsigned p, unsigned q) { return p + q; }),
        lanes<8>(x, y, [](unsigned p, unsigned q) { return p + q; }),
        lanes<16>(x, y, [](unsigned p, unsigned q) { return p - q; }),
        lanes<8>(x, y, [](unsigned p, unsigned q) { return p - q; }),
        lanes<8>(x, y, [](unsigned p, unsigned q) { return sat8(sx<8>(p) + sx<8>(q)); }),
        lanes<8>(x, y, [](unsigned p, unsigned q) { return p > q ? p - q : q - p; }),
        lanes<8>(x, y, [](unsigned p, unsigned q) { return p > q ? p : q; }),
        lanes<16>(x, y,
                  [](unsigned p, unsigned q) { return unsigned(sx<16>(p) < sx<16>(q) ? p : q); }),
        lanes<8>(x, y ^ (x & 0x00ff00ffu),
                 [](unsigned p, unsigned q) { return p == q ? 0xffu : 0u; }),
        lanes<16>(x, y, [](unsigned p, unsigned q) { return p > q ? 0xffffu : 0u; }),
        lanes<8>(x, y, [](unsigned p, unsigned q) { return (p + q + 1) / 2; }),
        sads ^ (lanes<16>(x, 0, [](unsigned p, unsigned) { return unsigned(-sx<16>(p)); }) << 1)};
    for (int k = 0; k < kOps; ++k)
      want[i * kOps + k] = r[k];
  }
  unsigned *d_a, *d_b, *d_out;
  CHECK(cudaMalloc(&d_a, n * 4));
  CHECK(cudaMalloc(&d_b, n * 4));
  CHECK(cudaMalloc(&d_out, out.size() * 4));
  CHECK(cudaMemcpy(d_a, a.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_b, b.data(), n * 4, cudaMemcpyHostToDevice));
  simd<<<(n + 127) / 128, 128>>>(d_a, d_b, d_out, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
  const char* names[kOps] = {"vadd2",  "vadd4",  "vsub2",   "vsub4",    "vaddss4", "vabsdiffu4",
                             "vmaxu4", "vmins2", "vcmpeq4", "vcmpgtu2", "vavgu4",  "vsads4^vneg2"};
  for (int k = 0; k < kOps; ++k) {
    std::vector<unsigned> g, w;
    for (int i = 0; i < n; ++i)
      g.push_back(out[i * kOps + k]), w.push_back(want[i * kOps + k]);
    expect_equal(names[k], g.data(), w.data(), n);
  }
  return report("simd_intrinsics");
}
