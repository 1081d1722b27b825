// Level 3: matrix-matrix operations for S, D, C, Z (H for gemm), their batched forms and
// _64 forms, and the BLAS-like extensions geam and dgmm.
#pragma once

#include "libs/cublas/api_common.h"

namespace mimic::cublas::impl {

// The compute type cuBLAS uses for a typed gemm (Sgemm, Hgemm ...).
template <typename T> constexpr cublasComputeType_t natural_compute() {
  if constexpr (std::is_same_v<T, __half>)
    return CUBLAS_COMPUTE_16F;
  else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, cuDoubleComplex>)
    return CUBLAS_COMPUTE_64F;
  else
    return CUBLAS_COMPUTE_32F;
}

// Checks the shape of C = alpha op(A) op(B) + beta C and hands it to the backend.
cublasStatus_t run_gemm(Handle& handle, const GemmArgs& a);

template <typename T>
GemmArgs typed_gemm_args(const Handle& handle, cublasOperation_t transa, cublasOperation_t transb,
                         int64_t m, int64_t n, int64_t k, const T* alpha, const T* beta) {
  GemmArgs a;
  a.transa = transa, a.transb = transb, a.m = m, a.n = n, a.k = k;
  a.alpha = scalar(handle, alpha), a.beta = scalar(handle, beta);
  a.scale_type = a.a_type = a.b_type = a.c_type = data_type<T>;
  a.compute = natural_compute<T>();
  return a;
}

template <typename T>
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
                    int64_t n, int64_t k, const T* alpha, const T* A, int64_t lda, const T* B,
                    int64_t ldb, const T* beta, T* C, int64_t ldc) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(alpha && beta);
    GemmArgs a = typed_gemm_args(handle, transa, transb, m, n, k, alpha, beta);
    a.A = A, a.lda = lda, a.B = B, a.ldb = ldb, a.C = C, a.ldc = ldc;
    return run_gemm(handle, a);
  });
}

template <typename T>
cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                            int64_t m, int64_t n, int64_t k, const T* alpha, const T* const A[],
                            int64_t lda, const T* const B[], int64_t ldb, const T* beta,
                            T* const C[], int64_t ldc, int64_t batch) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(alpha && beta);
    GemmArgs a = typed_gemm_args(handle, transa, transb, m, n, k, alpha, beta);
    a.A = A, a.lda = lda, a.B = B, a.ldb = ldb,
    a.C = const_cast<void*>(static_cast<const void*>(C));
    a.ldc = ldc, a.batch = batch, a.pointer_arrays = true;
    return run_gemm(handle, a);
  });
}

template <typename T>
cublasStatus_t gemm_strided_batched(cublasHandle_t h, cublasOperation_t transa,
                                    cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                    const T* alpha, const T* A, int64_t lda, long long stride_a,
                                    const T* B, int64_t ldb, long long stride_b, const T* beta,
                                    T* C, int64_t ldc, long long stride_c, int64_t batch) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(alpha && beta);
    GemmArgs a = typed_gemm_args(handle, transa, transb, m, n, k, alpha, beta);
    a.A = A, a.lda = lda, a.stride_a = stride_a, a.B = B, a.ldb = ldb, a.stride_b = stride_b;
    a.C = C, a.ldc = ldc, a.stride_c = stride_c, a.batch = batch;
    return run_gemm(handle, a);
  });
}

template <typename T> Level3Args level3_args(Level3Op op) {
  Level3Args a;
  a.op = op;
  a.type = data_type<T>;
  return a;
}

inline cublasStatus_t run_level3(Handle& handle, const Level3Args& a) {
  MIMIC_CUBLAS_REQUIRE(a.m >= 0 && a.n >= 0 && a.k >= 0 && a.ldc >= at_least_one(a.m));
  return handle.backend->level3(handle.target(), a);
}

// C = alpha A B + beta C (side left) or alpha B A + beta C, A symmetric/Hermitian.
template <typename T>
cublasStatus_t symmetric_mm(Level3Op op, cublasHandle_t h, cublasSideMode_t side,
                            cublasFillMode_t uplo, int64_t m, int64_t n, const T* alpha, const T* A,
                            int64_t lda, const T* B, int64_t ldb, const T* beta, T* C,
                            int64_t ldc) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(valid_side(side) && valid_fill(uplo) && alpha && beta);
    MIMIC_CUBLAS_REQUIRE(lda >= at_least_one(side == CUBLAS_SIDE_LEFT ? m : n) &&
                         ldb >= at_least_one(m));
    Level3Args a = level3_args<T>(op);
    a.side = side, a.uplo = uplo, a.m = m, a.n = n;
    a.A = A, a.lda = lda, a.B = B, a.ldb = ldb, a.C = C, a.ldc = ldc;
    a.alpha = scalar(handle, alpha), a.beta = scalar(handle, beta);
    return run_level3(handle, a);
  });
}

