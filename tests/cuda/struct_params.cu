// Kernel parameters by value: a large struct (arrays, mixed alignment, nested structs),
// vector types (float4, int2, double2, char3), and loads/stores of vector types through
// global memory; checked against the same computation on the host.
#include <vector>

#include "check.h"

struct Inner {
  char tag;
  double weight;
  short s[3];
};

struct Big {
  int coeff[64];
  Inner inner[4];
  float4 bias;
  char name[13];
  long long big;
};

__host__ __device__ double combine(const Big& b, float4 f, int2 i2, double2 d2, char3 c3, int k) {
  double v = b.coeff[k % 64] * b.inner[k % 4].weight + b.inner[k % 4].s[k % 3] + b.inner[k % 4].tag;
  v += f.x * k + f.y - f.z + f.w + b.bias.x + b.bias.w + b.name[k % 13];
  v += i2.x - i2.y + d2.x * d2.y + c3.x + c3.y * 2 + c3.z * 3 + double(b.big % 1000);
  return v;
}

__global__ void use(Big b, float4 f, int2 i2, double2 d2, char3 c3, double* out, const float4* vin,
                    float4* vout, int n) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  out[k] = combine(b, f, i2, d2, c3, k);
  float4 v = vin[k];
  vout[k] = make_float4(v.w, v.z * 2, v.y + 1, v.x - b.bias.y);
}

int main() {
  Big b{};
  for (int i = 0; i < 64; ++i)
    b.coeff[i] = i * 3 - 50;
  for (int i = 0; i < 4; ++i)
    b.inner[i] = Inner{char('a' + i), 0.25 * (i + 1), {short(i), short(-i), short(100 * i)}};
  b.bias = make_float4(1.5f, -2.0f, 3.0f, 0.25f);
  const char name[] = "parameter123";
  for (int i = 0; i < 13; ++i)
    b.name[i] = name[i];
  b.big = 123456789012345LL;
  float4 f = make_float4(0.5f, 1, 2, 3);
  int2 i2 = make_int2(7, -9);
  double2 d2 = make_double2(1.25, -4.0);
  char3 c3 = make_char3(1, -2, 3);
  const int n = 300;
  std::vector<float4> vin(n), vout(n);
  for (int k = 0; k < n; ++k)
    vin[k] = make_float4(k, k * 0.5f, -k, k + 0.25f);
  double* d_out;
  float4 *d_vin, *d_vout;
  CHECK(cudaMalloc(&d_out, n * sizeof(double)));
  CHECK(cudaMalloc(&d_vin, n * sizeof(float4)));
  CHECK(cudaMalloc(&d_vout, n * sizeof(float4)));
  CHECK(cudaMemcpy(d_vin, vin.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  use<<<(n + 127) / 128, 128>>>(b, f, i2, d2, c3, d_out, d_vin, d_vout, n);
  CHECK_LAUNCH();
  std::vector<double> out(n), want(n);
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(vout.data(), d_vout, n * sizeof(float4), cudaMemcpyDeviceToHost));
  std::vector<float> vg, vw;
  for (int k = 0; k < n; ++k) {
    want[k] = combine(b, f, i2, d2, c3, k);
    float g[4] = {vout[k].x, vout[k].y, vout[k].z, vout[k].w};
    float w[4] = {vin[k].w, vin[k].z * 2, vin[k].y + 1, vin[k].x + 2.0f};
    for (int c = 0; c < 4; ++c)
      vg.push_back(g[c]), vw.push_back(w[c]);
  }
  expect_equal("struct and vector parameters", out.data(), want.data(), n);
  expect_equal("float4 loads and stores", vg.data(), vw.data(), vg.size());
  return report("struct_params");
}
