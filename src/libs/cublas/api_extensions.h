// The cuBLAS extensions: GemmEx and its batched forms with mixed data and compute types,
// and the batched LU, inversion and least-squares solvers.
#pragma once

#include "libs/cublas/api_level3.h"

namespace mimic::cublas::impl {

// The scale type (alpha, beta) of a GemmEx, from its compute type and C's type; CUDA_R_8I
// (never a scale type) when the compute type is not one cuBLAS defines.
cudaDataType_t gemm_scale_type(cublasComputeType_t compute, cudaDataType_t c_type);

inline GemmArgs ex_args(const Handle& handle, cublasOperation_t transa, cublasOperation_t transb,
                        int64_t m, int64_t n, int64_t k, const void* alpha, cudaDataType a_type,
                        cudaDataType b_type, const void* beta, cudaDataType c_type,
                        cublasComputeType_t compute) {
  GemmArgs a;
  a.transa = transa, a.transb = transb, a.m = m, a.n = n, a.k = k;
  a.a_type = a_type, a.b_type = b_type, a.c_type = c_type, a.compute = compute;
  a.scale_type = gemm_scale_type(compute, c_type);
  size_t scale_size = data_type_size(a.scale_type);
  a.alpha = Scalar::from(alpha, scale_size, handle.device_pointers());
  a.beta = Scalar::from(beta, scale_size, handle.device_pointers());
  return a;
}

inline cublasStatus_t gemm_ex(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                              int64_t m, int64_t n, int64_t k, const void* alpha, const void* A,
                              cudaDataType a_type, int64_t lda, const void* B, cudaDataType b_type,
                              int64_t ldb, const void* beta, void* C, cudaDataType c_type,
                              int64_t ldc, cublasComputeType_t compute, cublasGemmAlgo_t) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(alpha && beta);
    GemmArgs a =
        ex_args(handle, transa, transb, m, n, k, alpha, a_type, b_type, beta, c_type, compute);
    a.A = A, a.lda = lda, a.B = B, a.ldb = ldb, a.C = C, a.ldc = ldc;
    return run_gemm(handle, a);
  });
}

inline cublasStatus_t gemm_batched_ex(cublasHandle_t h, cublasOperation_t transa,
                                      cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                      const void* alpha, const void* const A[], cudaDataType a_type,
                                      int64_t lda, const void* const B[], cudaDataType b_type,
                                      int64_t ldb, const void* beta, void* const C[],
                                      cudaDataType c_type, int64_t ldc, int64_t batch,
                                      cublasComputeType_t compute, cublasGemmAlgo_t) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(alpha && beta);
    GemmArgs a =
        ex_args(handle, transa, transb, m, n, k, alpha, a_type, b_type, beta, c_type, compute);
    a.A = A, a.lda = lda, a.B = B, a.ldb = ldb,
    a.C = const_cast<void*>(static_cast<const void*>(C));
    a.ldc = ldc, a.batch = batch, a.pointer_arrays = true;
    return run_gemm(handle, a);
  });
}

inline cublasStatus_t
gemm_strided_batched_ex(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                        int64_t m, int64_t n, int64_t k, const void* alpha, const void* A,
                        cudaDataType a_type, int64_t lda, long long stride_a, const void* B,
                        cudaDataType b_type, int64_t ldb, long long stride_b, const void* beta,
                        void* C, cudaDataType c_type, int64_t ldc, long long stride_c,
                        int64_t batch, cublasComputeType_t compute, cublasGemmAlgo_t) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(alpha && beta);
    GemmArgs a =
        ex_args(handle, transa, transb, m, n, k, alpha, a_type, b_type, beta, c_type, compute);
    a.A = A, a.lda = lda, a.stride_a = stride_a, a.B = B, a.ldb = ldb, a.stride_b = stride_b;
    a.C = C, a.ldc = ldc, a.stride_c = stride_c, a.batch = batch;
    return run_gemm(handle, a);
  });
}

