// The handle API (create/destroy, streams, modes, workspace), version and status queries,
// the logger, and the Set/Get Vector/Matrix copies.
#pragma once

#include <cublas_api.h>

namespace mimic::cublas::impl {

cublasStatus_t create(cublasHandle_t* handle);
cublasStatus_t destroy(cublasHandle_t handle);
cublasStatus_t get_version(cublasHandle_t handle, int* version);
cublasStatus_t get_property(libraryPropertyType type, int* value);
size_t cudart_version();
cublasStatus_t set_workspace(cublasHandle_t handle, void* workspace, size_t bytes);
cublasStatus_t set_stream(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t get_stream(cublasHandle_t handle, cudaStream_t* stream);
cublasStatus_t get_pointer_mode(cublasHandle_t handle, cublasPointerMode_t* mode);
cublasStatus_t set_pointer_mode(cublasHandle_t handle, cublasPointerMode_t mode);
cublasStatus_t get_atomics_mode(cublasHandle_t handle, cublasAtomicsMode_t* mode);
cublasStatus_t set_atomics_mode(cublasHandle_t handle, cublasAtomicsMode_t mode);
cublasStatus_t get_math_mode(cublasHandle_t handle, cublasMath_t* mode);
cublasStatus_t set_math_mode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t get_sm_count_target(cublasHandle_t handle, int* count);
cublasStatus_t set_sm_count_target(cublasHandle_t handle, int count);
cublasStatus_t get_emulation_strategy(cublasHandle_t handle, cublasEmulationStrategy_t* strategy);
cublasStatus_t set_emulation_strategy(cublasHandle_t handle, cublasEmulationStrategy_t strategy);

const char* status_name(cublasStatus_t status);
const char* status_string(cublasStatus_t status);
cublasStatus_t logger_configure(int log_on, int to_stdout, int to_stderr, const char* file_name);
cublasStatus_t set_logger_callback(cublasLogCallback callback);
cublasStatus_t get_logger_callback(cublasLogCallback* callback);

cublasStatus_t set_vector(int64_t n, int64_t elem_size, const void* x, int64_t incx, void* y,
                          int64_t incy);
cublasStatus_t get_vector(int64_t n, int64_t elem_size, const void* x, int64_t incx, void* y,
                          int64_t incy);
cublasStatus_t set_vector_async(int64_t n, int64_t elem_size, const void* x, int64_t incx, void* y,
                                int64_t incy, cudaStream_t stream);
cublasStatus_t get_vector_async(int64_t n, int64_t elem_size, const void* x, int64_t incx, void* y,
                                int64_t incy, cudaStream_t stream);
cublasStatus_t set_matrix(int64_t rows, int64_t cols, int64_t elem_size, const void* A, int64_t lda,
                          void* B, int64_t ldb);
cublasStatus_t get_matrix(int64_t rows, int64_t cols, int64_t elem_size, const void* A, int64_t lda,
                          void* B, int64_t ldb);
cublasStatus_t set_matrix_async(int64_t rows, int64_t cols, int64_t elem_size, const void* A,
                                int64_t lda, void* B, int64_t ldb, cudaStream_t stream);
cublasStatus_t get_matrix_async(int64_t rows, int64_t cols, int64_t elem_size, const void* A,
                                int64_t lda, void* B, int64_t ldb, cudaStream_t stream);

} // namespace mimic::cublas::impl
