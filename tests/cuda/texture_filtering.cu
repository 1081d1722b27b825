// Texture sampling rules: point and linear filtering of 1D, 2D and 3D CUDA arrays under
// every address mode (wrap, mirror, clamp, border with a border color), normalized and
// element coordinates, linear filtering of uchar4 read as normalized floats, tex2Dgather,
// and txq. Linear weights are the texture unit's 9-bit fixed point (8 fractional bits):
// the host reference rounds each fraction to a multiple of 1/256, and the sample points are
// chosen so that this rounding changes the results. A last kernel reads through a handle
// that is not a texture object: the launch fails and the process survives.
#include <cmath>
#include <vector>

#include "check.h"

constexpr int N1 = 8, S1 = 128;       // 1D texels, samples
constexpr int W2 = 5, H2 = 4, S2 = 24; // 2D texels, samples per side
constexpr int N3 = 3, S3 = 9;          // 3D texels per side, samples per side
constexpr int kModes = 4;              // wrap, mirror, clamp, border

__device__ __host__ inline float x1_at(int k) { return k * 0.0371f - 1.3f; }
__device__ __host__ inline float u2_at(int k) { return k * 0.0637f - 0.41f; }
__device__ __host__ inline float e2_at(int k) { return k * 0.3f - 1.1f; } // element coordinates
__device__ __host__ inline float e3_at(int k) { return k * 0.43f - 0.6f; }

struct Textures {
  cudaTextureObject_t one[2 * kModes + 2]; // [filter * kModes + mode], then linear clamp / border unnormalized
  cudaTextureObject_t two_float2, two_uchar4, three;
};

__global__ void sample(const Textures* t, float* out1, float2* out2, float4* out2u, float4* gather,
                       float* out3, unsigned* sizes) {
  int k = threadIdx.x;
  for (int i = 0; i < 2 * kModes + 2 && k < S1; ++i) {
    float x = i < 2 * kModes ? x1_at(k) : x1_at(k) * N1 + 2.0f; // element coordinates for the last two
    out1[i * S1 + k] = tex1D<float>(t->one[i], x);
  }
  if (k < S2 * S2) {
    int a = k % S2, b = k / S2;
    out2[k] = tex2D<float2>(t->two_float2, u2_at(a), u2_at(b) * 1.3f);
    out2u[k] = tex2D<float4>(t->two_uchar4, e2_at(a), e2_at(b));
    gather[k] = tex2Dgather<float4>(t->two_float2, u2_at(a), u2_at(b) * 1.3f, 1);
  }
  if (k < S3 * S3) {
    for (int z = 0; z < S3; ++z)
      out3[z * S3 * S3 + k] = tex3D<float>(t->three, e3_at(k % S3), e3_at(k / S3), e3_at(z));
  }
  if (k == 0) {
    unsigned w, h;
    asm("txq.width.b32 %0, [%1];" : "=r"(w) : "l"(t->two_uchar4));
    asm("txq.height.b32 %0, [%1];" : "=r"(h) : "l"(t->two_uchar4));
    sizes[0] = w, sizes[1] = h;
  }
}

__global__ void bad_handle(cudaTextureObject_t t, float* out) { out[threadIdx.x] = tex1D<float>(t, 0.5f); }

// ---- host reference: CUDA's texture fetching rules, addressing on texel indices

static const cudaTextureAddressMode kModeList[kModes] = {cudaAddressModeWrap, cudaAddressModeMirror,
                                                         cudaAddressModeClamp, cudaAddressModeBorder};

// Index i along n texels, or -1 for the border.
static int address(int i, int n, cudaTextureAddressMode mode) {
  switch (mode) {
  case cudaAddressModeWrap:
    return ((i % n) + n) % n;
  case cudaAddressModeMirror: {
    int m = ((i % (2 * n)) + 2 * n) % (2 * n);
    return m < n ? m : 2 * n - 1 - m;
  }
  case cudaAddressModeBorder:
    return i < 0 || i >= n ? -1 : i;
  default:
    return i < 0 ? 0 : i >= n ? n - 1 : i;
  }
}

// Texel-space position of a coordinate; normalized coordinates are wrapped (or mirrored
// over two periods) before scaling, as the texture unit does.
static float position(float x, int n, bool normalized, cudaTextureAddressMode mode) {
  if (!normalized) return x;
  if (mode == cudaAddressModeWrap) x -= std::floor(x);
  if (mode == cudaAddressModeMirror) x -= 2 * std::floor(x * 0.5f);
  return x * n;
}

