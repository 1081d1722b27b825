// Level 2 on OpenBLAS; the complex symmetric (not Hermitian) forms that CBLAS lacks
// (csymv, csyr, csyr2) are loops here.
#include "libs/cublas/cpu/cpu_ops.h"

namespace mimic::cublas::cpu {
namespace {

// Element (i, j) of a symmetric matrix stored in the uplo triangle.
template <typename T> T& symmetric_at(T* A, long long lda, bool upper, long long i, long long j) {
  bool stored = upper ? i <= j : i >= j;
  return stored ? A[i + j * lda] : A[j + i * lda];
}

template <typename T> void symv_loop(const Level2Args& a) {
  T* A = static_cast<T*>(a.A);
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  T alpha = a.alpha.get<T>(), beta = a.beta.get<T>();
  bool upper = a.uplo == CUBLAS_FILL_MODE_UPPER;
  long long n = a.n;
  for (long long i = 0; i < n; ++i) {
    T sum{};
    for (long long j = 0; j < n; ++j)
      sum += symmetric_at(A, a.lda, upper, i, j) * x[strided(j, n, a.incx)];
    T& yi = y[strided(i, n, a.incy)];
    yi = alpha * sum + (beta == T{} ? T{} : beta * yi);
  }
}

// A += alpha x x^T (syr) or alpha (x y^T + y x^T) (syr2) on the uplo triangle.
template <typename T> void syr_loop(const Level2Args& a, bool rank2) {
  T* A = static_cast<T*>(a.A);
  const T* x = static_cast<const T*>(a.x);
  const T* y = static_cast<const T*>(a.y);
  T alpha = a.alpha.get<T>();
  bool upper = a.uplo == CUBLAS_FILL_MODE_UPPER;
  long long n = a.n;
  for (long long j = 0; j < n; ++j) {
    long long begin = upper ? 0 : j, end = upper ? j + 1 : n;
    T xj = x[strided(j, n, a.incx)];
    T yj = rank2 ? y[strided(j, n, a.incy)] : T{};
    for (long long i = begin; i < end; ++i) {
      T xi = x[strided(i, n, a.incx)];
      T update = rank2 ? xi * yj + y[strided(i, n, a.incy)] * xj : xi * xj;
      A[i + j * a.lda] += alpha * update;
    }
  }
}

template <typename T> void level2(const Level2Args& a) {
  const auto o = CblasColMajor;
  int m = int(a.m), n = int(a.n), kl = int(a.kl), k = int(a.ku), lda = int(a.lda);
  int incx = int(a.incx), incy = int(a.incy);
  T* A = static_cast<T*>(a.A);
  T* x = static_cast<T*>(a.x);
  T* y = static_cast<T*>(a.y);
  CBLAS_UPLO uplo = cblas_uplo(a.uplo);
  CBLAS_TRANSPOSE t = cblas_op(a.trans);
  CBLAS_DIAG d = cblas_diag(a.diag);
  switch (a.op) {
  case Level2Op::Gemv: {
    T alpha = a.alpha.get<T>(), beta = a.beta.get<T>();
    MIMIC_CBLAS(T, cblas_sgemv(o, t, m, n, alpha, A, lda, x, incx, beta, y, incy),
                cblas_dgemv(o, t, m, n, alpha, A, lda, x, incx, beta, y, incy),
                cblas_cgemv(o, t, m, n, &alpha, A, lda, x, incx, &beta, y, incy),
                cblas_zgemv(o, t, m, n, &alpha, A, lda, x, incx, &beta, y, incy));
    return;
  }
  case Level2Op::Gbmv: {
    T alpha = a.alpha.get<T>(), beta = a.beta.get<T>();
    MIMIC_CBLAS(T, cblas_sgbmv(o, t, m, n, kl, k, alpha, A, lda, x, incx, beta, y, incy),
                cblas_dgbmv(o, t, m, n, kl, k, alpha, A, lda, x, incx, beta, y, incy),
                cblas_cgbmv(o, t, m, n, kl, k, &alpha, A, lda, x, incx, &beta, y, incy),
                cblas_zgbmv(o, t, m, n, kl, k, &alpha, A, lda, x, incx, &beta, y, incy));
    return;
  }
  case Level2Op::Ger:
  case Level2Op::Gerc: {
    T alpha = a.alpha.get<T>();
    bool conj = a.op == Level2Op::Gerc;
    MIMIC_CBLAS(T, cblas_sger(o, m, n, alpha, x, incx, y, incy, A, lda),
                cblas_dger(o, m, n, alpha, x, incx, y, incy, A, lda),
                (conj ? cblas_cgerc : cblas_cgeru)(o, m, n, &alpha, x, incx, y, incy, A, lda),
                (conj ? cblas_zgerc : cblas_zgeru)(o, m, n, &alpha, x, incx, y, incy, A, lda));
    return;
  }
  case Level2Op::Symv:
  case Level2Op::Hemv: {
    T alpha = a.alpha.get<T>(), beta = a.beta.get<T>();
    if constexpr (is_complex<T>) {
      if (a.op == Level2Op::Symv) return symv_loop<T>(a);
    }
    MIMIC_CBLAS(T, cblas_ssymv(o, uplo, n, alpha, A, lda, x, incx, beta, y, incy),
                cblas_dsymv(o, uplo, n, alpha, A, lda, x, incx, beta, y, incy),
                cblas_chemv(o, uplo, n, &alpha, A, lda, x, incx, &beta, y, incy),
                cblas_zhemv(o, uplo, n, &alpha, A, lda, x, incx, &beta, y, incy));
    return;
  }
  case Level2Op::Sbmv:
  case Level2Op::Hbmv: {
    T alpha = a.alpha.get<T>(), beta = a.beta.get<T>();
    MIMIC_CBLAS(T, cblas_ssbmv(o, uplo, n, k, alpha, A, lda, x, incx, beta, y, incy),
                cblas_dsbmv(o, uplo, n, k, alpha, A, lda, x, incx, beta, y, incy),
                cblas_chbmv(o, uplo, n, k, &alpha, A, lda, x, incx, &beta, y, incy),
                cblas_zhbmv(o, uplo, n, k, &alpha, A, lda, x, incx, &beta, y, incy));
    return;
  }
  case Level2Op::Spmv:
  case Level2Op::Hpmv: {
    T alpha = a.alpha.get<T>(), beta = a.beta.get<T>();
    MIMIC_CBLAS(T, cblas_sspmv(o, uplo, n, alpha, A, x, incx, beta, y, incy),
                cblas_dspmv(o, uplo, n, alpha, A, x, incx, beta, y, incy),
                cblas_chpmv(o, uplo, n, &alpha, A, x, incx, &beta, y, incy),
                cblas_zhpmv(o, uplo, n, &alpha, A, x, incx, &beta, y, incy));
    return;
  }
  case Level2Op::Syr:
  case Level2Op::Her: {
    if constexpr (is_complex<T>) {
      if (a.op == Level2Op::Syr) return syr_loop<T>(a, false);
    }
    Real<T> alpha = a.alpha.get<Real<T>>();
    MIMIC_CBLAS(T, cblas_ssyr(o, uplo, n, alpha, x, incx, A, lda),
                cblas_dsyr(o, uplo, n, alpha, x, incx, A, lda),
                cblas_cher(o, uplo, n, alpha, x, incx, A, lda),
                cblas_zher(o, uplo, n, alpha, x, incx, A, lda));
    return;
  }
  case Level2Op::Syr2:
  case Level2Op::Her2: {
    if constexpr (is_complex<T>) {
      if (a.op == Level2Op::Syr2) return syr_loop<T>(a, true);
    }
    T alpha = a.alpha.get<T>();
    MIMIC_CBLAS(T, cblas_ssyr2(o, uplo, n, alpha, x, incx, y, incy, A, lda),
                cblas_dsyr2(o, uplo, n, alpha, x, incx, y, incy, A, lda),
                cblas_cher2(o, uplo, n, &alpha, x, incx, y, incy, A, lda),
                cblas_zher2(o, uplo, n, &alpha, x, incx, y, incy, A, lda));
    return;
  }
  case Level2Op::Spr:
  case Level2Op::Hpr: {
    Real<T> alpha = a.alpha.get<Real<T>>();
    MIMIC_CBLAS(
        T, cblas_sspr(o, uplo, n, alpha, x, incx, A), cblas_dspr(o, uplo, n, alpha, x, incx, A),
        cblas_chpr(o, uplo, n, alpha, x, incx, A), cblas_zhpr(o, uplo, n, alpha, x, incx, A));
    return;
  }
  case Level2Op::Spr2:
  case Level2Op::Hpr2: {
    T alpha = a.alpha.get<T>();
    MIMIC_CBLAS(T, cblas_sspr2(o, uplo, n, alpha, x, incx, y, incy, A),
                cblas_dspr2(o, uplo, n, alpha, x, incx, y, incy, A),
                cblas_chpr2(o, uplo, n, &alpha, x, incx, y, incy, A),
                cblas_zhpr2(o, uplo, n, &alpha, x, incx, y, incy, A));
    return;
  }
  case Level2Op::Trmv:
    MIMIC_CBLAS(T, cblas_strmv(o, uplo, t, d, n, A, lda, x, incx),
                cblas_dtrmv(o, uplo, t, d, n, A, lda, x, incx),
                cblas_ctrmv(o, uplo, t, d, n, A, lda, x, incx),
                cblas_ztrmv(o, uplo, t, d, n, A, lda, x, incx));
    return;
  case Level2Op::Trsv:
    MIMIC_CBLAS(T, cblas_strsv(o, uplo, t, d, n, A, lda, x, incx),
                cblas_dtrsv(o, uplo, t, d, n, A, lda, x, incx),
                cblas_ctrsv(o, uplo, t, d, n, A, lda, x, incx),
                cblas_ztrsv(o, uplo, t, d, n, A, lda, x, incx));
    return;
  case Level2Op::Tbmv:
    MIMIC_CBLAS(T, cblas_stbmv(o, uplo, t, d, n, k, A, lda, x, incx),
                cblas_dtbmv(o, uplo, t, d, n, k, A, lda, x, incx),
                cblas_ctbmv(o, uplo, t, d, n, k, A, lda, x, incx),
                cblas_ztbmv(o, uplo, t, d, n, k, A, lda, x, incx));
    return;
  case Level2Op::Tbsv:
    MIMIC_CBLAS(T, cblas_stbsv(o, uplo, t, d, n, k, A, lda, x, incx),
                cblas_dtbsv(o, uplo, t, d, n, k, A, lda, x, incx),
                cblas_ctbsv(o, uplo, t, d, n, k, A, lda, x, incx),
                cblas_ztbsv(o, uplo, t, d, n, k, A, lda, x, incx));
    return;
  case Level2Op::Tpmv:
    MIMIC_CBLAS(
        T, cblas_stpmv(o, uplo, t, d, n, A, x, incx), cblas_dtpmv(o, uplo, t, d, n, A, x, incx),
        cblas_ctpmv(o, uplo, t, d, n, A, x, incx), cblas_ztpmv(o, uplo, t, d, n, A, x, incx));
    return;
  case Level2Op::Tpsv:
    MIMIC_CBLAS(
        T, cblas_stpsv(o, uplo, t, d, n, A, x, incx), cblas_dtpsv(o, uplo, t, d, n, A, x, incx),
        cblas_ctpsv(o, uplo, t, d, n, A, x, incx), cblas_ztpsv(o, uplo, t, d, n, A, x, incx));
    return;
  }
}

} // namespace

void run_level2(const Level2Args& a) {
  if (a.m < 0 || a.n <= 0) return;
  with_type(a.type, [&](auto tag) { level2<decltype(tag)>(a); });
}

} // namespace mimic::cublas::cpu