// cublasSgemmEx (real) and cublasCgemmEx (complex): f32 computation, f32 scalars.
template <typename S>
cublasStatus_t gemm_ex_f32(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
                           int64_t m, int64_t n, int64_t k, const S* alpha, const void* A,
                           cudaDataType a_type, int64_t lda, const void* B, cudaDataType b_type,
                           int64_t ldb, const S* beta, void* C, cudaDataType c_type, int64_t ldc) {
  return gemm_ex(h, transa, transb, m, n, k, alpha, A, a_type, lda, B, b_type, ldb, beta, C, c_type,
                 ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

// --- Batched LU and least squares ---------------------------------------------------------

template <typename T>
cublasStatus_t lu_batched(Handle& handle, LuOp op, int64_t n, const void* A, int64_t lda,
                          const int* pivots, void* B, int64_t ldb, int* info, int64_t batch) {
  MIMIC_CUBLAS_REQUIRE(n >= 0 && lda >= at_least_one(n) && batch >= 0);
  LuBatchedArgs a;
  a.op = op, a.type = data_type<T>, a.n = n, a.A = const_cast<void*>(A), a.lda = lda;
  a.pivots = const_cast<int*>(pivots), a.B = B, a.ldb = ldb, a.info = info, a.batch = batch;
  return handle.backend->lu_batched(handle.target(), a);
}

template <typename T>
cublasStatus_t getrf_batched(cublasHandle_t h, int64_t n, T* const A[], int64_t lda, int* P,
                             int* info, int64_t batch) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(info);
    return lu_batched<T>(handle, LuOp::Getrf, n, A, lda, P, nullptr, 0, info, batch);
  });
}

template <typename T>
cublasStatus_t getri_batched(cublasHandle_t h, int64_t n, const T* const A[], int64_t lda,
                             const int* P, T* const C[], int64_t ldc, int* info, int64_t batch) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(info && ldc >= at_least_one(n));
    return lu_batched<T>(handle, LuOp::Getri, n, A, lda, P, const_cast<T**>(C), ldc, info, batch);
  });
}

template <typename T>
cublasStatus_t matinv_batched(cublasHandle_t h, int64_t n, const T* const A[], int64_t lda,
                              T* const Ainv[], int64_t lda_inv, int* info, int64_t batch) {
  return with_handle(h, [&](Handle& handle) {
    // cuBLAS inverts matrices of up to 32 x 32 here.
    MIMIC_CUBLAS_REQUIRE(info && n <= 32 && lda_inv >= at_least_one(n));
    return lu_batched<T>(handle, LuOp::Matinv, n, A, lda, nullptr, const_cast<T**>(Ainv), lda_inv,
                         info, batch);
  });
}

// getrs reports a bad argument through the host integer `info` (-i for argument i).
template <typename T>
cublasStatus_t getrs_batched(cublasHandle_t h, cublasOperation_t trans, int64_t n, int64_t nrhs,
                             const T* const A[], int64_t lda, const int* P, T* const B[],
                             int64_t ldb, int* info, int64_t batch) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(info);
    int bad = !valid_op(trans)        ? 2
              : n < 0                 ? 3
              : nrhs < 0              ? 4
              : lda < at_least_one(n) ? 6
              : ldb < at_least_one(n) ? 9
              : batch < 0             ? 11
                                      : 0;
    *info = -bad;
    MIMIC_CUBLAS_REQUIRE(!bad);
    LuBatchedArgs a;
    a.op = LuOp::Getrs, a.type = data_type<T>, a.trans = trans, a.n = n, a.nrhs = nrhs;
    a.A = const_cast<T**>(A), a.lda = lda, a.pivots = const_cast<int*>(P);
    a.B = const_cast<T**>(B), a.ldb = ldb, a.batch = batch;
    return handle.backend->lu_batched(handle.target(), a);
  });
}

template <typename T>
cublasStatus_t gels_batched(cublasHandle_t h, cublasOperation_t trans, int64_t m, int64_t n,
                            int64_t nrhs, T* const A[], int64_t lda, T* const C[], int64_t ldc,
                            int* info, int* dev_info, int64_t batch) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(info);
    // cuBLAS solves the overdetermined, untransposed case only.
    int bad = trans != CUBLAS_OP_N    ? 2
              : m < 0                 ? 3
              : n < 0 || n > m        ? 4
              : nrhs < 0              ? 5
              : lda < at_least_one(m) ? 7
              : ldc < at_least_one(m) ? 9
              : batch < 0             ? 12
                                      : 0;
    *info = -bad;
    MIMIC_CUBLAS_REQUIRE(!bad);
    GelsBatchedArgs a;
    a.type = data_type<T>, a.m = m, a.n = n, a.nrhs = nrhs, a.A = const_cast<T**>(A), a.lda = lda;
    a.C = const_cast<T**>(C), a.ldc = ldc, a.info = dev_info, a.batch = batch;
    return handle.backend->gels_batched(handle.target(), a);
  });
}

} // namespace mimic::cublas::impl
