// The CPU backend's operations, run on the host when their turn in the stream comes.
// Arguments were checked by the API layer and fit OpenBLAS's 32-bit integers.
#pragma once

#include "libs/cublas/blas_backend.h"
#include "libs/cublas/cpu/cblas_calls.h"

#include <stdexcept>

namespace mimic::cublas::cpu {

void run_level1(const Level1Args& a);
void run_rotg(const RotgArgs& a);
void run_level2(const Level2Args& a);
void run_level3(const Level3Args& a);
void run_gemm(const GemmArgs& a);
void run_lu_batched(const LuBatchedArgs& a);
void run_gels_batched(const GelsBatchedArgs& a);

// Calls f(T{}) with the element type of a float, double or complex cudaDataType.
template <typename F> void with_type(cudaDataType_t type, F&& f) {
  switch (type) {
  case CUDA_R_32F:
    return f(float{});
  case CUDA_R_64F:
    return f(double{});
  case CUDA_C_32F:
    return f(cf{});
  case CUDA_C_64F:
    return f(cd{});
  default:
    throw std::logic_error("cuBLAS CPU backend: unexpected data type " + std::to_string(int(type)));
  }
}

// Matrix i of a batch given as an array of pointers (read when the work runs).
template <typename T> T* batch_matrix(const void* array, long long i) {
  return static_cast<T* const*>(array)[i];
}

} // namespace mimic::cublas::cpu
