// Row-wise softmax and layer normalisation, one warp per row, with max/sum/mean/variance
// reductions done by warp shuffles; compared with double-precision host results within a
// small tolerance. LLVM cannot vectorise some of its thread loops: its "loop not
// vectorized" warnings must stay off the program's standard error, also from the CPU JIT's
// background compiler (in the runs with code tiers).
// variants: debug
// forbid-stderr: loop not vectorized
#include <cmath>
#include <vector>

#include "check.h"

__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o /= 2)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void softmax_ln(const float* x, float* soft, float* norm, const float* gamma,
                           const float* beta, int rows, int cols) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return; // whole warps leave together
  const float* r = x + row * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32)
    m = fmaxf(m, r[c]);
  m = warp_max(m);
  float s = 0, mean = 0;
  for (int c = lane; c < cols; c += 32)
    s += expf(r[c] - m), mean += r[c];
  s = warp_sum(s);
  mean = warp_sum(mean) / cols;
  float var = 0;
  for (int c = lane; c < cols; c += 32)
    var += (r[c] - mean) * (r[c] - mean);
  var = warp_sum(var) / cols;
  float inv_std = rsqrtf(var + 1e-5f);
  for (int c = lane; c < cols; c += 32) {
    soft[row * cols + c] = expf(r[c] - m) / s;
    norm[row * cols + c] = (r[c] - mean) * inv_std * gamma[c] + beta[c];
  }
}

int main() {
  const int rows = 37, cols = 200;
  std::vector<float> x(rows * cols), gamma(cols), beta(cols), soft(x.size()), norm(x.size());
  std::vector<double> ws(x.size()), wn(x.size());
  for (int i = 0; i < rows * cols; ++i)
    x[i] = std::sin(i * 0.37f) * 4 + (i % 13) * 0.1f;
  for (int c = 0; c < cols; ++c)
    gamma[c] = 1.0f + c * 0.01f, beta[c] = c * 0.001f - 0.05f;
  for (int r = 0; r < rows; ++r) {
    const float* p = &x[r * cols];
    double m = -INFINITY, s = 0, mean = 0, var = 0;
    for (int c = 0; c < cols; ++c)
      m = std::fmax(m, p[c]), mean += p[c];
    mean /= cols;
    for (int c = 0; c < cols; ++c)
      s += std::exp(p[c] - m), var += (p[c] - mean) * (p[c] - mean);
    var /= cols;
    for (int c = 0; c < cols; ++c) {
      ws[r * cols + c] = std::exp(p[c] - m) / s;
      wn[r * cols + c] = (p[c] - mean) / std::sqrt(var + 1e-5) * gamma[c] + beta[c];
    }
  }
  float *d_x, *d_soft, *d_norm, *d_gamma, *d_beta;
  CHECK(cudaMalloc(&d_x, x.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_soft, x.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_norm, x.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_gamma, cols * sizeof(float)));
  CHECK(cudaMalloc(&d_beta, cols * sizeof(float)));
  CHECK(cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_gamma, gamma.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_beta, beta.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
  const int warps_per_block = 4;
  softmax_ln<<<(rows + warps_per_block - 1) / warps_per_block, 32 * warps_per_block>>>(
      d_x, d_soft, d_norm, d_gamma, d_beta, rows, cols);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(soft.data(), d_soft, x.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(norm.data(), d_norm, x.size() * sizeof(float), cudaMemcpyDeviceToHost));
  expect_near("softmax", soft.data(), ws.data(), ws.size(), 1e-5, true);
  expect_near("layernorm", norm.data(), wn.data(), wn.size(), 1e-4);
  return report("softmax_layernorm");
}
