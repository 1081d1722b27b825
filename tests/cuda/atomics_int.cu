// Integer atomics on global memory from many blocks: add, sub, exch, min, max, inc, dec,
// and, or, xor for int, unsigned and 64-bit types. Each result is checked, and so are the
// old values the atomics return (unit increments hand out every ticket exactly once).
#include <algorithm>
#include <vector>

#include "check.h"

struct Counters {
  int add_i, sub_i, min_i, max_i, and_i, or_i, xor_i;
  unsigned add_u, sub_u, min_u, max_u, inc_u, dec_u, exch_u, and_u, or_u, xor_u;
  unsigned long long add_ull, exch_ull, min_ull, max_ull, and_ull, or_ull, xor_ull;
  long long min_ll, max_ll;
};

__global__ void atomics(const int* in, int n, Counters* c, unsigned* tickets, unsigned* exch_old,
                        unsigned long long* exch_old64) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  unsigned u = unsigned(v) * 2654435761u;
  unsigned long long w = (unsigned long long)u << 29 | (unsigned)i;
  tickets[i] = atomicAdd(&c->add_u, 1u);
  atomicAdd(&c->add_i, v);
  atomicSub(&c->sub_i, v);
  atomicSub(&c->sub_u, 3u);
  atomicMin(&c->min_i, v);
  atomicMax(&c->max_i, v);
  atomicMin(&c->min_u, u);
  atomicMax(&c->max_u, u);
  atomicMin(&c->min_ull, w);
  atomicMax(&c->max_ull, w);
  atomicMin(&c->min_ll, (long long)v * -1000000007LL);
  atomicMax(&c->max_ll, (long long)v * -1000000007LL);
  atomicAnd(&c->and_i, ~(1 << (i % 31)) | (v & 1));
  atomicOr(&c->or_i, 1 << (i % 29));
  atomicXor(&c->xor_i, v);
  atomicAnd(&c->and_u, u | 0x80000001u);
  atomicOr(&c->or_u, u & 0x0f0f0f0fu);
  atomicXor(&c->xor_u, u);
  atomicAnd(&c->and_ull, ~(1ull << (i % 64)));
  atomicOr(&c->or_ull, 1ull << (i % 61));
  atomicXor(&c->xor_ull, w);
  atomicAdd(&c->add_ull, w);
  atomicInc(&c->inc_u, 12u);
  atomicDec(&c->dec_u, 12u);
  exch_old[i] = atomicExch(&c->exch_u, unsigned(i + 1));
  exch_old64[i] = atomicExch(&c->exch_ull, (unsigned long long)(i + 1) << 33);
}

int main() {
  const int n = 20000;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i)
    in[i] = (i * 7919) % 20011 - 10000;
  Counters init{}, want{};
  init.min_i = init.min_u = 0x7fffffff;
  init.max_i = -0x7fffffff;
  init.min_ull = ~0ull;
  init.min_ll = 0x7fffffffffffffffLL;
  init.max_ll = -0x7fffffffffffffffLL;
  init.and_i = -1, init.and_u = ~0u, init.and_ull = ~0ull;
  init.sub_u = 5u;
  init.dec_u = 0;
  want = init;
  for (int i = 0; i < n; ++i) {
    int v = in[i];
    unsigned u = unsigned(v) * 2654435761u;
    unsigned long long w = (unsigned long long)u << 29 | (unsigned)i;
    long long l = (long long)v * -1000000007LL;
    want.add_u += 1, want.add_i += v, want.sub_i -= v, want.sub_u -= 3u;
    want.min_i = std::min(want.min_i, v), want.max_i = std::max(want.max_i, v);
    want.min_u = std::min(want.min_u, u), want.max_u = std::max(want.max_u, u);
    want.min_ull = std::min(want.min_ull, w), want.max_ull = std::max(want.max_ull, w);
    want.min_ll = std::min(want.min_ll, l), want.max_ll = std::max(want.max_ll, l);
    want.and_i &= ~(1 << (i % 31)) | (v & 1), want.or_i |= 1 << (i % 29), want.xor_i ^= v;
    want.and_u &= u | 0x80000001u, want.or_u |= u & 0x0f0f0f0fu, want.xor_u ^= u;
    want.and_ull &= ~(1ull << (i % 64)), want.or_ull |= 1ull << (i % 61), want.xor_ull ^= w;
    want.add_ull += w;
    want.inc_u = want.inc_u >= 12u ? 0 : want.inc_u + 1;
    want.dec_u = (want.dec_u == 0 || want.dec_u > 12u) ? 12u : want.dec_u - 1;
  }
  int* d_in;
  Counters* d_c;
  unsigned *d_tickets, *d_old;
  unsigned long long* d_old64;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_c, sizeof(Counters)));
  CHECK(cudaMalloc(&d_tickets, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_old, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_old64, n * sizeof(unsigned long long)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_c, &init, sizeof init, cudaMemcpyHostToDevice));
  atomics<<<(n + 127) / 128, 128>>>(d_in, n, d_c, d_tickets, d_old, d_old64);
  CHECK_LAUNCH();
  Counters got;
  std::vector<unsigned> tickets(n), olds(n);
  std::vector<unsigned long long> olds64(n);
  CHECK(cudaMemcpy(&got, d_c, sizeof got, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(tickets.data(), d_tickets, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(olds.data(), d_old, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(olds64.data(), d_old64, n * 8, cudaMemcpyDeviceToHost));
  // Compare member by member so a difference is named.
#define FIELD(f) expect_value(#f, got.f, want.f)
  FIELD(add_i), FIELD(sub_i), FIELD(min_i), FIELD(max_i), FIELD(and_i), FIELD(or_i), FIELD(xor_i);
  FIELD(add_u), FIELD(sub_u), FIELD(min_u), FIELD(max_u), FIELD(inc_u), FIELD(dec_u);
  FIELD(and_u), FIELD(or_u), FIELD(xor_u), FIELD(add_ull), FIELD(min_ull), FIELD(max_ull);
  FIELD(and_ull), FIELD(or_ull), FIELD(xor_ull), FIELD(min_ll), FIELD(max_ll);
  // Tickets: a permutation of 0..n-1. Exchanges: the old values and the final value are
  // exactly the initial value and every value written.
  std::sort(tickets.begin(), tickets.end());
  std::vector<unsigned> seq(n);
  for (int i = 0; i < n; ++i)
    seq[i] = i;
  expect_equal("sorted tickets", tickets.data(), seq.data(), n);
  olds.push_back(got.exch_u);
  std::sort(olds.begin(), olds.end());
  seq.push_back(n);
  expect_equal("exchanged values", olds.data(), seq.data(), n + 1);
  olds64.push_back(got.exch_ull);
  std::sort(olds64.begin(), olds64.end());
  std::vector<unsigned long long> seq64(n + 1);
  for (int i = 0; i <= n; ++i)
    seq64[i] = (unsigned long long)i << 33;
  expect_equal("exchanged 64-bit values", olds64.data(), seq64.data(), n + 1);
  return report("atomics_int");
}
