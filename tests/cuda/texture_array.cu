// Texture objects over CUDA arrays: a 2D float array read with linear filtering through
// normalized coordinates and wrap addressing (at fractions the texture unit's 8-bit weights
// hold exactly), and a 1D uchar array read as normalized floats with clamping.
#include <cmath>
#include <vector>

#include "check.h"

constexpr int W = 16, H = 8, N1 = 64;

__global__ void sample(cudaTextureObject_t t2, cudaTextureObject_t t1, float* out, float* out1) {
  int x = threadIdx.x, y = blockIdx.x; // 4 samples per texel step, over 1.5 image widths
  float u = (x * 0.25f) / W - 0.25f, v = (y * 0.25f + 0.5f) / H;
  out[y * blockDim.x + x] = tex2D<float>(t2, u, v);
  if (y == 0) out1[x] = tex1D<float>(t1, x * 2.0f - 20.0f);
}

// The CUDA programming guide's linear filtering (texture fetching appendix), wrapped.
static float filtered(const std::vector<float>& img, float u, float v) {
  u -= std::floor(u), v -= std::floor(v);
  float xb = u * W - 0.5f, yb = v * H - 0.5f;
  int i = int(std::floor(xb)), j = int(std::floor(yb));
  float a = xb - i, b = yb - j;
  auto at = [&](int x, int y) { return img[((y % H + H) % H) * W + (x % W + W) % W]; };
  return (1 - a) * (1 - b) * at(i, j) + a * (1 - b) * at(i + 1, j) + (1 - a) * b * at(i, j + 1) +
         a * b * at(i + 1, j + 1);
}

int main() {
  std::vector<float> img(W * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      img[y * W + x] = float((x * 7 + y * 3) % 11);
  std::vector<unsigned char> line(N1);
  for (int i = 0; i < N1; ++i)
    line[i] = (unsigned char)(i * 4);
  cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
  cudaChannelFormatDesc udesc = cudaCreateChannelDesc<unsigned char>();
  cudaArray_t a2, a1;
  CHECK(cudaMallocArray(&a2, &fdesc, W, H));
  CHECK(cudaMallocArray(&a1, &udesc, N1));
  CHECK(cudaMemcpy2DToArray(a2, 0, 0, img.data(), W * sizeof(float), W * sizeof(float), H,
                            cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy2DToArray(a1, 0, 0, line.data(), N1, N1, 1, cudaMemcpyHostToDevice));
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a2;
  cudaTextureDesc td{};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeWrap;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 1;
  cudaTextureObject_t t2, t1;
  CHECK(cudaCreateTextureObject(&t2, &res, &td, nullptr));
  res.res.array.array = a1;
  td.addressMode[0] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModePoint;
  td.readMode = cudaReadModeNormalizedFloat;
  td.normalizedCoords = 0;
  CHECK(cudaCreateTextureObject(&t1, &res, &td, nullptr));
  const int xs = 6 * W, ys = 4 * H;
  float *d_out, *d_out1;
  CHECK(cudaMalloc(&d_out, xs * ys * sizeof(float)));
  CHECK(cudaMalloc(&d_out1, xs * sizeof(float)));
  sample<<<ys, xs>>>(t2, t1, d_out, d_out1);
  CHECK_LAUNCH();
  std::vector<float> out(xs * ys), want(xs * ys), out1(xs), want1(xs);
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(out1.data(), d_out1, xs * sizeof(float), cudaMemcpyDeviceToHost));
  for (int y = 0; y < ys; ++y)
    for (int x = 0; x < xs; ++x)
      want[y * xs + x] = filtered(img, (x * 0.25f) / W - 0.25f, (y * 0.25f + 0.5f) / H);
  for (int x = 0; x < xs; ++x) {
    int i = int(std::floor(x * 2.0f - 20.0f));
    i = i < 0 ? 0 : i >= N1 ? N1 - 1 : i;
    want1[x] = line[i] / 255.0f;
  }
  expect_near("linear, wrapped", out.data(), want.data(), out.size(), 1e-5);
  expect_near("1D normalized, clamped", out1.data(), want1.data(), xs, 1e-6);
  CHECK(cudaDestroyTextureObject(t2));
  CHECK(cudaDestroyTextureObject(t1));
  CHECK(cudaFreeArray(a2));
  CHECK(cudaFreeArray(a1));
  return report("texture_array");
}
