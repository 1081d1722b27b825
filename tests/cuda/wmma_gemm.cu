// A 16x16x16 half-precision matrix product through the warp matrix API (wmma).
// variants: all
#include <cstdio>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

__global__ void wmma_16x16(const half* a, const half* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

int main() {
  half ha[256], hb[256];
  float ref[256], hc[256];
  for (int i = 0; i < 256; ++i) {
    ha[i] = __float2half(float((i % 7) - 3));
    hb[i] = __float2half(float((i % 5) - 2));
  }
  for (int r = 0; r < 16; ++r)
    for (int col = 0; col < 16; ++col) {
      float s = 0;
      for (int k = 0; k < 16; ++k)
        s += __half2float(ha[r * 16 + k]) * __half2float(hb[col * 16 + k]);
      ref[r * 16 + col] = s;
    }
  half *da, *db;
  float* dc;
  cudaMalloc(&da, sizeof ha);
  cudaMalloc(&db, sizeof hb);
  cudaMalloc(&dc, sizeof hc);
  cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice);
  cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice);
  wmma_16x16<<<1, 32>>>(da, db, dc);
  cudaMemcpy(hc, dc, sizeof hc, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < 256; ++i)
    bad += hc[i] != ref[i];
  printf("wmma_gemm: %s\n", bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}