template <typename T>
cublasStatus_t symm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, int64_t m,
                    int64_t n, const T* alpha, const T* A, int64_t lda, const T* B, int64_t ldb,
                    const T* beta, T* C, int64_t ldc) {
  return symmetric_mm(Level3Op::Symm, h, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <typename T>
cublasStatus_t hemm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, int64_t m,
                    int64_t n, const T* alpha, const T* A, int64_t lda, const T* B, int64_t ldb,
                    const T* beta, T* C, int64_t ldc) {
  return symmetric_mm(Level3Op::Hemm, h, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
}

// Rank-k updates of the uplo triangle of the n x n matrix C: syrk/herk (B unused),
// syr2k/her2k and syrkx/herkx. herk's alpha and beta, her2k's and herkx's beta are real.
template <typename T, typename A, typename B>
cublasStatus_t rank_k(Level3Op op, cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans,
                      int64_t n, int64_t k, const A* alpha, const T* matrix_a, int64_t lda,
                      const T* matrix_b, int64_t ldb, const B* beta, T* C, int64_t ldc) {
  return with_handle(h, [&](Handle& handle) {
    bool real = std::is_same_v<T, float> || std::is_same_v<T, double>;
    bool hermitian = op == Level3Op::Herk || op == Level3Op::Her2k || op == Level3Op::Herkx;
    // Real symmetric updates accept C as a synonym of T; complex ones N and T, Hermitian N and C.
    bool trans_ok =
        trans == CUBLAS_OP_N ||
        (hermitian ? trans == CUBLAS_OP_C : trans == CUBLAS_OP_T || (real && trans == CUBLAS_OP_C));
    MIMIC_CUBLAS_REQUIRE(valid_fill(uplo) && trans_ok && alpha && beta);
    int64_t rows = trans == CUBLAS_OP_N ? n : k;
    MIMIC_CUBLAS_REQUIRE(lda >= at_least_one(rows));
    if (op != Level3Op::Syrk && op != Level3Op::Herk)
      MIMIC_CUBLAS_REQUIRE(ldb >= at_least_one(rows));
    Level3Args a = level3_args<T>(op);
    a.uplo = uplo, a.transa = trans, a.m = n, a.n = n, a.k = k;
    a.A = matrix_a, a.lda = lda, a.B = matrix_b, a.ldb = ldb, a.C = C, a.ldc = ldc;
    a.alpha = scalar(handle, alpha), a.beta = scalar(handle, beta);
    return run_level3(handle, a);
  });
}

template <typename T, typename S>
cublasStatus_t syrk(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int64_t n,
                    int64_t k, const S* alpha, const T* A, int64_t lda, const S* beta, T* C,
                    int64_t ldc) {
  return rank_k<T>(Level3Op::Syrk, h, uplo, trans, n, k, alpha, A, lda, nullptr, 0, beta, C, ldc);
}
template <typename T, typename S>
cublasStatus_t herk(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int64_t n,
                    int64_t k, const S* alpha, const T* A, int64_t lda, const S* beta, T* C,
                    int64_t ldc) {
  return rank_k<T>(Level3Op::Herk, h, uplo, trans, n, k, alpha, A, lda, nullptr, 0, beta, C, ldc);
}

#define MIMIC_CUBLAS_RANK_2K(name, op)                                                             \
  template <typename T, typename B>                                                                \
  cublasStatus_t name(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int64_t n, \
                      int64_t k, const T* alpha, const T* A, int64_t lda, const T* Bm,             \
                      int64_t ldb, const B* beta, T* C, int64_t ldc) {                             \
    return rank_k<T>(op, h, uplo, trans, n, k, alpha, A, lda, Bm, ldb, beta, C, ldc);              \
  }
MIMIC_CUBLAS_RANK_2K(syr2k, Level3Op::Syr2k)
MIMIC_CUBLAS_RANK_2K(her2k, Level3Op::Her2k)
MIMIC_CUBLAS_RANK_2K(syrkx, Level3Op::Syrkx)
MIMIC_CUBLAS_RANK_2K(herkx, Level3Op::Herkx)
#undef MIMIC_CUBLAS_RANK_2K

// trmm: C = alpha op(A) B (or B op(A)), out of place; trsm: B = alpha op(A)^-1 B in place.
// `batch` < 0: one matrix; otherwise A and B are arrays of `batch` matrices (trsmBatched).
template <typename T>
cublasStatus_t triangular_mm(Level3Op op, cublasHandle_t h, cublasSideMode_t side,
                             cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag,
                             int64_t m, int64_t n, const T* alpha, const void* A, int64_t lda,
                             void* B, int64_t ldb, void* C, int64_t ldc, int64_t batch) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(valid_side(side) && valid_fill(uplo) && valid_op(trans) &&
                         valid_diag(diag) && alpha);
    MIMIC_CUBLAS_REQUIRE(lda >= at_least_one(side == CUBLAS_SIDE_LEFT ? m : n) &&
                         ldb >= at_least_one(m));
    Level3Args a = level3_args<T>(op);
    a.side = side, a.uplo = uplo, a.transa = trans, a.diag = diag, a.m = m, a.n = n;
    a.A = A, a.lda = lda, a.B = B, a.ldb = ldb, a.C = C, a.ldc = ldc, a.batch = batch;
    a.alpha = scalar(handle, alpha);
    return run_level3(handle, a);
  });
}

