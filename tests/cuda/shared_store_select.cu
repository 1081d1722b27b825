// Conditional stores to shared memory of values a thread loaded there, which the CPU
// backend stores unconditionally as selects (codegen/shared_store_select.h), and the
// shapes it must leave alone.
// variants: debug
// mimic-env: MIMIC_QUICK_TIER=0
#include <algorithm>
#include <vector>

#include "check.h"

constexpr int kKeys = 512;

// Odd-even transposition sort: the swap taken on the branch's false side, with the pair
// formed by the thread's parity (so the stores' addresses are not a simple thread step).
__global__ void odd_even_sort(int* keys) {
  __shared__ int s[kKeys];
  int t = threadIdx.x;
  s[2 * t] = keys[2 * t];
  s[2 * t + 1] = keys[2 * t + 1];
  for (int round = 0; round < kKeys; ++round) {
    __syncthreads();
    int i = 2 * t + (round & 1);
    if (i + 1 < kKeys) {
      int a = s[i], b = s[i + 1];
      if (!(a <= b)) {
        s[i] = b;
        s[i + 1] = a;
      }
    }
  }
  __syncthreads();
  keys[2 * t] = s[2 * t];
  keys[2 * t + 1] = s[2 * t + 1];
}

// A store between the load and the conditional store that may hit the same place: thread
// t writes s[t + shift] after loading s[t]; with shift 0 (a parameter, so the compiler
// cannot tell) that is its own element, and the thread that does not store again must not
// put back the value it loaded before.
__global__ void store_between(int* out, int shift) {
  __shared__ int s[256 + 1];
  int t = threadIdx.x;
  s[t] = t;
  __syncthreads();
  int a = s[t];
  s[t + shift] = 1000 + t;
  if (a % 2 == 1)
    s[t] = a;
  __syncthreads();
  out[t] = s[t];
}

// Threads that store their own value to their warp's place when it beats what they read
// there (racing where several do: CUDA promises one of the writers' values). A thread that
// does not store must not put the old value back over another's: here one thread a warp
// stores.
__global__ void racy_max(const int* in, int* out) {
  __shared__ int best[8];
  int t = threadIdx.x;
  if (t < 8)
    best[t] = -1;
  __syncthreads();
  int v = in[blockIdx.x * blockDim.x + t];
  if (v > best[t / 32])
    best[t / 32] = v;
  __syncthreads();
  if (t < 8)
    out[blockIdx.x * 8 + t] = best[t];
}

int main() {
  std::vector<int> keys(kKeys);
  unsigned seed = 11;
  for (auto& k : keys)
    k = int((seed = seed * 1664525u + 1013904223u) >> 22) - 512; // duplicates and negatives
  int *d_keys, *d_out, *d_in;
  CHECK(cudaMalloc(&d_keys, kKeys * sizeof(int)));
  CHECK(cudaMalloc(&d_out, 64 * 8 * sizeof(int)));
  CHECK(cudaMalloc(&d_in, 64 * 256 * sizeof(int)));
  CHECK(cudaMemcpy(d_keys, keys.data(), kKeys * sizeof(int), cudaMemcpyHostToDevice));
  odd_even_sort<<<1, kKeys / 2>>>(d_keys);
  CHECK_LAUNCH();
  std::vector<int> got(kKeys);
  CHECK(cudaMemcpy(got.data(), d_keys, kKeys * sizeof(int), cudaMemcpyDeviceToHost));
  std::sort(keys.begin(), keys.end());
  expect_equal("odd-even sort", got.data(), keys.data(), kKeys);

  store_between<<<1, 256>>>(d_out, 0);
  CHECK_LAUNCH();
  std::vector<int> out(256), want(256);
  CHECK(cudaMemcpy(out.data(), d_out, 256 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < 256; ++t)
    want[t] = t % 2 == 1 ? t : 1000 + t;
  expect_equal("store between", out.data(), want.data(), 256);

  std::vector<int> in(64 * 256);
  for (int i = 0; i < 64 * 256; ++i)
    in[i] = i % 32 == (i / 32 * 7) % 32 ? i : -2 - i % 32; // one a warp beats -1
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
  racy_max<<<64, 256>>>(d_in, d_out);
  CHECK_LAUNCH();
  std::vector<int> best(64 * 8), want_best(64 * 8);
  CHECK(cudaMemcpy(best.data(), d_out, best.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int w = 0; w < 64 * 8; ++w)
    want_best[w] = w * 32 + (w * 7) % 32;
  expect_equal("one thread's maximum", best.data(), want_best.data(), best.size());
  return report("shared_store_select");
}
