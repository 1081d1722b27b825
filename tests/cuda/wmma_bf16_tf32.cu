// Warp matrix products of sm_80: wmma 16x16x16 with bf16 inputs and 16x16x8 with tf32
// inputs (precision::tf32), both accumulating in float, loading fragments with leading
// dimensions larger than the tile and storing column-major; small integer inputs make the
// products exact.
// nvcc-flags: -arch=sm_80
#include <cuda_bf16.h>
#include <mma.h>
#include <vector>

#include "check.h"

using namespace nvcuda;
constexpr int LD = 24; // leading dimension of the padded inputs

__global__ void bf16_mma(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 1.0f);
  wmma::load_matrix_sync(fa, a, LD);
  wmma::load_matrix_sync(fb, b, LD);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_col_major);
}

__global__ void tf32_mma(const float* a, const float* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  for (int k = 0; k < 16; k += 8) {
    wmma::load_matrix_sync(fa, a + k, LD);
    wmma::load_matrix_sync(fb, b + k, LD);
    for (int t = 0; t < fa.num_elements; ++t)
      fa.x[t] = wmma::__float_to_tf32(fa.x[t]);
    for (int t = 0; t < fb.num_elements; ++t)
      fb.x[t] = wmma::__float_to_tf32(fb.x[t]);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

int main() {
  std::vector<float> a(16 * LD, 0), b(16 * LD, 0);
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 16; ++k)
      a[r * LD + k] = float((r * 3 + k * 5) % 9 - 4), b[r * LD + k] = float((r * 7 + k) % 7 - 3);
  // bf16: B row-major (b[k][n] = b[k * LD + n]); tf32: B column-major (b[k][n] = b[n * LD + k]).
  std::vector<float> want_bf(256), want_tf(256);
  for (int r = 0; r < 16; ++r)
    for (int col = 0; col < 16; ++col) {
      float s1 = 1, s2 = 0;
      for (int k = 0; k < 16; ++k)
        s1 += a[r * LD + k] * b[k * LD + col], s2 += a[r * LD + k] * b[col * LD + k];
      want_bf[col * 16 + r] = s1; // stored column-major
      want_tf[r * 16 + col] = s2;
    }
  std::vector<__nv_bfloat16> ab(a.size()), bb(b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ab[i] = __float2bfloat16(a[i]), bb[i] = __float2bfloat16(b[i]);
  __nv_bfloat16 *d_ab, *d_bb;
  float *d_a, *d_b, *d_c1, *d_c2;
  CHECK(cudaMalloc(&d_ab, ab.size() * sizeof(__nv_bfloat16)));
  CHECK(cudaMalloc(&d_bb, bb.size() * sizeof(__nv_bfloat16)));
  CHECK(cudaMalloc(&d_a, a.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_b, b.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_c1, 256 * sizeof(float)));
  CHECK(cudaMalloc(&d_c2, 256 * sizeof(float)));
  CHECK(cudaMemcpy(d_ab, ab.data(), ab.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_bb, bb.data(), bb.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  bf16_mma<<<1, 32>>>(d_ab, d_bb, d_c1);
  CHECK_LAUNCH();
  tf32_mma<<<1, 32>>>(d_a, d_b, d_c2);
  CHECK_LAUNCH();
  std::vector<float> c1(256), c2(256);
  CHECK(cudaMemcpy(c1.data(), d_c1, 256 * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(c2.data(), d_c2, 256 * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("bf16 wmma (column-major store)", c1.data(), want_bf.data(), 256);
  expect_equal("tf32 wmma", c2.data(), want_tf.data(), 256);
  return report("wmma_bf16_tf32");
}
