// Level 2: matrix-vector operations for S, D, C, Z and their _64 forms.
#pragma once

#include "libs/cublas/api_common.h"

namespace mimic::cublas::impl {

template <typename T> Level2Args level2_args(Level2Op op) {
  Level2Args a;
  a.op = op;
  a.type = data_type<T>;
  return a;
}

inline cublasStatus_t run_level2(Handle& handle, const Level2Args& a) {
  MIMIC_CUBLAS_REQUIRE(a.m >= 0 && a.n >= 0 && a.incx != 0);
  if (a.y || a.op == Level2Op::Gemv || a.op == Level2Op::Gbmv) MIMIC_CUBLAS_REQUIRE(a.incy != 0);
  return handle.backend->level2(handle.target(), a);
}

// y = alpha op(A) x + beta y, A m x n.
template <typename T>
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t trans, int64_t m, int64_t n, const T* alpha,
                    const T* A, int64_t lda, const T* x, int64_t incx, const T* beta, T* y,
                    int64_t incy) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(valid_op(trans) && lda >= at_least_one(m) && alpha && beta);
    Level2Args a = level2_args<T>(Level2Op::Gemv);
    a.trans = trans, a.m = m, a.n = n, a.A = const_cast<T*>(A), a.lda = lda;
    a.x = const_cast<T*>(x), a.incx = incx, a.y = y, a.incy = incy;
    a.alpha = scalar(handle, alpha), a.beta = scalar(handle, beta);
    return run_level2(handle, a);
  });
}

template <typename T>
cublasStatus_t gbmv(cublasHandle_t h, cublasOperation_t trans, int64_t m, int64_t n, int64_t kl,
                    int64_t ku, const T* alpha, const T* A, int64_t lda, const T* x, int64_t incx,
                    const T* beta, T* y, int64_t incy) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(valid_op(trans) && kl >= 0 && ku >= 0 && lda >= kl + ku + 1 && alpha &&
                         beta);
    Level2Args a = level2_args<T>(Level2Op::Gbmv);
    a.trans = trans, a.m = m, a.n = n, a.kl = kl, a.ku = ku, a.A = const_cast<T*>(A), a.lda = lda;
    a.x = const_cast<T*>(x), a.incx = incx, a.y = y, a.incy = incy;
    a.alpha = scalar(handle, alpha), a.beta = scalar(handle, beta);
    return run_level2(handle, a);
  });
}

// A += alpha x y^T (ger, geru) or alpha x y^H (gerc).
template <typename T>
cublasStatus_t rank1(Level2Op op, cublasHandle_t h, int64_t m, int64_t n, const T* alpha,
                     const T* x, int64_t incx, const T* y, int64_t incy, T* A, int64_t lda) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(lda >= at_least_one(m) && alpha);
    Level2Args a = level2_args<T>(op);
    a.m = m, a.n = n, a.A = A, a.lda = lda;
    a.x = const_cast<T*>(x), a.incx = incx, a.y = const_cast<T*>(y), a.incy = incy;
    a.alpha = scalar(handle, alpha);
    return run_level2(handle, a);
  });
}

template <typename T>
cublasStatus_t ger(cublasHandle_t h, int64_t m, int64_t n, const T* alpha, const T* x, int64_t incx,
                   const T* y, int64_t incy, T* A, int64_t lda) {
  return rank1(Level2Op::Ger, h, m, n, alpha, x, incx, y, incy, A, lda);
}

template <typename T>
cublasStatus_t gerc(cublasHandle_t h, int64_t m, int64_t n, const T* alpha, const T* x,
                    int64_t incx, const T* y, int64_t incy, T* A, int64_t lda) {
  return rank1(Level2Op::Gerc, h, m, n, alpha, x, incx, y, incy, A, lda);
}

// y = alpha A x + beta y for symmetric/Hermitian A: full (lda), banded (k, lda) or packed.
template <typename T>
cublasStatus_t symmetric_mv(Level2Op op, cublasHandle_t h, cublasFillMode_t uplo, int64_t n,
                            int64_t k, const T* alpha, const T* A, int64_t lda, const T* x,
                            int64_t incx, const T* beta, T* y, int64_t incy) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(valid_fill(uplo) && alpha && beta && k >= 0);
    bool banded = op == Level2Op::Sbmv || op == Level2Op::Hbmv;
    bool packed = op == Level2Op::Spmv || op == Level2Op::Hpmv;
    if (!packed) MIMIC_CUBLAS_REQUIRE(lda >= (banded ? k + 1 : at_least_one(n)));
    Level2Args a = level2_args<T>(op);
    a.uplo = uplo, a.n = n, a.ku = k, a.A = const_cast<T*>(A), a.lda = lda;
    a.x = const_cast<T*>(x), a.incx = incx, a.y = y, a.incy = incy;
    a.alpha = scalar(handle, alpha), a.beta = scalar(handle, beta);
    return run_level2(handle, a);
  });
}

