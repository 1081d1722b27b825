// Level 1 for S, D, C, Z (and the mixed Scasum, Csscal, Csrot ... forms) against
// double-precision references, with positive and negative increments, _64 entry points and
// results in device memory.
#include "blas_test.h"

cublasHandle_t handle;
Rng rng;
const int n = 29;
const int incs[][2] = {{1, 1}, {2, 3}, {-2, 1}};

template <typename T> size_t span(int inc) {
  return size_t(n) * std::abs(inc);
}

template <typename T> void test_reductions() {
  for (const auto& [incx, incy] : incs) {
    auto x = rng.values<T>(span<T>(incx)), y = rng.values<T>(span<T>(incy));
    Device<T> dx(x), dy(y);
    auto xi = [&](int i) { return to_ref(x[strided(i, n, incx)]); };
    auto yi = [&](int i) { return to_ref(y[strided(i, n, incy)]); };
    // amax/amin: |re| + |im|, first index of the extreme, 1-based; 0 for incx <= 0.
    int want_max = 0, want_min = 0;
    if (incx > 0) {
      auto mag = [&](int i) { return std::abs(xi(i).real()) + std::abs(xi(i).imag()); };
      want_max = want_min = 1;
      for (int i = 1; i < n; ++i) {
        if (mag(i) > mag(want_max - 1)) want_max = i + 1;
        if (mag(i) < mag(want_min - 1)) want_min = i + 1;
      }
    }
    int got = -1;
    BLAS_OK(pick<T>(cublasIsamax, cublasIdamax, cublasIcamax, cublasIzamax)(handle, n, dx.ptr, incx,
                                                                            &got));
    tally.check(got == want_max, "I%samax incx %d: %d, want %d", type_name<T>(), incx, got,
                want_max);
    int64_t got64 = -1;
    BLAS_OK(pick<T>(cublasIsamin_64, cublasIdamin_64, cublasIcamin_64,
                    cublasIzamin_64)(handle, n, dx.ptr, incx, &got64));
    tally.check(got64 == want_min, "I%samin_64 incx %d: %lld, want %d", type_name<T>(), incx,
                (long long)got64, want_min);

    using Real =
        std::conditional_t<std::is_same_v<T, cuComplex>, float,
                           std::conditional_t<std::is_same_v<T, cuDoubleComplex>, double, T>>;
    Real asum = -1, nrm = -1;
    BLAS_OK(pick<T>(cublasSasum, cublasDasum, cublasScasum, cublasDzasum)(handle, n, dx.ptr, incx,
                                                                          &asum));
    BLAS_OK(pick<T>(cublasSnrm2, cublasDnrm2, cublasScnrm2, cublasDznrm2)(handle, n, dx.ptr, incx,
                                                                          &nrm));
    double want_asum = 0, want_nrm = 0;
    for (int i = 0; incx > 0 && i < n; ++i) {
      want_asum += std::abs(xi(i).real()) + std::abs(xi(i).imag());
      want_nrm += std::norm(xi(i));
    }
    want_nrm = std::sqrt(want_nrm);
    check_close(std::vector<Real>{asum, nrm}, {R(want_asum), R(want_nrm)}, tolerance<T>(n),
                "%sasum/nrm2 incx %d", type_name<T>(), incx);

    R want_dotu = 0, want_dotc = 0;
    for (int i = 0; i < n; ++i)
      want_dotu += xi(i) * yi(i), want_dotc += std::conj(xi(i)) * yi(i);
    T dot{};
    BLAS_OK(pick<T>(cublasSdot, cublasDdot, cublasCdotu, cublasZdotu)(handle, n, dx.ptr, incx,
                                                                      dy.ptr, incy, &dot));
    check_close(std::vector<T>{dot}, {want_dotu}, tolerance<T>(n), "%sdot(u) incs %d %d",
                type_name<T>(), incx, incy);
    if constexpr (is_complex_v<T>) {
      BLAS_OK(pick<T>(0, 0, cublasCdotc, cublasZdotc)(handle, n, dx.ptr, incx, dy.ptr, incy, &dot));
      check_close(std::vector<T>{dot}, {want_dotc}, tolerance<T>(n), "%sdotc", type_name<T>());
    }
  }
}

// Results written to device memory (device pointer mode) once the work has run.
template <typename T> void test_device_result() {
  auto x = rng.values<T>(n);
  Device<T> dx(x), dresult(1);
  BLAS_OK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE));
  BLAS_OK(pick<T>(cublasSdot_64, cublasDdot_64, cublasCdotu_64,
                  cublasZdotu_64)(handle, n, dx.ptr, 1, dx.ptr, 1, dresult.ptr));
  BLAS_OK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  R want = 0;
  for (int i = 0; i < n; ++i)
    want += to_ref(x[i]) * to_ref(x[i]);
  check_close(dresult.get(), {want}, tolerance<T>(n), "%sdot_64 device result", type_name<T>());
}

