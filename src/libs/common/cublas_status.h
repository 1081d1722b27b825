// Names and descriptions of cublasStatus_t values, as cublasGetStatusName/String and
// cublasLtGetStatusName/String return them.
#pragma once

#include <cublas_api.h>

namespace mimic::libs {

// "CUBLAS_STATUS_..."; "CUBLAS_STATUS_UNKNOWN" for a value cuBLAS does not define.
const char* cublas_status_name(cublasStatus_t status);
// A short description; "unknown error" for a value cuBLAS does not define.
const char* cublas_status_string(cublasStatus_t status);

} // namespace mimic::libs
