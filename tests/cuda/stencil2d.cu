// A 2D five-point stencil iterated several times: 16x16 blocks load their tile and a
// one-cell halo into shared memory, with the grid's border held fixed; integer values keep
// the results exact.
#include <vector>

#include "check.h"

constexpr int T = 16;

__global__ void step(const int* in, int* out, int w, int h) {
  __shared__ int tile[T + 2][T + 2];
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
  auto at = [&](int xx, int yy) {
    xx = min(max(xx, 0), w - 1), yy = min(max(yy, 0), h - 1);
    return in[yy * w + xx];
  };
  tile[ly][lx] = at(x, y);
  if (threadIdx.x == 0) tile[ly][0] = at(x - 1, y);
  if (threadIdx.x == T - 1) tile[ly][T + 1] = at(x + 1, y);
  if (threadIdx.y == 0) tile[0][lx] = at(x, y - 1);
  if (threadIdx.y == T - 1) tile[T + 1][lx] = at(x, y + 1);
  __syncthreads();
  if (x >= w || y >= h) return;
  bool border = x == 0 || y == 0 || x == w - 1 || y == h - 1;
  out[y * w + x] = border ? tile[ly][lx]
                          : (4 * tile[ly][lx] + tile[ly][lx - 1] + tile[ly][lx + 1] +
                             tile[ly - 1][lx] + tile[ly + 1][lx]) /
                                8;
}

int main() {
  const int w = 83, h = 61, iters = 5;
  std::vector<int> a(w * h), b(w * h), got(w * h);
  for (int i = 0; i < w * h; ++i)
    a[i] = (i * 7919) % 10007;
  int *d_a, *d_b;
  CHECK(cudaMalloc(&d_a, a.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_b, a.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_a, a.data(), a.size() * sizeof(int), cudaMemcpyHostToDevice));
  dim3 grid((w + T - 1) / T, (h + T - 1) / T), block(T, T);
  for (int it = 0; it < iters; ++it) {
    step<<<grid, block>>>(it % 2 ? d_b : d_a, it % 2 ? d_a : d_b, w, h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const int* p = &a[y * w + x];
        bool border = x == 0 || y == 0 || x == w - 1 || y == h - 1;
        b[y * w + x] = border ? *p : (4 * p[0] + p[-1] + p[1] + p[-w] + p[w]) / 8;
      }
    a.swap(b);
  }
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(got.data(), iters % 2 ? d_b : d_a, got.size() * sizeof(int),
                   cudaMemcpyDeviceToHost));
  expect_equal("after 5 steps", got.data(), a.data(), got.size());
  return report("stencil2d");
}
