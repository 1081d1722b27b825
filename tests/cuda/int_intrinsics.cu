// Integer intrinsics against host implementations written from their definitions: __popc,
// __popcll, __clz, __clzll, __ffs, __ffsll, __brev, __brevll, __byte_perm, __funnelshift_l/r
// (wrapping and clamping), __mulhi, __umulhi, __mul64hi, __umul64hi, __sad, __usad, __hadd,
// __rhadd, __uhadd, __dp4a, __dp2a_lo, __mul24 and __umul24.
// nvcc-flags: -arch=sm_75
#include <vector>

#include "check.h"

constexpr int kOps = 24;

__host__ __device__ unsigned brev32(unsigned v) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i)
    r |= ((v >> i) & 1u) << (31 - i);
  return r;
}

#ifdef __CUDA_ARCH__
#define OR_HOST(device, host) (device)
#else
#define OR_HOST(device, host) (host)
#endif

__host__ __device__ void ops(unsigned a, unsigned b, unsigned c, unsigned long long w,
                             unsigned* o) {
  int sa = int(a), sb = int(b);
  unsigned s = b % 40;
  auto popc = [](unsigned long long v) {
    unsigned n = 0;
    for (; v; v &= v - 1)
      ++n;
    return n;
  };
  auto clz = [](unsigned long long v, int bits) {
    int n = 0;
    for (int i = bits - 1; i >= 0 && !((v >> i) & 1); --i)
      ++n;
    return unsigned(n);
  };
  auto ffs = [](unsigned long long v) {
    for (int i = 0; i < 64; ++i)
      if ((v >> i) & 1) return unsigned(i + 1);
    return 0u;
  };
  auto sel = [](unsigned long long x, unsigned s_) {
    return unsigned(x >> (8 * (s_ & 7))) & 0xffu;
  };
  unsigned long long both = (unsigned long long)b << 32 | a;
  unsigned perm = 0;
  for (int k = 0; k < 4; ++k)
    perm |= sel(both, c >> (4 * k)) << (8 * k);
  unsigned fl_wrap = unsigned((((unsigned long long)b << 32 | a) << (s & 31)) >> 32);
  unsigned fl_clamp = unsigned((((unsigned long long)b << 32 | a) << (s > 32 ? 32 : s)) >> 32);
  unsigned fr_wrap = unsigned(((unsigned long long)b << 32 | a) >> (s & 31));
  unsigned fr_clamp = unsigned(((unsigned long long)b << 32 | a) >> (s > 32 ? 32 : s));
  int dp4 = int(c);
  int dp2 = int(c);
  for (int k = 0; k < 4; ++k)
    dp4 += int((signed char)(a >> (8 * k))) * int((signed char)(b >> (8 * k)));
  for (int k = 0; k < 2; ++k)
    dp2 += int((short)(a >> (16 * k))) * int((signed char)(b >> (8 * k)));
  unsigned r[kOps] = {
      OR_HOST(__popc(a), popc(a)),
      OR_HOST(__popcll(w), popc(w)),
      OR_HOST(unsigned(__clz(int(a >> (b % 32)))), clz(a >> (b % 32), 32)),
      OR_HOST(unsigned(__clzll((long long)(w >> (b % 64)))), clz(w >> (b % 64), 64)),
      OR_HOST(unsigned(__ffs(int(a & (a << 3)))), ffs(a & (a << 3))),
      OR_HOST(unsigned(__ffsll((long long)(w & (w << 5)))), ffs(w & (w << 5))),
      OR_HOST(__brev(a), brev32(a)),
      OR_HOST(unsigned(__brevll(w) >> 16), unsigned(((unsigned long long)brev32(unsigned(w)) << 32 |
                                                     brev32(unsigned(w >> 32))) >>
                                                    16)),
      OR_HOST(__byte_perm(a, b, c & 0x7777u), perm), // no selector sign bits
      OR_HOST(__funnelshift_l(a, b, s), fl_wrap),
      OR_HOST(__funnelshift_lc(a, b, s), fl_clamp),
      OR_HOST(__funnelshift_r(a, b, s), fr_wrap),
      OR_HOST(__funnelshift_rc(a, b, s), fr_clamp),
      OR_HOST(unsigned(__mulhi(sa, sb)), unsigned(((long long)sa * sb) >> 32)),
      OR_HOST(__umulhi(a, b), unsigned(((unsigned long long)a * b) >> 32)),
      OR_HOST(unsigned(__mul64hi((long long)w, (long long)(w * 3))),
              unsigned((unsigned long long)(((__int128)(long long)w * (long long)(w * 3)) >> 64))),
      OR_HOST(unsigned(__umul64hi(w, w ^ b) >> 7),
              unsigned((unsigned long long)(((unsigned __int128)w * (w ^ b)) >> 64) >> 7)),
      OR_HOST(__sad(sa, sb, c), unsigned((sa > sb ? (long long)sa - sb : (long long)sb - sa) + c)),
      OR_HOST(__usad(a, b, c), (a > b ? a - b : b - a) + c),
      OR_HOST(unsigned(__hadd(sa, sb)), unsigned(int(((long long)sa + sb) >> 1))),
      OR_HOST(unsigned(__rhadd(sa, sb)), unsigned(int(((long long)sa + sb + 1) >> 1))),
      OR_HOST(__uhadd(a, b) ^ __urhadd(a, c), unsigned(((unsigned long long)a + b) >> 1) ^
                                                  unsigned(((unsigned long long)a + c + 1) >> 1)),
      OR_HOST(unsigned(__dp4a(int(a), int(b), int(c))), unsigned(dp4)),
      OR_HOST(unsigned(__dp2a_lo(int(a), int(b), int(c))) ^ unsigned(__mul24(sa, sb)) ^
                  __umul24(a, c),
              unsigned(dp2) ^ unsigned(((long long)(sa << 8 >> 8) * (sb << 8 >> 8))) ^
                  unsigned((unsigned long long)(a & 0xffffff) * (c & 0xffffff))),
  };
  for (int k = 0; k < kOps; ++k)
    o[k] = r[k];
}

