// Texture element formats and the other surface forms: half read as float, signed short
// read as normalized float, int4 read as integers, uchar4 with sRGB conversion, tex2DLod and
// tex2DGrad (one mip level: both read level 0), surf1D of uchar4, surf3D of float4, sust.p
// (formatted) and suq.
#include <cmath>
#include <cuda_fp16.h>
#include <vector>

#include "check.h"

constexpr int W = 6, H = 3, D = 2;

struct Objects {
  cudaTextureObject_t half_tex, short_tex, int_tex, srgb_tex;
  cudaSurfaceObject_t bytes, cube, packed;
};

__global__ void read(Objects o, float* f, int4* i, float4* srgb, unsigned* sizes) {
  int x = threadIdx.x, y = blockIdx.x, k = y * W + x;
  float u = x + 0.5f, v = y + 0.5f;
  f[k * 4 + 0] = tex2D<float>(o.half_tex, u, v);
  f[k * 4 + 1] = tex2D<float>(o.short_tex, u, v);
  f[k * 4 + 2] = tex2DLod<float>(o.half_tex, u, v, 3.0f);
  f[k * 4 + 3] = tex2DGrad<float>(o.short_tex, u, v, make_float2(1, 0), make_float2(0, 1));
  i[k] = tex2D<int4>(o.int_tex, u, v);
  srgb[k] = tex2D<float4>(o.srgb_tex, u, v);
  // surfaces: bytes[x] = (x, y, 2x, 255) via surf1Dwrite; cube[x, y, z] via surf3Dwrite
  if (y == 0) surf1Dwrite(make_uchar4(x, 7, 2 * x, 255), o.bytes, x * 4);
  for (int z = 0; z < D; ++z)
    surf3Dwrite(make_float4(x, y, z, x * y - z), o.cube, x * 16, y, z);
  // sust.p: integer words to an unsigned int8 x4 surface (x in elements)
  if (y == 0) {
    unsigned r = x + 1, g = 2 * x, b = 300 + x, a = 9; // b does not fit a byte: its low 8 bits stay
    asm volatile("sust.p.1d.v4.b32.trap [%0, {%1}], {%2, %3, %4, %5};" ::"l"(o.packed), "r"(x), "r"(r), "r"(g),
                 "r"(b), "r"(a)
                 : "memory");
  }
  if (k == 0) {
    unsigned w, h, d;
    asm("suq.width.b32 %0, [%1];" : "=r"(w) : "l"(o.cube));
    asm("suq.height.b32 %0, [%1];" : "=r"(h) : "l"(o.cube));
    asm("suq.depth.b32 %0, [%1];" : "=r"(d) : "l"(o.cube));
    sizes[0] = w, sizes[1] = h, sizes[2] = d;
  }
}

__global__ void read_back(Objects o, uchar4* bytes, float4* cube) {
  int x = threadIdx.x, y = blockIdx.x;
  if (y == 0) bytes[x] = surf1Dread<uchar4>(o.bytes, x * 4);
  for (int z = 0; z < D; ++z) cube[(z * H + y) * W + x] = surf3Dread<float4>(o.cube, x * 16, y, z);
}

template <typename T>
static cudaArray_t array2d(const std::vector<T>& data, cudaChannelFormatDesc desc = cudaCreateChannelDesc<T>()) {
  cudaArray_t a = nullptr;
  cudaError_t e = cudaMallocArray(&a, &desc, W, H);
  if (e == cudaSuccess)
    e = cudaMemcpy2DToArray(a, 0, 0, data.data(), W * sizeof(T), W * sizeof(T), H, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) fprintf(stderr, "array of %zu-byte elements: %s\n", sizeof(T), cudaGetErrorString(e));
  return e == cudaSuccess ? a : nullptr;
}

static cudaTextureObject_t texture(cudaArray_t a, cudaTextureReadMode read, bool srgb = false) {
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a;
  cudaTextureDesc td{};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModePoint;
  td.readMode = read;
  td.sRGB = srgb;
  cudaTextureObject_t t = 0;
  return cudaCreateTextureObject(&t, &res, &td, nullptr) == cudaSuccess ? t : 0;
}

static cudaSurfaceObject_t surface(cudaArray_t a) {
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a;
  cudaSurfaceObject_t s = 0;
  return cudaCreateSurfaceObject(&s, &res) == cudaSuccess ? s : 0;
}

static float srgb_to_linear(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }

