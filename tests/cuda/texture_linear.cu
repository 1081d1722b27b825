// Texture objects over linear memory: tex1Dfetch of floats and int2 by computed index, of
// uchar4 read as normalized floats, and an index past the end, which reads zero.
#include <vector>

#include "check.h"

__global__ void fetch(cudaTextureObject_t tf, cudaTextureObject_t ti, cudaTextureObject_t tu,
                      float* out, int2* iout, float4* uout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = tex1Dfetch<float>(tf, (i * 37) % n) + tex1Dfetch<float>(tf, n + 5 + i);
  iout[i] = tex1Dfetch<int2>(ti, n - 1 - i);
  uout[i] = tex1Dfetch<float4>(tu, i);
}

static cudaTextureObject_t linear_texture(void* p, size_t bytes, cudaChannelFormatDesc desc,
                                          cudaTextureReadMode mode) {
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeLinear;
  res.res.linear.devPtr = p;
  res.res.linear.desc = desc;
  res.res.linear.sizeInBytes = bytes;
  cudaTextureDesc td{};
  td.readMode = mode;
  cudaTextureObject_t t = 0;
  if (cudaCreateTextureObject(&t, &res, &td, nullptr) != cudaSuccess) return 0;
  return t;
}

int main() {
  const int n = 1000;
  std::vector<float> f(n);
  std::vector<int2> iv(n);
  std::vector<uchar4> u(n);
  for (int i = 0; i < n; ++i) {
    f[i] = i * 0.5f - 17;
    iv[i] = make_int2(i * 3, -i);
    u[i] = make_uchar4(i % 256, 255 - i % 256, 0, 255);
  }
  float *d_f, *d_out;
  int2 *d_i, *d_iout;
  uchar4* d_u;
  float4* d_uout;
  CHECK(cudaMalloc(&d_f, n * sizeof(float)));
  CHECK(cudaMalloc(&d_i, n * sizeof(int2)));
  CHECK(cudaMalloc(&d_u, n * sizeof(uchar4)));
  CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  CHECK(cudaMalloc(&d_iout, n * sizeof(int2)));
  CHECK(cudaMalloc(&d_uout, n * sizeof(float4)));
  CHECK(cudaMemcpy(d_f, f.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_i, iv.data(), n * sizeof(int2), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_u, u.data(), n * sizeof(uchar4), cudaMemcpyHostToDevice));
  cudaTextureObject_t tf = linear_texture(d_f, n * sizeof(float), cudaCreateChannelDesc<float>(),
                                          cudaReadModeElementType);
  cudaTextureObject_t ti =
      linear_texture(d_i, n * sizeof(int2), cudaCreateChannelDesc<int2>(), cudaReadModeElementType);
  cudaTextureObject_t tu = linear_texture(d_u, n * sizeof(uchar4), cudaCreateChannelDesc<uchar4>(),
                                          cudaReadModeNormalizedFloat);
  EXPECT(tf && ti && tu);
  fetch<<<(n + 127) / 128, 128>>>(tf, ti, tu, d_out, d_iout, d_uout, n);
  CHECK_LAUNCH();
  std::vector<float> out(n), want(n);
  std::vector<int2> iout(n);
  std::vector<float4> uout(n);
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(iout.data(), d_iout, n * sizeof(int2), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(uout.data(), d_uout, n * sizeof(float4), cudaMemcpyDeviceToHost));
  std::vector<int> ig(2 * n), iw(2 * n);
  std::vector<float> ug(4 * n), uw(4 * n);
  for (int i = 0; i < n; ++i) {
    want[i] = f[(i * 37) % n]; // past the end: 0
    ig[2 * i] = iout[i].x, ig[2 * i + 1] = iout[i].y;
    iw[2 * i] = iv[n - 1 - i].x, iw[2 * i + 1] = iv[n - 1 - i].y;
    float g[4] = {uout[i].x, uout[i].y, uout[i].z, uout[i].w};
    float w[4] = {u[i].x / 255.0f, u[i].y / 255.0f, 0, 1};
    for (int k = 0; k < 4; ++k)
      ug[4 * i + k] = g[k], uw[4 * i + k] = w[k];
  }
  expect_equal("float fetch", out.data(), want.data(), n);
  expect_equal("int2 fetch", ig.data(), iw.data(), 2 * n);
  expect_near("normalized uchar4 fetch", ug.data(), uw.data(), 4 * n, 1e-6);
  for (auto t : {tf, ti, tu})
    CHECK(cudaDestroyTextureObject(t));
  return report("texture_linear");
}
