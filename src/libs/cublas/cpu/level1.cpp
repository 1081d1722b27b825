// Level 1 on OpenBLAS.
#include "libs/cublas/cpu/cpu_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace mimic::cublas::cpu {
namespace {

template <typename T> void write_index(const Level1Args& a, long long index) {
  if (a.result_64)
    *static_cast<int64_t*>(a.result) = index;
  else
    *static_cast<int*>(a.result) = int(index);
}

template <typename T> long long iamax(int n, const T* x, int incx) {
  MIMIC_CBLAS(T, return cblas_isamax(n, x, incx), return cblas_idamax(n, x, incx),
              return cblas_icamax(n, x, incx), return cblas_izamax(n, x, incx));
}
template <typename T> long long iamin(int n, const T* x, int incx) {
  MIMIC_CBLAS(T, return cblas_isamin(n, x, incx), return cblas_idamin(n, x, incx),
              return cblas_icamin(n, x, incx), return cblas_izamin(n, x, incx));
}
// Scasum of a unit-stride vector is sasum's sum over its 2n floats (|re| + |im| each,
// the same sum by definition): OpenBLAS before 0.3.26 (Debian 12 ships 0.3.21) runs a
// scasum kernel on AVX-512 CPUs it takes for Cooper Lake (Zen 4 among them) that sums the
// elements after the last whole group of 8 wrongly (upstream pull request 4326): n = 29
// gave 34.65 for 33.25. Its strided form and sasum are right; the vector goes in parts so
// that 2n fits in an int.
float scasum_unit(int n, const cf* x) {
  constexpr int64_t kPart = int64_t(1) << 29;
  float sum = 0;
  for (int64_t done = 0; done < n; done += kPart)
    sum += cblas_sasum(int(2 * std::min(kPart, n - done)), reinterpret_cast<const float*>(x + done), 1);
  return sum;
}

template <typename T> Real<T> asum(int n, const T* x, int incx) {
  MIMIC_CBLAS(T, return cblas_sasum(n, x, incx), return cblas_dasum(n, x, incx),
              return incx == 1 ? scasum_unit(n, x) : cblas_scasum(n, x, incx),
              return cblas_dzasum(n, x, incx));
}
template <typename T> Real<T> nrm2(int n, const T* x, int incx) {
  MIMIC_CBLAS(T, return cblas_snrm2(n, x, incx), return cblas_dnrm2(n, x, incx),
              return cblas_scnrm2(n, x, incx), return cblas_dznrm2(n, x, incx));
}

template <typename T> T dot(bool conjugate, int n, const T* x, int incx, const T* y, int incy) {
  T r{};
  if constexpr (std::is_same_v<T, float>)
    r = cblas_sdot(n, x, incx, y, incy);
  else if constexpr (std::is_same_v<T, double>)
    r = cblas_ddot(n, x, incx, y, incy);
  else if constexpr (std::is_same_v<T, cf>)
    conjugate ? cblas_cdotc_sub(n, x, incx, y, incy, &r) : cblas_cdotu_sub(n, x, incx, y, incy, &r);
  else
    conjugate ? cblas_zdotc_sub(n, x, incx, y, incy, &r) : cblas_zdotu_sub(n, x, incx, y, incy, &r);
  return r;
}

template <typename T> void scal(const Level1Args& a, int n, T* x, int incx) {
  bool real_alpha = a.scalar_type == CUDA_R_32F || a.scalar_type == CUDA_R_64F;
  if constexpr (is_complex<T>) {
    if (real_alpha) {
      Real<T> alpha = a.alpha.get<Real<T>>();
      if constexpr (std::is_same_v<T, cf>)
        cblas_csscal(n, alpha, x, incx);
      else
        cblas_zdscal(n, alpha, x, incx);
      return;
    }
  }
  T alpha = a.alpha.get<T>();
  MIMIC_CBLAS(T, cblas_sscal(n, alpha, x, incx), cblas_dscal(n, alpha, x, incx),
              cblas_cscal(n, &alpha, x, incx), cblas_zscal(n, &alpha, x, incx));
}

template <typename T> void rot(const Level1Args& a, int n, T* x, int incx, T* y, int incy) {
  Real<T> c = a.c.get<Real<T>>();
  bool real_s = a.scalar_type == CUDA_R_32F || a.scalar_type == CUDA_R_64F;
  if constexpr (is_complex<T>) {
    if (!real_s) {
      T s = a.s.get<T>();
      if constexpr (std::is_same_v<T, cf>)
        crot_(&n, x, &incx, y, &incy, &c, &s);
      else
        zrot_(&n, x, &incx, y, &incy, &c, &s);
      return;
    }
  }
  Real<T> s = a.s.get<Real<T>>();
  MIMIC_CBLAS(T, cblas_srot(n, x, incx, y, incy, c, s), cblas_drot(n, x, incx, y, incy, c, s),
              cblas_csrot(n, x, incx, y, incy, c, s), cblas_zdrot(n, x, incx, y, incy, c, s));
}

template <typename T> void level1(const Level1Args& a) {
  int n = int(a.n), incx = int(a.incx), incy = int(a.incy);
  T* x = static_cast<T*>(a.x);
  T* y = static_cast<T*>(a.y);
  bool empty = n <= 0 || incx <= 0; // reductions of no elements give 0
  switch (a.op) {
  case Level1Op::Amax:
    return write_index<T>(a, empty ? 0 : iamax(n, x, incx) + 1);
  case Level1Op::Amin:
    return write_index<T>(a, empty ? 0 : iamin(n, x, incx) + 1);
  case Level1Op::Asum:
    *static_cast<Real<T>*>(a.result) = empty ? 0 : asum(n, x, incx);
    return;
  case Level1Op::Nrm2:
    *static_cast<Real<T>*>(a.result) = empty ? 0 : nrm2(n, x, incx);
    return;
  case Level1Op::Dotu:
  case Level1Op::Dotc:
    *static_cast<T*>(a.result) = n <= 0 ? T{} : dot(a.op == Level1Op::Dotc, n, x, incx, y, incy);
    return;
  case Level1Op::Axpy: {
    T alpha = a.alpha.get<T>();
    MIMIC_CBLAS(T, cblas_saxpy(n, alpha, x, incx, y, incy), cblas_daxpy(n, alpha, x, incx, y, incy),
                cblas_caxpy(n, &alpha, x, incx, y, incy), cblas_zaxpy(n, &alpha, x, incx, y, incy));
    return;
  }
  case Level1Op::Copy:
    MIMIC_CBLAS(T, cblas_scopy(n, x, incx, y, incy), cblas_dcopy(n, x, incx, y, incy),
                cblas_ccopy(n, x, incx, y, incy), cblas_zcopy(n, x, incx, y, incy));
    return;
  case Level1Op::Swap:
    MIMIC_CBLAS(T, cblas_sswap(n, x, incx, y, incy), cblas_dswap(n, x, incx, y, incy),
                cblas_cswap(n, x, incx, y, incy), cblas_zswap(n, x, incx, y, incy));
    return;
  case Level1Op::Scal:
    if (n > 0 && incx > 0) scal(a, n, x, incx);
    return;
  case Level1Op::Rot:
    return rot(a, n, x, incx, y, incy);
  case Level1Op::Rotm:
    if constexpr (std::is_same_v<T, float>)
      cblas_srotm(n, x, incx, y, incy, static_cast<const float*>(a.param));
    else if constexpr (std::is_same_v<T, double>)
      cblas_drotm(n, x, incx, y, incy, static_cast<const double*>(a.param));
    return;
  }
}

} // namespace

