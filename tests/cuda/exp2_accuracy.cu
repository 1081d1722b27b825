// ex2.approx.f32 (and .ftz) over its whole range: every result within the ISA's 2 ulp of
// 2^x, infinities and NaN passed on, subnormal results kept (and flushed by .ftz). The
// inputs sweep [-160, 130] densely and take every exponent from 2^-30 to 2^7.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "check.h"

__global__ void ex2(const float* in, float* out, float* out_ftz, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float r, f;
  asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(in[i]));
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(f) : "f"(in[i]));
  out[i] = r;
  out_ftz[i] = f;
}

// Distance in units of the last place of the f32 grid around `want` (subnormals: 2^-149).
static double ulps(float got, double want) {
  if (want >= 0x1p128) // beyond the f32 range: infinity (or the largest finite value, 1 ulp away)
    return std::isinf(got) ? 0 : got == 0x1.fffffep127f ? 1 : 1e9;
  int e;
  std::frexp(want, &e);
  double ulp = std::ldexp(1.0, std::max(e - 24, -149));
  return std::fabs(double(got) - want) / ulp;
}

int main() {
  std::vector<float> in;
  for (int k = 0; k <= 1 << 20; ++k)
    in.push_back(float(-160.0 + 290.0 * k / (1 << 20)));
  for (uint32_t b = 0x30800000u; b < 0x43000000u; b += 0x1357u) { // 2^-30 .. 2^7, both signs
    float f;
    std::memcpy(&f, &b, 4);
    in.push_back(f);
    in.push_back(-f);
  }
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 127.99999f, 128.0f, -149.0f, -150.0f, -126.0f};
  in.insert(in.end(), std::begin(specials), std::end(specials));
  const int n = int(in.size());
  float *d_in, *d_out, *d_ftz;
  CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  CHECK(cudaMalloc(&d_ftz, n * sizeof(float)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  ex2<<<(n + 255) / 256, 256>>>(d_in, d_out, d_ftz, n);
  CHECK_LAUNCH();
  std::vector<float> out(n), ftz(n);
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(ftz.data(), d_ftz, n * sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0;
  int shown = 0;
  for (int i = 0; i < n; ++i) {
    const float x = in[i];
    if (std::isnan(x)) {
      EXPECT(std::isnan(out[i]) && std::isnan(ftz[i]));
      continue;
    }
    const double want = std::exp2(double(x));
    const double err = ulps(out[i], want);
    worst = std::max(worst, err);
    // .ftz: subnormal results are flushed to zero (and subnormal inputs, which give 1).
    const bool subnormal = want < 0x1p-126;
    const bool ftz_ok = subnormal ? (ftz[i] == 0.0f || ulps(ftz[i], want) <= 2) : ulps(ftz[i], want) <= 2;
    if ((err > 2 || !ftz_ok) && shown++ < 10) {
      fprintf(stderr, "ex2(%a): got %a (ftz %a), want %a (%.2f ulp)\n", x, out[i], ftz[i], want, err);
      ++failures;
    }
  }
  printf("ex2.approx.f32: %d inputs, worst error %.3f ulp\n", n, worst);
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(d_ftz));
  return report("exp2_accuracy");
}