__global__ void run(const unsigned* a, const unsigned* b, const unsigned* c,
                    const unsigned long long* w, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) ops(a[i], b[i], c[i], w[i], out + i * kOps);
}

int main() {
  const int n = 700;
  std::vector<unsigned> a(n), b(n), c(n), out(n * kOps), want(n * kOps);
  std::vector<unsigned long long> w(n);
  unsigned long long s = 88172645463325252ull;
  auto next = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  };
  for (int i = 0; i < n; ++i) {
    a[i] = unsigned(next()), b[i] = unsigned(next() >> 20), c[i] = unsigned(next() >> 3);
    w[i] = next() >> (i % 64);
  }
  a[0] = 0, b[0] = 0, c[0] = 0, w[0] = 0; // zero inputs: clz 32/64, ffs 0
  a[1] = ~0u, b[1] = 0x80000000u, w[1] = ~0ull;
  for (int i = 0; i < n; ++i)
    ops(a[i], b[i], c[i], w[i], &want[i * kOps]);
  unsigned *d_a, *d_b, *d_c, *d_out;
  unsigned long long* d_w;
  CHECK(cudaMalloc(&d_a, n * 4));
  CHECK(cudaMalloc(&d_b, n * 4));
  CHECK(cudaMalloc(&d_c, n * 4));
  CHECK(cudaMalloc(&d_w, n * 8));
  CHECK(cudaMalloc(&d_out, out.size() * 4));
  CHECK(cudaMemcpy(d_a, a.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_b, b.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_c, c.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_w, w.data(), n * 8, cudaMemcpyHostToDevice));
  run<<<(n + 127) / 128, 128>>>(d_a, d_b, d_c, d_w, d_out, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
  const char* names[kOps] = {"popc",
                             "popcll",
                             "clz",
                             "clzll",
                             "ffs",
                             "ffsll",
                             "brev",
                             "brevll",
                             "byte_perm",
                             "funnelshift_l",
                             "funnelshift_lc",
                             "funnelshift_r",
                             "funnelshift_rc",
                             "mulhi",
                             "umulhi",
                             "mul64hi",
                             "umul64hi",
                             "sad",
                             "usad",
                             "hadd",
                             "rhadd",
                             "uhadd^urhadd",
                             "dp4a",
                             "dp2a_lo^mul24^umul24"};
  for (int k = 0; k < kOps; ++k) {
    std::vector<unsigned> g, wv;
    for (int i = 0; i < n; ++i)
      g.push_back(out[i * kOps + k]), wv.push_back(want[i * kOps + k]);
    expect_equal(names[k], g.data(), wv.data(), n);
  }
  return report("int_intrinsics");
}
