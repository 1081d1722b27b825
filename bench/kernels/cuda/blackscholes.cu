// Black-Scholes prices of European call and put options, one option per thread.
#include "cuda_kernels.h"

namespace bench::cuda {

static __device__ float normal_cdf(float d) {
  return 0.5f * erfcf(-d * 0.70710678118654752f);
}

__global__ void black_scholes(const float* __restrict__ spot, const float* __restrict__ strike,
                              const float* __restrict__ years, float* __restrict__ call,
                              float* __restrict__ put, float rate, float volatility, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = spot[i], x = strike[i], t = years[i];
  float sqrt_t = sqrtf(t);
  float d1 = (logf(s / x) + (rate + 0.5f * volatility * volatility) * t) / (volatility * sqrt_t);
  float d2 = d1 - volatility * sqrt_t;
  float discount = expf(-rate * t);
  float cnd1 = normal_cdf(d1), cnd2 = normal_cdf(d2);
  call[i] = s * cnd1 - x * discount * cnd2;
  put[i] = x * discount * (1.0f - cnd2) - s * (1.0f - cnd1);
}

// buffers: spot, strike, years, call (out), put (out); alpha: rate, beta: volatility
void run_blackscholes(void* const* buffers, const Params& p) {
  constexpr unsigned kBlock = 256;
  unsigned grid = unsigned((p.n + kBlock - 1) / kBlock);
  black_scholes<<<grid, kBlock>>>(
      static_cast<const float*>(buffers[0]), static_cast<const float*>(buffers[1]),
      static_cast<const float*>(buffers[2]), static_cast<float*>(buffers[3]),
      static_cast<float*>(buffers[4]), p.alpha, p.beta, p.n);
}

} // namespace bench::cuda
