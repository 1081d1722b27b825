// Atomics on shared memory: every operation and type a block can use on __shared__
// variables, combined per block and checked against a host reference.
// nvcc-flags: -arch=sm_89
#include <algorithm>
#include <vector>

#include "check.h"

struct Result {
  int add, sub, mn, mx, and_, or_, xor_, cas_count;
  unsigned inc, dec, umin, umax, exch_sum;
  unsigned long long add64, or64, cas64;
  float fadd;
  double dadd;
};

__global__ void shared_atomics(const int* in, Result* out) {
  __shared__ int add, sub, mn, mx, and_, or_, xor_, cas_count;
  __shared__ unsigned inc, dec, umin, umax, exch, exch_sum;
  __shared__ unsigned long long add64, or64, cas64;
  __shared__ float fadd;
  __shared__ double dadd;
  int t = threadIdx.x;
  if (t == 0) {
    add = sub = or_ = xor_ = cas_count = 0, mn = 1 << 30, mx = -(1 << 30), and_ = -1;
    inc = dec = exch = exch_sum = umax = 0, umin = ~0u;
    add64 = or64 = cas64 = 0, fadd = 0, dadd = 0;
  }
  __syncthreads();
  int v = in[blockIdx.x * blockDim.x + t];
  atomicAdd(&add, v);
  atomicSub(&sub, v);
  atomicMin(&mn, v);
  atomicMax(&mx, v);
  atomicAnd(&and_, ~(1 << (t % 32)));
  atomicOr(&or_, 1 << (v & 31));
  atomicXor(&xor_, v);
  atomicInc(&inc, 6u);
  atomicDec(&dec, 6u);
  atomicMin(&umin, unsigned(v) * 40503u);
  atomicMax(&umax, unsigned(v) * 40503u);
  atomicAdd(&exch_sum, atomicExch(&exch, unsigned(t + 1)));
  atomicAdd(&add64, (unsigned long long)(v + 5000) << 20);
  atomicOr(&or64, 1ull << (t % 64));
  atomicAdd(&fadd, 0.25f);
  atomicAdd(&dadd, v * 0.5);
  int old = cas_count, seen;
  while ((seen = atomicCAS(&cas_count, old, old + 3)) != old)
    old = seen;
  unsigned long long old64 = cas64, seen64;
  while ((seen64 = atomicCAS(&cas64, old64, old64 + (1ull << 40))) != old64)
    old64 = seen64;
  __syncthreads();
  if (t == 0) {
    Result r{
        add,   sub,  mn,    mx,   and_, or_, xor_, cas_count, inc, dec, umin, umax, exch_sum + exch,
        add64, or64, cas64, fadd, dadd};
    out[blockIdx.x] = r;
  }
}

int main() {
  const int blocks = 3, threads = 96, n = blocks * threads;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i)
    in[i] = (i * 3571) % 2003 - 1000;
  std::vector<Result> out(blocks);
  int* d_in;
  Result* d_out;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, blocks * sizeof(Result)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  shared_atomics<<<blocks, threads>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, blocks * sizeof(Result), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    Result w{0, 0, 1 << 30, -(1 << 30), -1, 0, 0, 0, 0, 0, ~0u, 0, 0, 0, 0, 0, 0, 0};
    for (int t = 0; t < threads; ++t) {
      int v = in[b * threads + t];
      w.add += v, w.sub -= v, w.mn = std::min(w.mn, v), w.mx = std::max(w.mx, v);
      w.and_ &= ~(1 << (t % 32)), w.or_ |= 1 << (v & 31), w.xor_ ^= v, w.cas_count += 3;
      w.inc = w.inc >= 6 ? 0 : w.inc + 1, w.dec = (w.dec == 0 || w.dec > 6) ? 6 : w.dec - 1;
      w.umin = std::min(w.umin, unsigned(v) * 40503u),
      w.umax = std::max(w.umax, unsigned(v) * 40503u);
      w.exch_sum += t + 1; // the exchanged-out values plus the last one: 0 + 1 + ... + threads
      w.add64 += (unsigned long long)(v + 5000) << 20, w.or64 |= 1ull << (t % 64);
      w.cas64 += 1ull << 40, w.fadd += 0.25f, w.dadd += v * 0.5;
    }
    const Result& g = out[b];
    printf("block %d\n", b);
#define FIELD(f) expect_value(#f, g.f, w.f)
    FIELD(add), FIELD(sub), FIELD(mn), FIELD(mx), FIELD(and_), FIELD(or_), FIELD(xor_);
    FIELD(cas_count), FIELD(inc), FIELD(dec), FIELD(umin), FIELD(umax), FIELD(exch_sum);
    FIELD(add64), FIELD(or64), FIELD(cas64), FIELD(fadd), FIELD(dadd);
  }
  return report("atomics_shared");
}
