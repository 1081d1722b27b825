// Level 3 (other than gemm) and the BLAS-like geam and dgmm on OpenBLAS.
#include "libs/cublas/cpu/cpu_ops.h"

#include <vector>

namespace mimic::cublas::cpu {
namespace {

template <typename T> T conj_if(T v, bool conjugate) {
  if constexpr (is_complex<T>)
    return conjugate ? std::conj(v) : v;
  else
    return v;
}

// Element (i, j) of op(M).
template <typename T>
T op_at(const T* M, long long ld, cublasOperation_t op, long long i, long long j) {
  return op == CUBLAS_OP_N ? M[i + j * ld] : conj_if(M[j + i * ld], op == CUBLAS_OP_C);
}

// syrkx/herkx: the uplo triangle of C = alpha op(A) op(B)^T (^H) + beta C, through a full
// product in a scratch matrix.
template <typename T> void rank_kx(const Level3Args& a, bool hermitian) {
  int n = int(a.n), k = int(a.k);
  std::vector<T> product(static_cast<size_t>(n) * n);
  CBLAS_TRANSPOSE second = hermitian ? CblasConjTrans : CblasTrans;
  bool untransposed = a.transa == CUBLAS_OP_N;
  gemm<T>(untransposed ? CblasNoTrans : second, untransposed ? second : CblasNoTrans, n, n, k,
          a.alpha.get<T>(), static_cast<const T*>(a.A), int(a.lda), static_cast<const T*>(a.B),
          int(a.ldb), T{}, product.data(), n);
  T* C = static_cast<T*>(a.C);
  bool upper = a.uplo == CUBLAS_FILL_MODE_UPPER;
  T beta = hermitian ? T(a.beta.get<Real<T>>()) : a.beta.get<T>();
  for (long long j = 0; j < n; ++j) {
    for (long long i = upper ? 0 : j; i < (upper ? j + 1 : n); ++i) {
      T& c = C[i + j * a.ldc];
      c = product[i + j * n] + (beta == T{} ? T{} : beta * c);
      if constexpr (is_complex<T>) {
        if (hermitian && i == j) c = T(c.real(), 0);
      }
    }
  }
}

template <typename T> void geam(const Level3Args& a) {
  const T* A = static_cast<const T*>(a.A);
  const T* B = static_cast<const T*>(a.B);
  T* C = static_cast<T*>(a.C);
  T alpha = a.alpha.get<T>(), beta = a.beta.get<T>();
  // A zero factor means its matrix is not read (it may be NULL).
  for (long long j = 0; j < a.n; ++j)
    for (long long i = 0; i < a.m; ++i) {
      T sum = alpha == T{} ? T{} : alpha * op_at(A, a.lda, a.transa, i, j);
      if (beta != T{}) sum += beta * op_at(B, a.ldb, a.transb, i, j);
      C[i + j * a.ldc] = sum;
    }
}

template <typename T> void dgmm(const Level3Args& a) {
  const T* A = static_cast<const T*>(a.A);
  const T* x = static_cast<const T*>(a.B);
  T* C = static_cast<T*>(a.C);
  bool left = a.side == CUBLAS_SIDE_LEFT;
  long long length = left ? a.m : a.n;
  for (long long j = 0; j < a.n; ++j)
    for (long long i = 0; i < a.m; ++i)
      C[i + j * a.ldc] = A[i + j * a.lda] * x[strided(left ? i : j, length, a.ldb)];
}

template <typename T>
void copy_matrix(const T* from, long long from_ld, T* to, long long to_ld, long long rows,
                 long long cols) {
  for (long long j = 0; j < cols; ++j)
    std::copy(from + j * from_ld, from + j * from_ld + rows, to + j * to_ld);
}

template <typename T> void level3(const Level3Args& a) {
  const auto o = CblasColMajor;
  int m = int(a.m), n = int(a.n), k = int(a.k), lda = int(a.lda), ldb = int(a.ldb),
      ldc = int(a.ldc);
  const T* A = static_cast<const T*>(a.A);
  const T* B = static_cast<const T*>(a.B);
  T* C = static_cast<T*>(a.C);
  CBLAS_SIDE side = cblas_side(a.side);
  CBLAS_UPLO uplo = cblas_uplo(a.uplo);
  CBLAS_TRANSPOSE t = cblas_op(a.transa);
  CBLAS_DIAG d = cblas_diag(a.diag);
  if constexpr (!is_complex<T>) {
    if (t == CblasConjTrans) t = CblasTrans;
  }
  switch (a.op) {
  case Level3Op::Gemm:
    throw std::logic_error("cuBLAS CPU backend: gemm goes through run_gemm");
  case Level3Op::Symm:
  case Level3Op::Hemm: {
    T alpha = a.alpha.get<T>(), beta = a.beta.get<T>();
    bool herm = a.op == Level3Op::Hemm;
    MIMIC_CBLAS(T, cblas_ssymm(o, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc),
                cblas_dsymm(o, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc),
                (herm ? cblas_chemm : cblas_csymm)(o, side, uplo, m, n, &alpha, A, lda, B, ldb,
                                                   &beta, C, ldc),
                (herm ? cblas_zhemm : cblas_zsymm)(o, side, uplo, m, n, &alpha, A, lda, B, ldb,
                                                   &beta, C, ldc));
    return;
  }
  case Level3Op::Syrk: {
    T alpha = a.alpha.get<T>(), beta = a.beta.get<T>();
    MIMIC_CBLAS(T, cblas_ssyrk(o, uplo, t, n, k, alpha, A, lda, beta, C, ldc),
                cblas_dsyrk(o, uplo, t, n, k, alpha, A, lda, beta, C, ldc),
                cblas_csyrk(o, uplo, t, n, k, &alpha, A, lda, &beta, C, ldc),
                cblas_zsyrk(o, uplo, t, n, k, &alpha, A, lda, &beta, C, ldc));
    return;
  }
  case Level3Op::Herk: {
    Real<T> alpha = a.alpha.get<Real<T>>(), beta = a.beta.get<Real<T>>();
    if constexpr (std::is_same_v<T, cf>)
      cblas_cherk(o, uplo, t, n, k, alpha, A, lda, beta, C, ldc);
    else if constexpr (std::is_same_v<T, cd>)
      cblas_zherk(o, uplo, t, n, k, alpha, A, lda, beta, C, ldc);
    return;
  }
  case Level3Op::Syr2k: {
    T alpha = a.alpha.get<T>(), beta = a.beta.get<T>();
    MIMIC_CBLAS(T, cblas_ssyr2k(o, uplo, t, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
                cblas_dsyr2k(o, uplo, t, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
                cblas_csyr2k(o, uplo, t, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc),
                cblas_zsyr2k(o, uplo, t, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
    return;
  }
  case Level3Op::Her2k: {
    T alpha = a.alpha.get<T>();
    Real<T> beta = a.beta.get<Real<T>>();
    if constexpr (std::is_same_v<T, cf>)
      cblas_cher2k(o, uplo, t, n, k, &alpha, A, lda, B, ldb, beta, C, ldc);
    else if constexpr (std::is_same_v<T, cd>)
      cblas_zher2k(o, uplo, t, n, k, &alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  case Level3Op::Syrkx:
    return rank_kx<T>(a, false);
  case Level3Op::Herkx:
    return rank_kx<T>(a, true);
  case Level3Op::Trmm:
    // cuBLAS's trmm writes op(A) B into C; OpenBLAS's works in place.
    if (C != B) copy_matrix(B, ldb, C, ldc, m, n);
    trmm<T>(side, uplo, t, d, m, n, a.alpha.get<T>(), A, lda, C, ldc);
    return;
  case Level3Op::Trsm:
    if (a.batch < 0) return trsm<T>(side, uplo, t, d, m, n, a.alpha.get<T>(), A, lda, C, ldc);
    for (long long i = 0; i < a.batch; ++i)
      trsm<T>(side, uplo, t, d, m, n, a.alpha.get<T>(), batch_matrix<const T>(a.A, i), lda,
              batch_matrix<T>(a.B, i), ldb);
    return;
  case Level3Op::Geam:
    return geam<T>(a);
  case Level3Op::Dgmm:
    return dgmm<T>(a);
  }
}

} // namespace

void run_level3(const Level3Args& a) {
  if (a.m <= 0 || a.n <= 0) return;
  with_type(a.type, [&](auto tag) { level3<decltype(tag)>(a); });
}

} // namespace mimic::cublas::cpu
