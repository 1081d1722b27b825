// Tiled single-precision GEMM, C = alpha A B + beta C, with 16x16 shared-memory tiles and
// sizes that are not multiples of the tile; small integer inputs keep every sum exact.
// nvcc-flags: -arch=sm_120
#include <vector>

#include "check.h"

constexpr int T = 16;

__global__ void gemm(int m, int n, int k, float alpha, const float* a, const float* b, float beta,
                     float* c) {
  __shared__ float as[T][T], bs[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0;
  for (int t0 = 0; t0 < k; t0 += T) {
    as[threadIdx.y][threadIdx.x] =
        row < m && t0 + threadIdx.x < k ? a[row * k + t0 + threadIdx.x] : 0;
    bs[threadIdx.y][threadIdx.x] =
        col < n && t0 + threadIdx.y < k ? b[(t0 + threadIdx.y) * n + col] : 0;
    __syncthreads();
    for (int j = 0; j < T; ++j)
      acc += as[threadIdx.y][j] * bs[j][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = alpha * acc + beta * c[row * n + col];
}

int main() {
  const int m = 70, n = 45, k = 53;
  std::vector<float> a(m * k), b(k * n), c(m * n), want(m * n);
  for (int i = 0; i < m * k; ++i)
    a[i] = float((i * 7) % 11 - 5);
  for (int i = 0; i < k * n; ++i)
    b[i] = float((i * 5) % 9 - 4);
  for (int i = 0; i < m * n; ++i)
    c[i] = float(i % 7);
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < n; ++col) {
      float s = 0;
      for (int j = 0; j < k; ++j)
        s += a[r * k + j] * b[j * n + col];
      want[r * n + col] = 2.0f * s + 0.5f * c[r * n + col];
    }
  float *d_a, *d_b, *d_c;
  CHECK(cudaMalloc(&d_a, a.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_b, b.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_c, c.size() * sizeof(float)));
  CHECK(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_c, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice));
  gemm<<<dim3((n + T - 1) / T, (m + T - 1) / T), dim3(T, T)>>>(m, n, k, 2.0f, d_a, d_b, 0.5f, d_c);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(c.data(), d_c, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("C", c.data(), want.data(), c.size());
  return report("gemm_tiled");
}
