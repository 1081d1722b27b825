// atomicCAS in 16, 32 and 64 bits: read-modify-write loops built on it (a float maximum, a
// 16-bit counter array, a 64-bit packed pair), and a lock taken by one thread per block
// that guards plain (non-atomic) updates.
// nvcc-flags: -arch=sm_75
#include <algorithm>
#include <vector>

#include "check.h"

__device__ float atomic_max_float(float* addr, float v) {
  int* p = reinterpret_cast<int*>(addr);
  int old = *p, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= v) break;
    old = atomicCAS(p, assumed, __float_as_int(v));
  } while (old != assumed);
  return __int_as_float(old);
}

__global__ void cas_ops(const float* in, int n, float* fmax, unsigned short* counts16,
                        unsigned long long* pair, int* lock, int* guarded) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomic_max_float(fmax, in[i]);
    unsigned short* c = &counts16[i % 4];
    unsigned short old = *c, seen;
    while ((seen = atomicCAS(c, old, (unsigned short)(old + 1))) != old)
      old = seen;
    // pair: high 32 bits count, low 32 bits sum of indices
    unsigned long long o = *pair, s;
    while ((s = atomicCAS(pair, o, o + (1ull << 32) + unsigned(i))) != o)
      o = s;
  }
  if (threadIdx.x == 0) {
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    __threadfence();
    int v = *(volatile int*)guarded;
    *(volatile int*)guarded = v + int(blockIdx.x) + 1;
    __threadfence();
    atomicExch(lock, 0);
  }
}

int main() {
  const int n = 5000, threads = 128, blocks = (n + threads - 1) / threads;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i)
    in[i] = float((i * 7919) % 10007) * 0.37f - 1000.0f;
  float* d_in;
  float* d_max;
  unsigned short* d_c16;
  unsigned long long* d_pair;
  int *d_lock, *d_guarded;
  CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CHECK(cudaMalloc(&d_max, sizeof(float)));
  CHECK(cudaMalloc(&d_c16, 4 * sizeof(unsigned short)));
  CHECK(cudaMalloc(&d_pair, sizeof(unsigned long long)));
  CHECK(cudaMalloc(&d_lock, sizeof(int)));
  CHECK(cudaMalloc(&d_guarded, sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  float lowest = -1e30f;
  CHECK(cudaMemcpy(d_max, &lowest, sizeof lowest, cudaMemcpyHostToDevice));
  unsigned short c16_init[4] = {0, 100, 65535, 7};
  CHECK(cudaMemcpy(d_c16, c16_init, sizeof c16_init, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_pair, 0, sizeof(unsigned long long)));
  CHECK(cudaMemset(d_lock, 0, sizeof(int)));
  CHECK(cudaMemset(d_guarded, 0, sizeof(int)));
  cas_ops<<<blocks, threads>>>(d_in, n, d_max, d_c16, d_pair, d_lock, d_guarded);
  CHECK_LAUNCH();
  float fmax;
  unsigned short c16[4];
  unsigned long long pair;
  int guarded;
  CHECK(cudaMemcpy(&fmax, d_max, sizeof fmax, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(c16, d_c16, sizeof c16, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&pair, d_pair, sizeof pair, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&guarded, d_guarded, sizeof guarded, cudaMemcpyDeviceToHost));
  expect_value("float max", fmax, *std::max_element(in.begin(), in.end()));
  unsigned short want16[4];
  for (int k = 0; k < 4; ++k)
    want16[k] = (unsigned short)(c16_init[k] + n / 4 + (k < n % 4));
  expect_equal("16-bit counters", c16, want16, 4);
  expect_value("64-bit pair", pair,
               ((unsigned long long)n << 32) + (unsigned long long)n * (n - 1) / 2);
  expect_value("lock-guarded sum", guarded, blocks * (blocks + 1) / 2);
  return report("atomics_cas");
}