template <typename T> void test_updates() {
  for (const auto& [incx, incy] : incs) {
    auto x = rng.values<T>(span<T>(incx)), y = rng.values<T>(span<T>(incy));
    T alpha = rng.value<T>();
    auto idx_x = [&](int i) { return strided(i, n, incx); };
    auto idx_y = [&](int i) { return strided(i, n, incy); };
    {
      Device<T> dx(x), dy(y);
      BLAS_OK(pick<T>(cublasSaxpy, cublasDaxpy, cublasCaxpy, cublasZaxpy)(handle, n, &alpha, dx.ptr,
                                                                          incx, dy.ptr, incy));
      auto want = refs(y);
      for (int i = 0; i < n; ++i)
        want[idx_y(i)] += to_ref(alpha) * to_ref(x[idx_x(i)]);
      check_close(dy.get(), want, tolerance<T>(2), "%saxpy incs %d %d", type_name<T>(), incx, incy);
    }
    {
      Device<T> dx(x), dy(y);
      BLAS_OK(pick<T>(cublasScopy, cublasDcopy, cublasCcopy, cublasZcopy)(handle, n, dx.ptr, incx,
                                                                          dy.ptr, incy));
      auto want = refs(y);
      for (int i = 0; i < n; ++i)
        want[idx_y(i)] = to_ref(x[idx_x(i)]);
      check_close(dy.get(), want, 0, "%scopy", type_name<T>());
    }
    {
      Device<T> dx(x), dy(y);
      BLAS_OK(pick<T>(cublasSswap_64, cublasDswap_64, cublasCswap_64,
                      cublasZswap_64)(handle, n, dx.ptr, incx, dy.ptr, incy));
      auto want_x = refs(x), want_y = refs(y);
      for (int i = 0; i < n; ++i)
        std::swap(want_x[idx_x(i)], want_y[idx_y(i)]);
      check_close(dx.get(), want_x, 0, "%sswap x", type_name<T>());
      check_close(dy.get(), want_y, 0, "%sswap y", type_name<T>());
    }
    if (incx > 0) {
      Device<T> dx(x);
      BLAS_OK(pick<T>(cublasSscal, cublasDscal, cublasCscal, cublasZscal)(handle, n, &alpha, dx.ptr,
                                                                          incx));
      auto want = refs(x);
      for (int i = 0; i < n; ++i)
        want[idx_x(i)] *= to_ref(alpha);
      check_close(dx.get(), want, tolerance<T>(1), "%sscal", type_name<T>());
    }
    // rot with real c and s (Srot, Csrot), and with complex s (Crot).
    using Real =
        std::conditional_t<std::is_same_v<T, cuComplex>, float,
                           std::conditional_t<std::is_same_v<T, cuDoubleComplex>, double, T>>;
    Real c = Real(0.6), s = Real(0.8);
    {
      Device<T> dx(x), dy(y);
      BLAS_OK(pick<T>(cublasSrot, cublasDrot, cublasCsrot, cublasZdrot)(handle, n, dx.ptr, incx,
                                                                        dy.ptr, incy, &c, &s));
      auto wx = refs(x), wy = refs(y);
      for (int i = 0; i < n; ++i) {
        R xv = to_ref(x[idx_x(i)]), yv = to_ref(y[idx_y(i)]);
        wx[idx_x(i)] = double(c) * xv + double(s) * yv;
        wy[idx_y(i)] = double(c) * yv - double(s) * xv;
      }
      check_close(dx.get(), wx, tolerance<T>(2), "%srot (real s) x", type_name<T>());
      check_close(dy.get(), wy, tolerance<T>(2), "%srot (real s) y", type_name<T>());
    }
    if constexpr (is_complex_v<T>) {
      T cs = from_ref<T>(R(0.48, 0.64));
      Device<T> dx(x), dy(y);
      BLAS_OK(
          pick<T>(0, 0, cublasCrot, cublasZrot)(handle, n, dx.ptr, incx, dy.ptr, incy, &c, &cs));
      auto wx = refs(x), wy = refs(y);
      for (int i = 0; i < n; ++i) {
        R xv = to_ref(x[idx_x(i)]), yv = to_ref(y[idx_y(i)]);
        wx[idx_x(i)] = double(c) * xv + to_ref(cs) * yv;
        wy[idx_y(i)] = double(c) * yv - std::conj(to_ref(cs)) * xv;
      }
      check_close(dx.get(), wx, tolerance<T>(2), "%srot (complex s) x", type_name<T>());
      check_close(dy.get(), wy, tolerance<T>(2), "%srot (complex s) y", type_name<T>());
      Real real_alpha = Real(-1.25);
      Device<T> dz(x);
      if (incx > 0) {
        BLAS_OK(pick<T>(0, 0, cublasCsscal, cublasZdscal)(handle, n, &real_alpha, dz.ptr, incx));
        auto want = refs(x);
        for (int i = 0; i < n; ++i)
          want[idx_x(i)] *= -1.25;
        check_close(dz.get(), want, tolerance<T>(1), "%s real scal", type_name<T>());
      }
    }
  }
}

