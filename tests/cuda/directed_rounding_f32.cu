// f32 add, mul and fma in the directed rounding modes (__fadd_rd ... __fmaf_rz: add.rm.f32,
// mul.rp.f32, fma.rz.f32 ...) against the host's own arithmetic under fesetround, on
// random operands of every magnitude and on cases near zero, overflow and subnormals; and
// fma of a saturated value with literals whose results share one binade of unit ulp (the
// form of nvcc's expf, which the CPU backend rounds with floor/ceil), next to one whose
// results do not.
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "check.h"

constexpr int kOps = 12; // add, mul, fma x rd, ru, rz, rn

__global__ void directed(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float x = a[i], y = b[i], z = c[i];
  float* o = out + size_t(i) * kOps;
  o[0] = __fadd_rd(x, y);
  o[1] = __fadd_ru(x, y);
  o[2] = __fadd_rz(x, y);
  o[3] = __fadd_rn(x, y);
  o[4] = __fmul_rd(x, y);
  o[5] = __fmul_ru(x, y);
  o[6] = __fmul_rz(x, y);
  o[7] = __fmul_rn(x, y);
  o[8] = __fmaf_rd(x, y, z);
  o[9] = __fmaf_ru(x, y, z);
  o[10] = __fmaf_rz(x, y, z);
  o[11] = __fmaf_rn(x, y, z);
}

constexpr int kSaturatedOps = 5;

__global__ void saturated(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float x = __saturatef(a[i]);
  float* o = out + size_t(i) * kSaturatedOps;
  o[0] = __fmaf_rd(x, 252.0f, 12582913.0f);
  o[1] = __fmaf_ru(x, 252.0f, 12582913.0f);
  o[2] = __fmaf_rz(x, -252.0f, -12582913.0f);
  o[3] = __fmaf_rd(252.0f, x, -12582913.0f);
  o[4] = __fmaf_rd(x, 8388608.0f, 12582913.0f); // results beyond 2^24: the general rounding
}

static float saturate(float v) { return std::isnan(v) ? 0.0f : std::fmin(std::fmax(v, 0.0f), 1.0f); }

__attribute__((noinline)) static void saturated_reference(float v, float* o) {
  volatile float x = saturate(v);
  std::fesetround(FE_DOWNWARD);
  o[0] = std::fmaf(x, 252.0f, 12582913.0f);
  o[3] = std::fmaf(252.0f, x, -12582913.0f);
  o[4] = std::fmaf(x, 8388608.0f, 12582913.0f);
  std::fesetround(FE_UPWARD);
  o[1] = std::fmaf(x, 252.0f, 12582913.0f);
  std::fesetround(FE_TOWARDZERO);
  o[2] = std::fmaf(x, -252.0f, -12582913.0f);
  std::fesetround(FE_TONEAREST);
}

static volatile float sink;

__attribute__((noinline)) static void reference(float x, float y, float z, float* o) {
  const int modes[] = {FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO, FE_TONEAREST};
  for (int m = 0; m < 4; ++m) {
    std::fesetround(modes[m]);
    volatile float vx = x, vy = y, vz = z;
    volatile float add = vx + vy;
    volatile float mul = vx * vy;
    volatile float fma = std::fmaf(vx, vy, vz);
    o[m] = add;
    o[4 + m] = mul;
    o[8 + m] = fma;
  }
  std::fesetround(FE_TONEAREST);
}

static float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

static uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

