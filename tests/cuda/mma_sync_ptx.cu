// The mma.sync.aligned.m16n8k16 instruction through inline PTX (f16 inputs, f32
// accumulators): each lane packs the fragment elements the PTX ISA assigns to it, and the
// result is checked against a host product of small integers (exact).
// nvcc-flags: -arch=sm_80
#include <cuda_fp16.h>
#include <vector>

#include "check.h"

// A is 16x16 row-major, B is 16x8 (k x n) stored column-major, C/D are 16x8 row-major.
__global__ void mma_16x8x16(const __half* a, const __half* b, const float* c, float* d) {
  int lane = threadIdx.x, group = lane >> 2, tig = lane & 3;
  unsigned ra[4], rb[2];
  for (int r = 0; r < 4; ++r) { // a0..a7 in pairs
    int row = group + (r % 2) * 8, col = tig * 2 + (r / 2) * 8;
    __half2 h = __halves2half2(a[row * 16 + col], a[row * 16 + col + 1]);
    ra[r] = *reinterpret_cast<unsigned*>(&h);
  }
  for (int r = 0; r < 2; ++r) { // b0..b3 in pairs
    int k = tig * 2 + r * 8, n = group;
    __half2 h = __halves2half2(b[n * 16 + k], b[n * 16 + k + 1]);
    rb[r] = *reinterpret_cast<unsigned*>(&h);
  }
  float acc[4];
  for (int i = 0; i < 4; ++i)
    acc[i] = c[(group + (i / 2) * 8) * 8 + tig * 2 + i % 2];
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
  for (int i = 0; i < 4; ++i)
    d[(group + (i / 2) * 8) * 8 + tig * 2 + i % 2] = acc[i];
}

int main() {
  std::vector<__half> a(256), b(128);
  std::vector<float> fa(256), fb(128), c(128), want(128), d(128);
  for (int i = 0; i < 256; ++i)
    fa[i] = float((i * 5) % 9 - 4), a[i] = __float2half(fa[i]);
  for (int i = 0; i < 128; ++i)
    fb[i] = float((i * 3) % 7 - 3), b[i] = __float2half(fb[i]), c[i] = float(i % 5);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      float s = c[m * 8 + n];
      for (int k = 0; k < 16; ++k)
        s += fa[m * 16 + k] * fb[n * 16 + k];
      want[m * 8 + n] = s;
    }
  __half *d_a, *d_b;
  float *d_c, *d_d;
  CHECK(cudaMalloc(&d_a, 256 * sizeof(__half)));
  CHECK(cudaMalloc(&d_b, 128 * sizeof(__half)));
  CHECK(cudaMalloc(&d_c, 128 * sizeof(float)));
  CHECK(cudaMalloc(&d_d, 128 * sizeof(float)));
  CHECK(cudaMemcpy(d_a, a.data(), 256 * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_b, b.data(), 128 * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_c, c.data(), 128 * sizeof(float), cudaMemcpyHostToDevice));
  mma_16x8x16<<<1, 32>>>(d_a, d_b, d_c, d_d);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(d.data(), d_d, 128 * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("D = A B + C", d.data(), want.data(), 128);
  return report("mma_sync_ptx");
}
