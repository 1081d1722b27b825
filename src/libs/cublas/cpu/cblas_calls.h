// OpenBLAS's CBLAS and LAPACK routines under one name per operation, picked by element
// type: float, double, std::complex<float>, std::complex<double>.
#pragma once

#include <cblas.h>
#include <cublas_api.h>

#include <complex>
#include <cstddef>
#include <type_traits>

// OpenBLAS's LAPACK (Fortran calling convention; a character argument's length follows
// the others).
extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void cgetrf_(const int* m, const int* n, void* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, void* a, const int* lda, int* ipiv, int* info);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork,
             int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
void cgetri_(const int* n, void* a, const int* lda, const int* ipiv, void* work, const int* lwork,
             int* info);
void zgetri_(const int* n, void* a, const int* lda, const int* ipiv, void* work, const int* lwork,
             int* info);
void sgels_(const char* trans, const int* m, const int* n, const int* nrhs, float* a,
            const int* lda, float* b, const int* ldb, float* work, const int* lwork, int* info,
            size_t trans_length);
void dgels_(const char* trans, const int* m, const int* n, const int* nrhs, double* a,
            const int* lda, double* b, const int* ldb, double* work, const int* lwork, int* info,
            size_t trans_length);
void cgels_(const char* trans, const int* m, const int* n, const int* nrhs, void* a, const int* lda,
            void* b, const int* ldb, void* work, const int* lwork, int* info, size_t trans_length);
void zgels_(const char* trans, const int* m, const int* n, const int* nrhs, void* a, const int* lda,
            void* b, const int* ldb, void* work, const int* lwork, int* info, size_t trans_length);
void crot_(const int* n, void* x, const int* incx, void* y, const int* incy, const float* c,
           const void* s);
void zrot_(const int* n, void* x, const int* incx, void* y, const int* incy, const double* c,
           const void* s);
}

namespace mimic::cublas::cpu {

using cf = std::complex<float>;
using cd = std::complex<double>;

template <typename T> constexpr bool is_complex = std::is_same_v<T, cf> || std::is_same_v<T, cd>;
template <typename T> struct RealOf {
  using type = T;
};
template <typename T> struct RealOf<std::complex<T>> {
  using type = T;
};
template <typename T> using Real = typename RealOf<T>::type;

inline CBLAS_TRANSPOSE cblas_op(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? CblasNoTrans : op == CUBLAS_OP_T ? CblasTrans : CblasConjTrans;
}
inline CBLAS_UPLO cblas_uplo(cublasFillMode_t u) {
  return u == CUBLAS_FILL_MODE_UPPER ? CblasUpper : CblasLower;
}
inline CBLAS_DIAG cblas_diag(cublasDiagType_t d) {
  return d == CUBLAS_DIAG_UNIT ? CblasUnit : CblasNonUnit;
}
inline CBLAS_SIDE cblas_side(cublasSideMode_t s) {
  return s == CUBLAS_SIDE_LEFT ? CblasLeft : CblasRight;
}

// One expression per element type: real routines take scalars by value, complex ones by
// address.
#define MIMIC_CBLAS(T, s, d, c, z)                                                                 \
  do {                                                                                             \
    if constexpr (std::is_same_v<T, float>)                                                        \
      s;                                                                                           \
    else if constexpr (std::is_same_v<T, double>)                                                  \
      d;                                                                                           \
    else if constexpr (std::is_same_v<T, cf>)                                                      \
      c;                                                                                           \
    else                                                                                           \
      z;                                                                                           \
  } while (0)

template <typename T>
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, T alpha, const T* A, int lda,
          const T* B, int ldb, T beta, T* C, int ldc) {
  const auto o = CblasColMajor;
  MIMIC_CBLAS(T, cblas_sgemm(o, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
              cblas_dgemm(o, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
              cblas_cgemm(o, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc),
              cblas_zgemm(o, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
}

template <typename T>
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, CBLAS_DIAG diag, int m, int n,
          T alpha, const T* A, int lda, T* B, int ldb) {
  const auto o = CblasColMajor;
  MIMIC_CBLAS(T, cblas_strsm(o, side, uplo, t, diag, m, n, alpha, A, lda, B, ldb),
              cblas_dtrsm(o, side, uplo, t, diag, m, n, alpha, A, lda, B, ldb),
              cblas_ctrsm(o, side, uplo, t, diag, m, n, &alpha, A, lda, B, ldb),
              cblas_ztrsm(o, side, uplo, t, diag, m, n, &alpha, A, lda, B, ldb));
}

template <typename T>
void trmm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, CBLAS_DIAG diag, int m, int n,
          T alpha, const T* A, int lda, T* B, int ldb) {
  const auto o = CblasColMajor;
  MIMIC_CBLAS(T, cblas_strmm(o, side, uplo, t, diag, m, n, alpha, A, lda, B, ldb),
              cblas_dtrmm(o, side, uplo, t, diag, m, n, alpha, A, lda, B, ldb),
              cblas_ctrmm(o, side, uplo, t, diag, m, n, &alpha, A, lda, B, ldb),
              cblas_ztrmm(o, side, uplo, t, diag, m, n, &alpha, A, lda, B, ldb));
}

// The index of element i of a BLAS vector of n elements with increment inc (a negative
// increment walks it from the end).
inline long long strided(long long i, long long n, long long inc) {
  return inc >= 0 ? i * inc : (i - n + 1) * inc;
}

} // namespace mimic::cublas::cpu