template <typename T>
cublasStatus_t symv(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const T* alpha, const T* A,
                    int64_t lda, const T* x, int64_t incx, const T* beta, T* y, int64_t incy) {
  return symmetric_mv(Level2Op::Symv, h, uplo, n, 0, alpha, A, lda, x, incx, beta, y, incy);
}
template <typename T>
cublasStatus_t hemv(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const T* alpha, const T* A,
                    int64_t lda, const T* x, int64_t incx, const T* beta, T* y, int64_t incy) {
  return symmetric_mv(Level2Op::Hemv, h, uplo, n, 0, alpha, A, lda, x, incx, beta, y, incy);
}
template <typename T>
cublasStatus_t sbmv(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, int64_t k, const T* alpha,
                    const T* A, int64_t lda, const T* x, int64_t incx, const T* beta, T* y,
                    int64_t incy) {
  return symmetric_mv(Level2Op::Sbmv, h, uplo, n, k, alpha, A, lda, x, incx, beta, y, incy);
}
template <typename T>
cublasStatus_t hbmv(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, int64_t k, const T* alpha,
                    const T* A, int64_t lda, const T* x, int64_t incx, const T* beta, T* y,
                    int64_t incy) {
  return symmetric_mv(Level2Op::Hbmv, h, uplo, n, k, alpha, A, lda, x, incx, beta, y, incy);
}
template <typename T>
cublasStatus_t spmv(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const T* alpha, const T* AP,
                    const T* x, int64_t incx, const T* beta, T* y, int64_t incy) {
  return symmetric_mv(Level2Op::Spmv, h, uplo, n, 0, alpha, AP, 0, x, incx, beta, y, incy);
}
template <typename T>
cublasStatus_t hpmv(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const T* alpha, const T* AP,
                    const T* x, int64_t incx, const T* beta, T* y, int64_t incy) {
  return symmetric_mv(Level2Op::Hpmv, h, uplo, n, 0, alpha, AP, 0, x, incx, beta, y, incy);
}

// Symmetric/Hermitian rank-1 and rank-2 updates, full (lda > 0) or packed (lda == 0).
// alpha is real for her and hpr.
template <typename T, typename A>
cublasStatus_t symmetric_update(Level2Op op, cublasHandle_t h, cublasFillMode_t uplo, int64_t n,
                                const A* alpha, const T* x, int64_t incx, const T* y, int64_t incy,
                                T* matrix, int64_t lda, bool packed) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(valid_fill(uplo) && alpha);
    if (!packed) MIMIC_CUBLAS_REQUIRE(lda >= at_least_one(n));
    Level2Args a = level2_args<T>(op);
    a.uplo = uplo, a.n = n, a.A = matrix, a.lda = lda;
    a.x = const_cast<T*>(x), a.incx = incx, a.y = const_cast<T*>(y), a.incy = incy;
    a.alpha = scalar(handle, alpha);
    return run_level2(handle, a);
  });
}