int main() {
  const int n = W * H;
  std::vector<__half> hv(n);
  std::vector<short> sv(n);
  std::vector<int4> iv(n);
  std::vector<uchar4> cv(n);
  for (int k = 0; k < n; ++k) {
    hv[k] = __float2half(k * 0.375f - 2.5f);
    sv[k] = short(k == 0 ? -32768 : k * 2000 - 17000);
    iv[k] = make_int4(k, -k, k * 100000, -2147483647 + k);
    cv[k] = make_uchar4(k * 13, 255 - k * 11, k * 7, k * 5);
  }
  Objects o{};
  cudaArray_t ah = array2d(hv, cudaCreateChannelDescHalf()), as = array2d(sv), ai = array2d(iv), ac = array2d(cv);
  EXPECT(ah && as && ai && ac);
  o.half_tex = texture(ah, cudaReadModeElementType);
  o.short_tex = texture(as, cudaReadModeNormalizedFloat);
  o.int_tex = texture(ai, cudaReadModeElementType);
  o.srgb_tex = texture(ac, cudaReadModeNormalizedFloat, true);
  EXPECT(o.half_tex && o.short_tex && o.int_tex && o.srgb_tex);

  cudaChannelFormatDesc u4 = cudaCreateChannelDesc<uchar4>(), f4 = cudaCreateChannelDesc<float4>();
  cudaArray_t abytes, apacked, acube;
  CHECK(cudaMallocArray(&abytes, &u4, W, 0, cudaArraySurfaceLoadStore));
  CHECK(cudaMallocArray(&apacked, &u4, W, 0, cudaArraySurfaceLoadStore));
  CHECK(cudaMalloc3DArray(&acube, &f4, make_cudaExtent(W, H, D), cudaArraySurfaceLoadStore));
  o.bytes = surface(abytes), o.cube = surface(acube), o.packed = surface(apacked);
  EXPECT(o.bytes && o.cube && o.packed);

  float* d_f;
  int4* d_i;
  float4 *d_srgb, *d_cube;
  uchar4* d_bytes;
  unsigned* d_sizes;
  CHECK(cudaMalloc(&d_f, n * 4 * sizeof(float)));
  CHECK(cudaMalloc(&d_i, n * sizeof(int4)));
  CHECK(cudaMalloc(&d_srgb, n * sizeof(float4)));
  CHECK(cudaMalloc(&d_cube, n * D * sizeof(float4)));
  CHECK(cudaMalloc(&d_bytes, W * sizeof(uchar4)));
  CHECK(cudaMalloc(&d_sizes, 3 * sizeof(unsigned)));
  read<<<H, W>>>(o, d_f, d_i, d_srgb, d_sizes);
  CHECK_LAUNCH();
  read_back<<<H, W>>>(o, d_bytes, d_cube);
  CHECK_LAUNCH();

  std::vector<float> f(n * 4), wf(n * 4);
  std::vector<int4> i(n);
  std::vector<float4> srgb(n), cube(n * D);
  std::vector<uchar4> bytes(W), packed(W);
  unsigned sizes[3];
  CHECK(cudaMemcpy(f.data(), d_f, f.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(i.data(), d_i, n * sizeof(int4), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(srgb.data(), d_srgb, n * sizeof(float4), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(cube.data(), d_cube, cube.size() * sizeof(float4), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(bytes.data(), d_bytes, W * sizeof(uchar4), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy2DFromArray(packed.data(), W * 4, apacked, 0, 0, W * 4, 1, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sizes, d_sizes, sizeof sizes, cudaMemcpyDeviceToHost));

  std::vector<int> gi(n * 4), wi(n * 4), gb(W * 8), wb(W * 8);
  std::vector<float> gs(n * 4), ws(n * 4), gc(n * D * 4), wc(n * D * 4);
  for (int k = 0; k < n; ++k) {
    float h = __half2float(hv[k]), s = std::fmax(sv[k] / 32767.0f, -1.0f);
    wf[k * 4 + 0] = h, wf[k * 4 + 1] = s, wf[k * 4 + 2] = h, wf[k * 4 + 3] = s;
    int g[4] = {i[k].x, i[k].y, i[k].z, i[k].w}, w[4] = {iv[k].x, iv[k].y, iv[k].z, iv[k].w};
    float sg[4] = {srgb[k].x, srgb[k].y, srgb[k].z, srgb[k].w};
    float sw[4] = {srgb_to_linear(cv[k].x / 255.0f), srgb_to_linear(cv[k].y / 255.0f),
                   srgb_to_linear(cv[k].z / 255.0f), cv[k].w / 255.0f}; // alpha stays linear
    for (int c = 0; c < 4; ++c) gi[k * 4 + c] = g[c], wi[k * 4 + c] = w[c], gs[k * 4 + c] = sg[c], ws[k * 4 + c] = sw[c];
  }
  for (int x = 0; x < W; ++x) {
    int g[8] = {bytes[x].x, bytes[x].y, bytes[x].z, bytes[x].w, packed[x].x, packed[x].y, packed[x].z, packed[x].w};
    int w[8] = {x, 7, 2 * x, 255, x + 1, 2 * x, (300 + x) & 255, 9};
    for (int c = 0; c < 8; ++c) gb[x * 8 + c] = g[c], wb[x * 8 + c] = w[c];
  }
  for (int z = 0; z < D; ++z)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        int k = (z * H + y) * W + x;
        float g[4] = {cube[k].x, cube[k].y, cube[k].z, cube[k].w};
        float w[4] = {float(x), float(y), float(z), float(x * y - z)};
        for (int c = 0; c < 4; ++c) gc[k * 4 + c] = g[c], wc[k * 4 + c] = w[c];
      }
  expect_near("half, short normalized, Lod, Grad", f.data(), wf.data(), f.size(), 1e-6);
  expect_equal("int4", gi.data(), wi.data(), gi.size());
  expect_near("sRGB uchar4", gs.data(), ws.data(), gs.size(), 1e-5);
  expect_equal("surf1D uchar4 and sust.p", gb.data(), wb.data(), gb.size());
  expect_equal("surf3D float4", gc.data(), wc.data(), gc.size());
  EXPECT(sizes[0] == W && sizes[1] == H && sizes[2] == D);
  return report("texture_formats");
}
