// What the API layer's templates share: C++ types of cuBLAS data types, argument checks,
// and handing an operation to the handle's backend.
#pragma once

#include "libs/cublas/handle.h"

#include <cublas_api.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace mimic::cublas::impl {

template <typename T> struct TypeInfo;
template <> struct TypeInfo<float> {
  static constexpr cudaDataType_t type = CUDA_R_32F;
  using Real = float;
};
template <> struct TypeInfo<double> {
  static constexpr cudaDataType_t type = CUDA_R_64F;
  using Real = double;
};
template <> struct TypeInfo<cuComplex> {
  static constexpr cudaDataType_t type = CUDA_C_32F;
  using Real = float;
};
template <> struct TypeInfo<cuDoubleComplex> {
  static constexpr cudaDataType_t type = CUDA_C_64F;
  using Real = double;
};
template <> struct TypeInfo<__half> {
  static constexpr cudaDataType_t type = CUDA_R_16F;
  using Real = __half;
};

template <typename T> constexpr cudaDataType_t data_type = TypeInfo<std::remove_cv_t<T>>::type;

inline bool valid_op(cublasOperation_t op) {
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}
inline bool valid_fill(cublasFillMode_t uplo) {
  return uplo == CUBLAS_FILL_MODE_LOWER || uplo == CUBLAS_FILL_MODE_UPPER;
}
inline bool valid_diag(cublasDiagType_t diag) {
  return diag == CUBLAS_DIAG_NON_UNIT || diag == CUBLAS_DIAG_UNIT;
}
inline bool valid_side(cublasSideMode_t side) {
  return side == CUBLAS_SIDE_LEFT || side == CUBLAS_SIDE_RIGHT;
}
inline int64_t at_least_one(int64_t v) {
  return std::max<int64_t>(1, v);
}

template <typename T> Scalar scalar(const Handle& handle, const T* pointer) {
  return Scalar::from(pointer, sizeof(T), handle.device_pointers());
}

// Checks `h`, then runs `body(handle)`; NOT_INITIALIZED for a handle that is not live.
template <typename Body> cublasStatus_t with_handle(cublasHandle_t h, Body&& body) {
  Handle* handle = find_handle(h);
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  return body(*handle);
}

} // namespace mimic::cublas::impl

// Inside an API template: a failed argument check returns INVALID_VALUE.
#define MIMIC_CUBLAS_REQUIRE(condition)                                                            \
  do {                                                                                             \
    if (!(condition)) return CUBLAS_STATUS_INVALID_VALUE;                                          \
  } while (0)