template <typename T, typename A>
cublasStatus_t syr(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const A* alpha, const T* x,
                   int64_t incx, T* matrix, int64_t lda) {
  return symmetric_update<T>(Level2Op::Syr, h, uplo, n, alpha, x, incx, nullptr, 1, matrix, lda,
                             false);
}
template <typename T, typename A>
cublasStatus_t her(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const A* alpha, const T* x,
                   int64_t incx, T* matrix, int64_t lda) {
  return symmetric_update<T>(Level2Op::Her, h, uplo, n, alpha, x, incx, nullptr, 1, matrix, lda,
                             false);
}
template <typename T>
cublasStatus_t syr2(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const T* alpha, const T* x,
                    int64_t incx, const T* y, int64_t incy, T* matrix, int64_t lda) {
  return symmetric_update<T>(Level2Op::Syr2, h, uplo, n, alpha, x, incx, y, incy, matrix, lda,
                             false);
}
template <typename T>
cublasStatus_t her2(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const T* alpha, const T* x,
                    int64_t incx, const T* y, int64_t incy, T* matrix, int64_t lda) {
  return symmetric_update<T>(Level2Op::Her2, h, uplo, n, alpha, x, incx, y, incy, matrix, lda,
                             false);
}
template <typename T, typename A>
cublasStatus_t spr(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const A* alpha, const T* x,
                   int64_t incx, T* AP) {
  return symmetric_update<T>(Level2Op::Spr, h, uplo, n, alpha, x, incx, nullptr, 1, AP, 0, true);
}
template <typename T, typename A>
cublasStatus_t hpr(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const A* alpha, const T* x,
                   int64_t incx, T* AP) {
  return symmetric_update<T>(Level2Op::Hpr, h, uplo, n, alpha, x, incx, nullptr, 1, AP, 0, true);
}
template <typename T>
cublasStatus_t spr2(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const T* alpha, const T* x,
                    int64_t incx, const T* y, int64_t incy, T* AP) {
  return symmetric_update<T>(Level2Op::Spr2, h, uplo, n, alpha, x, incx, y, incy, AP, 0, true);
}
template <typename T>
cublasStatus_t hpr2(cublasHandle_t h, cublasFillMode_t uplo, int64_t n, const T* alpha, const T* x,
                    int64_t incx, const T* y, int64_t incy, T* AP) {
  return symmetric_update<T>(Level2Op::Hpr2, h, uplo, n, alpha, x, incx, y, incy, AP, 0, true);
}

// Triangular x = op(A) x and x = op(A)^-1 x: full (lda), banded (k, lda) or packed.
template <typename T>
cublasStatus_t triangular_mv(Level2Op op, cublasHandle_t h, cublasFillMode_t uplo,
                             cublasOperation_t trans, cublasDiagType_t diag, int64_t n, int64_t k,
                             const T* A, int64_t lda, T* x, int64_t incx) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(valid_fill(uplo) && valid_op(trans) && valid_diag(diag) && k >= 0);
    bool banded = op == Level2Op::Tbmv || op == Level2Op::Tbsv;
    bool packed = op == Level2Op::Tpmv || op == Level2Op::Tpsv;
    if (!packed) MIMIC_CUBLAS_REQUIRE(lda >= (banded ? k + 1 : at_least_one(n)));
    Level2Args a = level2_args<T>(op);
    a.uplo = uplo, a.trans = trans, a.diag = diag, a.n = n, a.ku = k;
    a.A = const_cast<T*>(A), a.lda = lda, a.x = x, a.incx = incx;
    return run_level2(handle, a);
  });
}

#define MIMIC_CUBLAS_TRIANGULAR_FULL(name, op)                                                     \
  template <typename T>                                                                            \
  cublasStatus_t name(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans,            \
                      cublasDiagType_t diag, int64_t n, const T* A, int64_t lda, T* x,             \
                      int64_t incx) {                                                              \
    return triangular_mv(op, h, uplo, trans, diag, n, 0, A, lda, x, incx);                         \
  }
#define MIMIC_CUBLAS_TRIANGULAR_BANDED(name, op)                                                   \
  template <typename T>                                                                            \
  cublasStatus_t name(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans,            \
                      cublasDiagType_t diag, int64_t n, int64_t k, const T* A, int64_t lda, T* x,  \
                      int64_t incx) {                                                              \
    return triangular_mv(op, h, uplo, trans, diag, n, k, A, lda, x, incx);                         \
  }
#define MIMIC_CUBLAS_TRIANGULAR_PACKED(name, op)                                                   \
  template <typename T>                                                                            \
  cublasStatus_t name(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans,            \
                      cublasDiagType_t diag, int64_t n, const T* AP, T* x, int64_t incx) {         \
    return triangular_mv(op, h, uplo, trans, diag, n, 0, AP, 0, x, incx);                          \
  }

MIMIC_CUBLAS_TRIANGULAR_FULL(trmv, Level2Op::Trmv)
MIMIC_CUBLAS_TRIANGULAR_FULL(trsv, Level2Op::Trsv)
MIMIC_CUBLAS_TRIANGULAR_BANDED(tbmv, Level2Op::Tbmv)
MIMIC_CUBLAS_TRIANGULAR_BANDED(tbsv, Level2Op::Tbsv)
MIMIC_CUBLAS_TRIANGULAR_PACKED(tpmv, Level2Op::Tpmv)
MIMIC_CUBLAS_TRIANGULAR_PACKED(tpsv, Level2Op::Tpsv)

#undef MIMIC_CUBLAS_TRIANGULAR_FULL
#undef MIMIC_CUBLAS_TRIANGULAR_BANDED
#undef MIMIC_CUBLAS_TRIANGULAR_PACKED

} // namespace mimic::cublas::impl