void run_level1(const Level1Args& a) {
  with_type(a.type, [&](auto tag) { level1<decltype(tag)>(a); });
}

void run_rotg(const RotgArgs& a) {
  with_type(a.type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) {
      if (a.modified)
        cblas_srotmg(static_cast<float*>(a.a), static_cast<float*>(a.b), static_cast<float*>(a.c),
                     *static_cast<float*>(a.s), static_cast<float*>(a.param));
      else
        cblas_srotg(static_cast<float*>(a.a), static_cast<float*>(a.b), static_cast<float*>(a.c),
                    static_cast<float*>(a.s));
    } else if constexpr (std::is_same_v<T, double>) {
      if (a.modified)
        cblas_drotmg(static_cast<double*>(a.a), static_cast<double*>(a.b),
                     static_cast<double*>(a.c), *static_cast<double*>(a.s),
                     static_cast<double*>(a.param));
      else
        cblas_drotg(static_cast<double*>(a.a), static_cast<double*>(a.b), static_cast<double*>(a.c),
                    static_cast<double*>(a.s));
    } else if constexpr (std::is_same_v<T, cf>) {
      cblas_crotg(a.a, a.b, static_cast<float*>(a.c), a.s);
    } else {
      cblas_zrotg(a.a, a.b, static_cast<double*>(a.c), a.s);
    }
  });
}

} // namespace mimic::cublas::cpu
