// Texture objects over pitched 2D memory (cudaMallocPitch): tex2D with point filtering and
// unnormalized coordinates, addressed inside the image, clamped outside it, and with
// border addressing (zero outside).
#include <vector>

#include "check.h"

constexpr int W = 37, H = 19;

__global__ void sample(cudaTextureObject_t clamp, cudaTextureObject_t border, float* out) {
  int x = threadIdx.x, y = blockIdx.x; // a (W + 8) x (H + 4) window starting at (-4, -2)
  float u = x - 4 + 0.5f, v = y - 2 + 0.5f;
  int w = blockDim.x;
  out[(y * w + x) * 2] = tex2D<float>(clamp, u, v);
  out[(y * w + x) * 2 + 1] = tex2D<float>(border, u + 0.25f, v - 0.25f); // same texel
}

int main() {
  std::vector<float> img(W * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      img[y * W + x] = y * 100 + x;
  float* d;
  size_t pitch = 0;
  CHECK(cudaMallocPitch(&d, &pitch, W * sizeof(float), H));
  EXPECT(pitch >= W * sizeof(float));
  CHECK(cudaMemcpy2D(d, pitch, img.data(), W * sizeof(float), W * sizeof(float), H,
                     cudaMemcpyHostToDevice));
  cudaTextureObject_t tex[2];
  for (int k = 0; k < 2; ++k) {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = d;
    res.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    res.res.pitch2D.width = W;
    res.res.pitch2D.height = H;
    res.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc td{};
    td.addressMode[0] = td.addressMode[1] = k == 0 ? cudaAddressModeClamp : cudaAddressModeBorder;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    CHECK(cudaCreateTextureObject(&tex[k], &res, &td, nullptr));
  }
  const int ww = W + 8, wh = H + 4;
  float* d_out;
  CHECK(cudaMalloc(&d_out, ww * wh * 2 * sizeof(float)));
  sample<<<wh, ww>>>(tex[0], tex[1], d_out);
  CHECK_LAUNCH();
  std::vector<float> out(ww * wh * 2), want(ww * wh * 2);
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int y = 0; y < wh; ++y)
    for (int x = 0; x < ww; ++x) {
      int ix = x - 4, iy = y - 2;
      int cx = ix < 0 ? 0 : ix >= W ? W - 1 : ix, cy = iy < 0 ? 0 : iy >= H ? H - 1 : iy;
      bool inside = ix >= 0 && ix < W && iy >= 0 && iy < H;
      want[(y * ww + x) * 2] = img[cy * W + cx];
      want[(y * ww + x) * 2 + 1] = inside ? img[iy * W + ix] : 0.0f;
    }
  expect_equal("clamp / border samples", out.data(), want.data(), out.size());
  return report("texture_pitch2d");
}
