// half and bfloat16 arithmetic, conversions and packed math, compared with float math.
// variants: all
#include <cmath>
#include <cstdio>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void half_ops(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  __half h = __float2half_rn(in[i]);
  __half2 h2 = __halves2half2(h, __float2half(1.5f));
  __half2 r2 = __hfma2(h2, h2, __float2half2_rn(0.25f));
  __nv_bfloat16 b = __float2bfloat16(in[i]);
  __nv_bfloat16 rb = __hmul(b, __float2bfloat16(2.0f));
  out[4 * i + 0] = __half2float(__hadd(h, h));
  out[4 * i + 1] = __low2float(r2);
  out[4 * i + 2] = __high2float(r2);
  out[4 * i + 3] = __bfloat162float(rb);
}

int main() {
  const int n = 1024;
  float h_in[n], h_out[4 * n];
  for (int i = 0; i < n; ++i)
    h_in[i] = (i - 512) / 64.0f;
  float *d_in, *d_out;
  cudaMalloc(&d_in, sizeof h_in);
  cudaMalloc(&d_out, sizeof h_out);
  cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice);
  half_ops<<<(n + 127) / 128, 128>>>(d_in, d_out, n);
  cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float x = h_in[i]; // exactly representable in half and bfloat16
    float expect[4] = {2 * x, x * x + 0.25f, 1.5f * 1.5f + 0.25f, 2 * x};
    for (int k = 0; k < 4; ++k)
      if (fabsf(h_out[4 * i + k] - expect[k]) > 1e-2f * fmaxf(1.0f, fabsf(expect[k])))
        if (bad++ < 5)
          fprintf(stderr, "half_math: [%d][%d] = %f, expected %f\n", i, k, h_out[4 * i + k], expect[k]);
  }
  printf("half_math: %s\n", bad ? "FAILED" : "ok");
  return bad ? 1 : 0;
}