int main() {
  std::mt19937 rng(2026);
  std::vector<float> a, b, c;
  auto random_float = [&](int lo, int hi) { // sign, exponent in [lo, hi], random mantissa
    uint32_t e = uint32_t(std::uniform_int_distribution<int>(lo, hi)(rng) + 127);
    return from_bits((rng() & 1u) << 31 | std::min(e, 254u) << 23 | (rng() & 0x7fffffu));
  };
  for (int i = 0; i < 60000; ++i) {
    switch (i % 4) {
    case 0: // anything
      a.push_back(random_float(-126, 127)), b.push_back(random_float(-126, 127)), c.push_back(random_float(-126, 127));
      break;
    case 1: // close magnitudes: cancellation
      a.push_back(random_float(-3, 3)), b.push_back(random_float(-3, 3)), c.push_back(-a.back() * b.back() * 1.0000001f);
      break;
    case 2: // results near the subnormal range
      a.push_back(random_float(-80, -60)), b.push_back(random_float(-80, -60)), c.push_back(random_float(-150, -120));
      break;
    default: // results near overflow
      a.push_back(random_float(60, 70)), b.push_back(random_float(60, 66)), c.push_back(random_float(120, 127));
      break;
    }
  }
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, from_bits(1), from_bits(0x80000001u), from_bits(0x7f7fffffu),
                            from_bits(0xff7fffffu), INFINITY, -INFINITY, from_bits(0x00800000u), 3.0f};
  for (float x : specials)
    for (float y : specials)
      for (float z : specials)
        a.push_back(x), b.push_back(y), c.push_back(z);
  const int n = int(a.size());
  float *da, *db, *dc, *dout;
  CHECK(cudaMalloc(&da, n * sizeof(float)));
  CHECK(cudaMalloc(&db, n * sizeof(float)));
  CHECK(cudaMalloc(&dc, n * sizeof(float)));
  CHECK(cudaMalloc(&dout, size_t(n) * kOps * sizeof(float)));
  CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, c.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  directed<<<(n + 255) / 256, 256>>>(da, db, dc, dout, n);
  CHECK_LAUNCH();
  std::vector<float> out(size_t(n) * kOps);
  CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  static const char* const names[kOps] = {"add.rm", "add.rp", "add.rz", "add.rn", "mul.rm", "mul.rp",
                                          "mul.rz", "mul.rn", "fma.rm", "fma.rp", "fma.rz", "fma.rn"};
  int shown = 0;
  for (int i = 0; i < n; ++i) {
    float want[kOps];
    reference(a[i], b[i], c[i], want);
    for (int k = 0; k < kOps; ++k) {
      float got = out[size_t(i) * kOps + k];
      bool same = std::isnan(want[k]) ? std::isnan(got) : to_bits(got) == to_bits(want[k]);
      if (!same) {
        ++failures;
        if (shown++ < 10)
          fprintf(stderr, "%s(%a, %a, %a): got %a, want %a\n", names[k], a[i], b[i], c[i], got, want[k]);
      }
    }
  }
  printf("directed rounding f32: %d operand triples, %d results\n", n, n * kOps);

  // Saturated operands: every 2^-20 step of [-0.25, 1.25], random values, specials.
  std::vector<float> s;
  for (int i = 0; i <= 3 << 19; ++i)
    s.push_back(-0.25f + float(i) * 0x1p-20f);
  for (int i = 0; i < 20000; ++i)
    s.push_back(random_float(-30, 2));
  for (float x : {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, from_bits(1), from_bits(0x3f7fffffu)})
    s.push_back(x);
  const int m = int(s.size());
  float *ds, *dsout;
  CHECK(cudaMalloc(&ds, m * sizeof(float)));
  CHECK(cudaMalloc(&dsout, size_t(m) * kSaturatedOps * sizeof(float)));
  CHECK(cudaMemcpy(ds, s.data(), m * sizeof(float), cudaMemcpyHostToDevice));
  saturated<<<(m + 255) / 256, 256>>>(ds, dsout, m);
  CHECK_LAUNCH();
  std::vector<float> sout(size_t(m) * kSaturatedOps);
  CHECK(cudaMemcpy(sout.data(), dsout, sout.size() * sizeof(float), cudaMemcpyDeviceToHost));
  static const char* const saturated_names[kSaturatedOps] = {"fma.rm(x, 252, c)", "fma.rp(x, 252, c)",
                                                             "fma.rz(x, -252, -c)", "fma.rm(252, x, -c)",
                                                             "fma.rm(x, 2^23, c)"};
  for (int i = 0; i < m; ++i) {
    float want[kSaturatedOps];
    saturated_reference(s[i], want);
    for (int k = 0; k < kSaturatedOps; ++k) {
      float got = sout[size_t(i) * kSaturatedOps + k];
      if (to_bits(got) != to_bits(want[k])) {
        ++failures;
        if (shown++ < 20)
          fprintf(stderr, "%s with x = sat(%a): got %a, want %a\n", saturated_names[k], s[i], got, want[k]);
      }
    }
  }
  printf("directed rounding f32 of saturated values: %d operands, %d results\n", m, m * kSaturatedOps);
  CHECK(cudaFree(ds));
  CHECK(cudaFree(dsout));
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  CHECK(cudaFree(dout));
  return report("directed_rounding_f32");
}
