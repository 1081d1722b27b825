// __constant__ and __device__ variables: static initialisers, cudaMemcpyToSymbol and
// cudaMemcpyFromSymbol (with offsets), cudaGetSymbolAddress and cudaGetSymbolSize, and
// kernels reading constant tables with computed indices.
// variants: all
#include <vector>

#include "check.h"

__constant__ float coeff[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__constant__ int lookup[256];
__device__ int scratch[16] = {9, 8, 7};
__device__ double scale = 0.5;

__global__ void apply(const int* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = coeff[i % 8] * float(lookup[in[i] & 255]) * float(scale) + float(scratch[i % 16]);
}

int main() {
  const int n = 512;
  int host_lookup[256];
  for (int k = 0; k < 256; ++k)
    host_lookup[k] = 255 - k;
  CHECK(cudaMemcpyToSymbol(lookup, host_lookup, sizeof host_lookup));
  float c4[4] = {-1, -2, -3, -4};
  CHECK(cudaMemcpyToSymbol(coeff, c4, sizeof c4, 4 * sizeof(float))); // coeff[4..7]
  size_t size = 0;
  CHECK(cudaGetSymbolSize(&size, scratch));
  EXPECT(size == 16 * sizeof(int));
  int* scratch_ptr = nullptr;
  CHECK(cudaGetSymbolAddress((void**)&scratch_ptr, scratch));
  int five = 5;
  CHECK(cudaMemcpy(scratch_ptr + 15, &five, sizeof five, cudaMemcpyHostToDevice));
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i)
    in[i] = i * 7;
  int* d_in;
  float* d_out;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  apply<<<(n + 127) / 128, 128>>>(d_in, d_out, n);
  CHECK_LAUNCH();
  std::vector<float> out(n), want(n);
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  const float c[8] = {1, 2, 3, 4, -1, -2, -3, -4};
  int s[16] = {9, 8, 7};
  s[15] = 5;
  for (int i = 0; i < n; ++i)
    want[i] = c[i % 8] * float(255 - (in[i] & 255)) * 0.5f + float(s[i % 16]);
  expect_equal("out", out.data(), want.data(), n);
  float back[8];
  CHECK(cudaMemcpyFromSymbol(back, coeff, sizeof back));
  expect_equal("coeff", back, c, 8);
  double sc = 0;
  CHECK(cudaMemcpyFromSymbol(&sc, scale, sizeof sc));
  expect_value("scale", sc, 0.5);
  return report("constant_symbols");
}
