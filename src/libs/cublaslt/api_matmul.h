// cublasLtMatmul and cublasLtMatrixTransform.
#pragma once

#include <cublasLt.h>

namespace mimic::cublaslt::impl {

cublasStatus_t matmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                      const void* A, cublasLtMatrixLayout_t a_desc, const void* B,
                      cublasLtMatrixLayout_t b_desc, const void* beta, const void* C,
                      cublasLtMatrixLayout_t c_desc, void* D, cublasLtMatrixLayout_t d_desc,
                      const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                      cudaStream_t stream);

cublasStatus_t matrix_transform(cublasLtHandle_t handle, cublasLtMatrixTransformDesc_t desc,
                                const void* alpha, const void* A, cublasLtMatrixLayout_t a_desc,
                                const void* beta, const void* B, cublasLtMatrixLayout_t b_desc,
                                void* C, cublasLtMatrixLayout_t c_desc, cudaStream_t stream);

} // namespace mimic::cublaslt::impl