template <typename T> void test_rotations() {
  // rotg: r = sign * hypot(a, b), c = a / r, s = b / r (real); the complex form rotates a onto r.
  T a = rng.value<T>(), b = rng.value<T>(), s{};
  using Real =
      std::conditional_t<std::is_same_v<T, cuComplex>, float,
                         std::conditional_t<std::is_same_v<T, cuDoubleComplex>, double, T>>;
  Real c = 0;
  T a0 = a, b0 = b;
  BLAS_OK(pick<T>(cublasSrotg, cublasDrotg, cublasCrotg, cublasZrotg)(handle, &a, &b, &c, &s));
  // [c s; -conj(s) c] [a0; b0] = [r; 0]
  R r = double(c) * to_ref(a0) + to_ref(s) * to_ref(b0);
  R zero = -std::conj(to_ref(s)) * to_ref(a0) + double(c) * to_ref(b0);
  check_close(std::vector<T>{a, from_ref<T>(zero)}, {r, 0}, tolerance<T>(4), "%srotg",
              type_name<T>());
  tally.check(std::abs(double(c) * c + std::norm(to_ref(s)) - 1) < tolerance<T>(4),
              "%srotg: c^2 + |s|^2 != 1", type_name<T>());
  if constexpr (!is_complex_v<T>) {
    // rotmg then rotm: H [sqrt(d1) x1; sqrt(d2) y1] has a zero second component.
    T d1 = T(2), d2 = T(3), x1 = T(0.7), y1 = T(-0.4), param[5];
    T d1_0 = d1, d2_0 = d2, x1_0 = x1;
    BLAS_OK(pick<T>(cublasSrotmg, cublasDrotmg, 0, 0)(handle, &d1, &d2, &x1, &y1, param));
    std::vector<T> x = {std::sqrt(d1_0) * x1_0}, y = {std::sqrt(d2_0) * y1};
    // rotm works on the scaled vectors: apply it to (x1, y1) directly.
    std::vector<T> vx = {x1_0}, vy = {y1};
    Device<T> dx(vx), dy(vy);
    BLAS_OK(pick<T>(cublasSrotm, cublasDrotm, 0, 0)(handle, 1, dx.ptr, 1, dy.ptr, 1, param));
    auto gx = dx.get(), gy = dy.get();
    tally.check(std::abs(gy[0]) < tolerance<T>(4) && std::abs(double(gx[0]) - x1) < tolerance<T>(4),
                "%srotmg/rotm: H (x1, y1) = (%g, %g), want (%g, 0)", type_name<T>(), double(gx[0]),
                double(gy[0]), double(x1));
    (void)x, (void)y;
  }
}

// asum at stride 1 over lengths around a vector kernel's groups and tails (Debian 12's
// OpenBLAS sums Scasum's tail wrongly on AVX-512 CPUs it takes for Cooper Lake).
template <typename T> void test_asum_lengths() {
  for (int len : {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 1000, 4099}) {
    auto x = rng.values<T>(size_t(len));
    Device<T> dx(x);
    double want = 0;
    for (int i = 0; i < len; ++i)
      want += std::abs(std::real(to_ref(x[i]))) + std::abs(std::imag(to_ref(x[i])));
    std::conditional_t<std::is_same_v<T, cuComplex>, float,
                       std::conditional_t<std::is_same_v<T, cuDoubleComplex>, double, T>>
        got = -1;
    BLAS_OK(pick<T>(cublasSasum, cublasDasum, cublasScasum, cublasDzasum)(handle, len, dx.ptr, 1, &got));
    check_close(std::vector<decltype(got)>{got}, {R(want)}, tolerance<T>(len), "%sasum n %d",
                type_name<T>(), len);
  }
}

template <typename T> void all() {
  test_reductions<T>();
  test_asum_lengths<T>();
  test_device_result<T>();
  test_updates<T>();
  test_rotations<T>();
}

int main() {
  BLAS_OK(cublasCreate(&handle));
  all<float>();
  all<double>();
  all<cuComplex>();
  all<cuDoubleComplex>();
  BLAS_OK(cublasDestroy(handle));
  return tally.finish("cublas_level1");
}
