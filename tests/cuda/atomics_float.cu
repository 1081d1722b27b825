// Floating-point atomicAdd: float, double, __half, __half2, __nv_bfloat16 and
// __nv_bfloat162, on global memory, with addends chosen so every order of additions gives
// the same exact sum; the old values returned by float adds of 1 are all distinct.
// nvcc-flags: -arch=sm_80
#include <algorithm>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector>

#include "check.h"

struct Sums {
  float f;
  double d;
  __half h;
  __nv_bfloat16 b;
  __half2 h2;
  __nv_bfloat162 b2;
  float ticket;
};

__global__ void add_all(int n, Sums* s, float* tickets) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&s->f, (i % 8) * 0.125f);
  atomicAdd(&s->d, (i % 1024) * 0.0009765625);
  atomicAdd(&s->h, __float2half(1.0f));
  if (i < 200) atomicAdd(&s->b, __float2bfloat16(1.0f));
  atomicAdd(&s->h2, __floats2half2_rn(0.5f, -1.0f));
  if (i < 100) atomicAdd(&s->b2, __floats2bfloat162_rn(2.0f, -0.5f));
  tickets[i] = atomicAdd(&s->ticket, 1.0f);
}

int main() {
  const int n = 1024;
  Sums* d_s;
  float* d_t;
  CHECK(cudaMalloc(&d_s, sizeof(Sums)));
  CHECK(cudaMalloc(&d_t, n * sizeof(float)));
  CHECK(cudaMemset(d_s, 0, sizeof(Sums)));
  add_all<<<n / 64, 64>>>(n, d_s, d_t);
  CHECK_LAUNCH();
  Sums s;
  std::vector<float> tickets(n), want(n);
  CHECK(cudaMemcpy(&s, d_s, sizeof s, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(tickets.data(), d_t, n * sizeof(float), cudaMemcpyDeviceToHost));
  double fsum = 0, dsum = 0;
  for (int i = 0; i < n; ++i)
    fsum += (i % 8) * 0.125, dsum += (i % 1024) * 0.0009765625, want[i] = float(i);
  expect_value("float", double(s.f), fsum);
  expect_value("double", s.d, dsum);
  expect_value("half", __half2float(s.h), float(n));
  expect_value("bf16", __bfloat162float(s.b), 200.0f);
  expect_value("half2.x", __low2float(s.h2), 0.5f * n);
  expect_value("half2.y", __high2float(s.h2), -1.0f * n);
  expect_value("bf162.x", __low2float(s.b2), 200.0f);
  expect_value("bf162.y", __high2float(s.b2), -50.0f);
  std::sort(tickets.begin(), tickets.end());
  expect_equal("tickets", tickets.data(), want.data(), n);
  return report("atomics_float");
}
