// ldmatrix (x4 for A, x2.trans for B) from shared memory feeding mma.sync m16n8k16
// (f16 inputs, f32 accumulators): the usual tensor-core tile load, checked against a host
// GEMM. Inputs are small integers, so every product and sum is exact.
// nvcc-flags: -arch=sm_80
#include <cuda_fp16.h>
#include <vector>

#include "check.h"

__global__ void tile(const __half* a, const __half* b, float* d) {
  __shared__ __align__(16) __half sa[16][16];
  __shared__ __align__(16) __half sb[16][8];
  int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32)
    sa[i / 16][i % 16] = a[i];
  for (int i = lane; i < 128; i += 32)
    sb[i / 8][i % 8] = b[i];
  __syncwarp();
  unsigned ra[4], rb[2];
  unsigned a_addr = (unsigned)__cvta_generic_to_shared(&sa[lane % 16][(lane / 16) * 8]);
  unsigned b_addr = (unsigned)__cvta_generic_to_shared(&sb[lane % 16][0]);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(a_addr));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
               : "=r"(rb[0]), "=r"(rb[1]) : "r"(b_addr));
  float c[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
  int g = lane / 4, tg = lane % 4;
  for (int i = 0; i < 4; ++i)
    d[(g + 8 * (i / 2)) * 8 + tg * 2 + i % 2] = c[i];
}

int main() {
  std::vector<__half> a(256), b(128);
  std::vector<float> want(128), got(128, -1.0f);
  for (int i = 0; i < 256; ++i)
    a[i] = __float2half(float((i * 7) % 11 - 5));
  for (int i = 0; i < 128; ++i)
    b[i] = __float2half(float((i * 5) % 9 - 4));
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c) {
      float s = 1.0f;
      for (int k = 0; k < 16; ++k)
        s += __half2float(a[r * 16 + k]) * __half2float(b[k * 8 + c]);
      want[r * 8 + c] = s;
    }
  __half *da, *db;
  float* dd;
  CHECK(cudaMalloc(&da, 256 * sizeof(__half)));
  CHECK(cudaMalloc(&db, 128 * sizeof(__half)));
  CHECK(cudaMalloc(&dd, 128 * sizeof(float)));
  CHECK(cudaMemcpy(da, a.data(), 256 * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), 128 * sizeof(__half), cudaMemcpyHostToDevice));
  tile<<<1, 32>>>(da, db, dd);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(got.data(), dd, 128 * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 128; ++i)
    EXPECT(got[i] == want[i]);
  if (failures)
    fprintf(stderr, "ldmatrix_mma: d[0] = %f (expected %f)\n", got[0], want[0]);
  printf("ldmatrix_mma: %s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