static float weight9(float frac) { return std::nearbyint(frac * 256.0f) / 256.0f; }

struct Axis {
  int lo, hi;  // texel indices after addressing (-1: border)
  float a;     // weight of hi
};

static Axis linear_axis(float x, int n, bool normalized, cudaTextureAddressMode mode) {
  float xb = position(x, n, normalized, mode) - 0.5f;
  int i = int(std::floor(xb));
  return {address(i, n, mode), address(i + 1, n, mode), weight9(xb - std::floor(xb))};
}

static int point_index(float x, int n, bool normalized, cudaTextureAddressMode mode) {
  return address(int(std::floor(position(x, n, normalized, mode))), n, mode);
}

int main() {
  // ---- 1D float array, 8 texels
  std::vector<float> v1(N1);
  for (int i = 0; i < N1; ++i) v1[i] = float(i * i + 1);
  cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
  cudaArray_t a1;
  CHECK(cudaMallocArray(&a1, &fdesc, N1));
  CHECK(cudaMemcpy2DToArray(a1, 0, 0, v1.data(), N1 * 4, N1 * 4, 1, cudaMemcpyHostToDevice));
  const float border1 = -5.0f;
  Textures t{};
  auto make = [&](cudaArray_t a, cudaTextureAddressMode mode, cudaTextureFilterMode filter, bool normalized,
                  cudaTextureReadMode read, float4 border, cudaTextureObject_t* out) {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaTextureDesc td{};
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = mode;
    td.filterMode = filter;
    td.readMode = read;
    td.normalizedCoords = normalized;
    td.borderColor[0] = border.x, td.borderColor[1] = border.y;
    td.borderColor[2] = border.z, td.borderColor[3] = border.w;
    return cudaCreateTextureObject(out, &res, &td, nullptr);
  };
  float4 b1 = make_float4(border1, border1, border1, border1);
  for (int f = 0; f < 2; ++f)
    for (int m = 0; m < kModes; ++m)
      CHECK(make(a1, kModeList[m], f ? cudaFilterModeLinear : cudaFilterModePoint, true, cudaReadModeElementType,
                 b1, &t.one[f * kModes + m]));
  CHECK(make(a1, cudaAddressModeClamp, cudaFilterModeLinear, false, cudaReadModeElementType, b1, &t.one[8]));
  CHECK(make(a1, cudaAddressModeBorder, cudaFilterModeLinear, false, cudaReadModeElementType, b1, &t.one[9]));

  // ---- 2D float2 array (wrap, normalized, linear; gather-capable) and uchar4 (border, elements)
  std::vector<float2> v2(W2 * H2);
  std::vector<uchar4> u2(W2 * H2);
  for (int y = 0; y < H2; ++y)
    for (int x = 0; x < W2; ++x) {
      v2[y * W2 + x] = make_float2(float(x * 10 + y), float((x * 3 + y * 7) % 11) - 4);
      u2[y * W2 + x] = make_uchar4(x * 50, y * 60, (x * y * 37) % 256, 255 - x * 20);
    }
  cudaChannelFormatDesc f2desc = cudaCreateChannelDesc<float2>(), u4desc = cudaCreateChannelDesc<uchar4>();
  cudaArray_t a2, a2u;
  CHECK(cudaMallocArray(&a2, &f2desc, W2, H2, cudaArrayTextureGather));
  CHECK(cudaMallocArray(&a2u, &u4desc, W2, H2));
  CHECK(cudaMemcpy2DToArray(a2, 0, 0, v2.data(), W2 * 8, W2 * 8, H2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy2DToArray(a2u, 0, 0, u2.data(), W2 * 4, W2 * 4, H2, cudaMemcpyHostToDevice));
  CHECK(make(a2, cudaAddressModeWrap, cudaFilterModeLinear, true, cudaReadModeElementType, b1, &t.two_float2));
  const float4 border2 = make_float4(0.25f, 0.5f, 0.75f, 1.0f);
  CHECK(make(a2u, cudaAddressModeBorder, cudaFilterModeLinear, false, cudaReadModeNormalizedFloat, border2,
             &t.two_uchar4));

  // ---- 3D float array, trilinear, clamped element coordinates
  std::vector<float> v3(N3 * N3 * N3);
  for (int i = 0; i < N3 * N3 * N3; ++i) v3[i] = float((i * 7) % 13);
  cudaArray_t a3;
  CHECK(cudaMalloc3DArray(&a3, &fdesc, make_cudaExtent(N3, N3, N3)));
  cudaMemcpy3DParms copy{};
  copy.srcPtr = make_cudaPitchedPtr(v3.data(), N3 * 4, N3, N3);
  copy.dstArray = a3;
  copy.extent = make_cudaExtent(N3, N3, N3);
  copy.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&copy));
  CHECK(make(a3, cudaAddressModeClamp, cudaFilterModeLinear, false, cudaReadModeElementType, b1, &t.three));

  Textures* d_t;
  float *d_out1, *d_out3;
  float2* d_out2;
  float4 *d_out2u, *d_gather;
  unsigned* d_sizes;
  CHECK(cudaMalloc(&d_t, sizeof t));
  CHECK(cudaMemcpy(d_t, &t, sizeof t, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&d_out1, (2 * kModes + 2) * S1 * sizeof(float)));
  CHECK(cudaMalloc(&d_out2, S2 * S2 * sizeof(float2)));
  CHECK(cudaMalloc(&d_out2u, S2 * S2 * sizeof(float4)));
  CHECK(cudaMalloc(&d_gather, S2 * S2 * sizeof(float4)));
  CHECK(cudaMalloc(&d_out3, S3 * S3 * S3 * sizeof(float)));
  CHECK(cudaMalloc(&d_sizes, 2 * sizeof(unsigned)));
  static_assert(S2 * S2 <= 1024 && S1 <= S2 * S2, "one block covers every sample");
  sample<<<1, S2 * S2>>>(d_t, d_out1, d_out2, d_out2u, d_gather, d_out3, d_sizes);
  CHECK_LAUNCH();

  std::vector<float> out1((2 * kModes + 2) * S1), out3(S3 * S3 * S3);
  std::vector<float2> out2(S2 * S2);
  std::vector<float4> out2u(S2 * S2), gather(S2 * S2);
  unsigned sizes[2];
  CHECK(cudaMemcpy(out1.data(), d_out1, out1.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(out2.data(), d_out2, out2.size() * sizeof(float2), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(out2u.data(), d_out2u, out2u.size() * sizeof(float4), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(gather.data(), d_gather, gather.size() * sizeof(float4), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(out3.data(), d_out3, out3.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sizes, d_sizes, sizeof sizes, cudaMemcpyDeviceToHost));

  // ---- 1D reference
  auto t1 = [&](int i) { return i < 0 ? border1 : v1[i]; };
  std::vector<float> want1(out1.size());
  int rounding_matters = 0;
  for (int k = 0; k < S1; ++k) {
    for (int m = 0; m < kModes; ++m) {
      float x = x1_at(k);
      want1[m * S1 + k] = t1(point_index(x, N1, true, kModeList[m]));
      Axis ax = linear_axis(x, N1, true, kModeList[m]);
      want1[(kModes + m) * S1 + k] = (1 - ax.a) * t1(ax.lo) + ax.a * t1(ax.hi);
      float xb = position(x, N1, true, kModeList[m]) - 0.5f, exact = xb - std::floor(xb);
      if (std::fabs((exact - ax.a) * (t1(ax.hi) - t1(ax.lo))) > 1e-3f) ++rounding_matters;
    }
    for (int m = 2; m < 4; ++m) {
      Axis ax = linear_axis(x1_at(k) * N1 + 2.0f, N1, false, kModeList[m]);
      want1[(2 * kModes + m - 2) * S1 + k] = (1 - ax.a) * t1(ax.lo) + ax.a * t1(ax.hi);
    }
  }
  EXPECT(rounding_matters > 50); // the samples tell 9-bit weights from exact ones
  static const char* names[] = {"point wrap",  "point mirror",  "point clamp",  "point border",
                                "linear wrap", "linear mirror", "linear clamp", "linear border",
                                "linear clamp, element coordinates", "linear border, element coordinates"};
  for (int i = 0; i < 2 * kModes + 2; ++i)
    expect_near(names[i], out1.data() + i * S1, want1.data() + i * S1, S1, 1e-4);

  // ---- 2D references
  std::vector<float> g2(S2 * S2 * 2), w2(S2 * S2 * 2), gu(S2 * S2 * 4), wu(S2 * S2 * 4), gg(S2 * S2 * 4),
      wg(S2 * S2 * 4);
  for (int k = 0; k < S2 * S2; ++k) {
    int a = k % S2, b = k / S2;
    Axis ax = linear_axis(u2_at(a), W2, true, cudaAddressModeWrap);
    Axis ay = linear_axis(u2_at(b) * 1.3f, H2, true, cudaAddressModeWrap);
    auto at = [&](int x, int y) { return v2[y * W2 + x]; };
    float2 p00 = at(ax.lo, ay.lo), p10 = at(ax.hi, ay.lo), p01 = at(ax.lo, ay.hi), p11 = at(ax.hi, ay.hi);
    auto mix = [&](float c00, float c10, float c01, float c11) {
      return (1 - ax.a) * (1 - ay.a) * c00 + ax.a * (1 - ay.a) * c10 + (1 - ax.a) * ay.a * c01 + ax.a * ay.a * c11;
    };
    g2[2 * k] = out2[k].x, g2[2 * k + 1] = out2[k].y;
    w2[2 * k] = mix(p00.x, p10.x, p01.x, p11.x);
    w2[2 * k + 1] = mix(p00.y, p10.y, p01.y, p11.y);
    // tld4: the .g channel of the footprint, counter-clockwise from the lower left
    float gw[4] = {p01.y, p11.y, p10.y, p00.y};
    float gr[4] = {gather[k].x, gather[k].y, gather[k].z, gather[k].w};
    for (int c = 0; c < 4; ++c) gg[4 * k + c] = gr[c], wg[4 * k + c] = gw[c];
    // uchar4 normalized, border, element coordinates
    Axis ex = linear_axis(e2_at(a), W2, false, cudaAddressModeBorder);
    Axis ey = linear_axis(e2_at(b), H2, false, cudaAddressModeBorder);
    auto texel = [&](int x, int y, int c) {
      const float bc[4] = {border2.x, border2.y, border2.z, border2.w};
      if (x < 0 || y < 0) return bc[c];
      uchar4 u = u2[y * W2 + x];
      const unsigned char ch[4] = {u.x, u.y, u.z, u.w};
      return ch[c] / 255.0f;
    };
    float got[4] = {out2u[k].x, out2u[k].y, out2u[k].z, out2u[k].w};
    for (int c = 0; c < 4; ++c) {
      gu[4 * k + c] = got[c];
      wu[4 * k + c] = (1 - ex.a) * (1 - ey.a) * texel(ex.lo, ey.lo, c) + ex.a * (1 - ey.a) * texel(ex.hi, ey.lo, c) +
                      (1 - ex.a) * ey.a * texel(ex.lo, ey.hi, c) + ex.a * ey.a * texel(ex.hi, ey.hi, c);
    }
  }
  expect_near("2D float2, linear, wrap, normalized", g2.data(), w2.data(), g2.size(), 1e-4);
  expect_near("2D uchar4 as normalized float, linear, border", gu.data(), wu.data(), gu.size(), 1e-5);
  expect_equal("tex2Dgather .g", gg.data(), wg.data(), gg.size());

  // ---- 3D reference
  std::vector<float> want3(out3.size());
  for (int z = 0; z < S3; ++z)
    for (int k = 0; k < S3 * S3; ++k) {
      Axis ax[3] = {linear_axis(e3_at(k % S3), N3, false, cudaAddressModeClamp),
                    linear_axis(e3_at(k / S3), N3, false, cudaAddressModeClamp),
                    linear_axis(e3_at(z), N3, false, cudaAddressModeClamp)};
      float sum = 0;
      for (int corner = 0; corner < 8; ++corner) {
        int i[3];
        float w = 1;
        for (int d = 0; d < 3; ++d) {
          bool hi = (corner >> d) & 1;
          i[d] = hi ? ax[d].hi : ax[d].lo;
          w *= hi ? ax[d].a : 1 - ax[d].a;
        }
        sum += w * v3[(i[2] * N3 + i[1]) * N3 + i[0]];
      }
      want3[z * S3 * S3 + k] = sum;
    }
  expect_near("3D trilinear, clamp", out3.data(), want3.data(), out3.size(), 1e-4);
  EXPECT(sizes[0] == W2 && sizes[1] == H2);

  // ---- a handle that is no texture object: the thread traps, the launch fails
  float* d_bad;
  CHECK(cudaMalloc(&d_bad, 32 * sizeof(float)));
  bad_handle<<<1, 32>>>(cudaTextureObject_t(reinterpret_cast<unsigned long long>(d_bad)), d_bad);
  cudaError_t sync = cudaDeviceSynchronize();
  if (sync != cudaErrorLaunchFailure) fprintf(stderr, "bad handle: %s\n", cudaGetErrorName(sync));
  EXPECT(sync == cudaErrorLaunchFailure);
  return report("texture_filtering");
}
