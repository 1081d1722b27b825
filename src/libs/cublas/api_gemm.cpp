// The checks every gemm goes through (typed, Ex, batched, strided), and the data and
// compute type combinations cuBLAS documents for cublasGemmEx.
#include "libs/cublas/api_extensions.h"

namespace mimic::cublas::impl {
namespace {

struct GemmTypes {
  cublasComputeType_t compute;
  cudaDataType_t scale, ab, c;
};

// cuBLAS's table for cublasGemmEx; the typed gemms are its rows too.
constexpr GemmTypes supported_types[] = {
    {CUBLAS_COMPUTE_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F},
    {CUBLAS_COMPUTE_32I, CUDA_R_32I, CUDA_R_8I, CUDA_R_32I},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8I, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_C_32F, CUDA_C_8I, CUDA_C_32F},
    {CUBLAS_COMPUTE_32F, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F},
    {CUBLAS_COMPUTE_32F_FAST_16F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_FAST_16F, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F},
    {CUBLAS_COMPUTE_32F_FAST_16BF, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_FAST_16BF, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F},
    {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F},
    {CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F},
    {CUBLAS_COMPUTE_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F},
    {CUBLAS_COMPUTE_64F, CUDA_C_64F, CUDA_C_64F, CUDA_C_64F},
    {CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F},
    {CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, CUDA_C_64F, CUDA_C_64F, CUDA_C_64F},
};

// The _PEDANTIC compute types compute the same as their defaults here.
cublasComputeType_t without_pedantic(cublasComputeType_t compute) {
  switch (compute) {
  case CUBLAS_COMPUTE_16F_PEDANTIC:
    return CUBLAS_COMPUTE_16F;
  case CUBLAS_COMPUTE_32F_PEDANTIC:
    return CUBLAS_COMPUTE_32F;
  case CUBLAS_COMPUTE_64F_PEDANTIC:
    return CUBLAS_COMPUTE_64F;
  case CUBLAS_COMPUTE_32I_PEDANTIC:
    return CUBLAS_COMPUTE_32I;
  default:
    return compute;
  }
}

bool is_complex(cudaDataType_t t) {
  return t == CUDA_C_8I || t == CUDA_C_32F || t == CUDA_C_64F;
}

} // namespace

cudaDataType_t gemm_scale_type(cublasComputeType_t compute, cudaDataType_t c_type) {
  compute = without_pedantic(compute);
  for (const GemmTypes& row : supported_types)
    if (row.compute == compute && is_complex(row.scale) == is_complex(c_type)) return row.scale;
  return CUDA_R_8I;
}

cublasStatus_t run_gemm(Handle& handle, const GemmArgs& given) {
  GemmArgs a = given;
  MIMIC_CUBLAS_REQUIRE(valid_op(a.transa) && valid_op(a.transb));
  MIMIC_CUBLAS_REQUIRE(a.m >= 0 && a.n >= 0 && a.k >= 0 && a.batch >= 0);
  MIMIC_CUBLAS_REQUIRE(a.lda >= at_least_one(a.transa == CUBLAS_OP_N ? a.m : a.k));
  MIMIC_CUBLAS_REQUIRE(a.ldb >= at_least_one(a.transb == CUBLAS_OP_N ? a.k : a.n));
  MIMIC_CUBLAS_REQUIRE(a.ldc >= at_least_one(a.m));
  a.compute = without_pedantic(a.compute);
  bool known = false;
  for (const GemmTypes& row : supported_types)
    known |= row.compute == a.compute && row.scale == a.scale_type && row.ab == a.a_type &&
             row.ab == a.b_type && row.c == a.c_type;
  if (!known) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (a.m == 0 || a.n == 0 || a.batch == 0) return CUBLAS_STATUS_SUCCESS;
  return handle.backend->gemm(handle.target(), a);
}

} // namespace mimic::cublas::impl