template <typename T>
cublasStatus_t trmm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
                    cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
                    const T* alpha, const T* A, int64_t lda, const T* B, int64_t ldb, T* C,
                    int64_t ldc) {
  return triangular_mm(Level3Op::Trmm, h, side, uplo, trans, diag, m, n, alpha, A, lda,
                       const_cast<T*>(B), ldb, C, ldc, -1);
}

template <typename T>
cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
                    cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
                    const T* alpha, const T* A, int64_t lda, T* B, int64_t ldb) {
  return triangular_mm(Level3Op::Trsm, h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, B,
                       ldb, -1);
}

template <typename T>
cublasStatus_t trsm_batched(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
                            cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n,
                            const T* alpha, const T* const A[], int64_t lda, T* const B[],
                            int64_t ldb, int64_t batch) {
  if (batch < 0)
    return find_handle(h) ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_NOT_INITIALIZED;
  return triangular_mm(Level3Op::Trsm, h, side, uplo, trans, diag, m, n, alpha, A, lda,
                       const_cast<T**>(B), ldb, const_cast<T**>(B), ldb, batch);
}

// C = alpha op(A) + beta op(B), m x n.
template <typename T>
cublasStatus_t geam(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
                    int64_t n, const T* alpha, const T* A, int64_t lda, const T* beta, const T* B,
                    int64_t ldb, T* C, int64_t ldc) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(valid_op(transa) && valid_op(transb) && alpha && beta);
    MIMIC_CUBLAS_REQUIRE(lda >= at_least_one(transa == CUBLAS_OP_N ? m : n));
    MIMIC_CUBLAS_REQUIRE(ldb >= at_least_one(transb == CUBLAS_OP_N ? m : n));
    Level3Args a = level3_args<T>(Level3Op::Geam);
    a.transa = transa, a.transb = transb, a.m = m, a.n = n;
    a.A = A, a.lda = lda, a.B = B, a.ldb = ldb, a.C = C, a.ldc = ldc;
    a.alpha = scalar(handle, alpha), a.beta = scalar(handle, beta);
    return run_level3(handle, a);
  });
}

// C = A diag(x) (side right) or diag(x) A (side left).
template <typename T>
cublasStatus_t dgmm(cublasHandle_t h, cublasSideMode_t side, int64_t m, int64_t n, const T* A,
                    int64_t lda, const T* x, int64_t incx, T* C, int64_t ldc) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(valid_side(side) && lda >= at_least_one(m));
    Level3Args a = level3_args<T>(Level3Op::Dgmm);
    a.side = side, a.m = m, a.n = n, a.A = A, a.lda = lda, a.B = x, a.ldb = incx, a.C = C,
    a.ldc = ldc;
    return run_level3(handle, a);
  });
}

} // namespace mimic::cublas::impl
