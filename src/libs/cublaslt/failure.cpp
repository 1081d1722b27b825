#include "libs/cublaslt/failure.h"

#include "libs/cublaslt/api_boundary.h"
#include "support/log.h"

namespace mimic::cublaslt {

cublasStatus_t fail(cublasStatus_t status, const std::string& reason) {
  const char* api = impl::current_api;
  if (log_enabled(log_error))
    log_message(log_error, api, reason + " (" + libs::cublas_status_name(status) + ")");
  if (status == CUBLAS_STATUS_NOT_SUPPORTED)
    warn_once(std::string("cublaslt:") + api + ":" + reason,
              std::string("cuBLASLt: ") + api + ": " + reason + "; it returns NOT_SUPPORTED");
  return status;
}

std::string data_type_name(int type) {
  switch (type) {
  case CUDA_R_16F:
    return "CUDA_R_16F";
  case CUDA_R_16BF:
    return "CUDA_R_16BF";
  case CUDA_R_32F:
    return "CUDA_R_32F";
  case CUDA_R_64F:
    return "CUDA_R_64F";
  case CUDA_R_8I:
    return "CUDA_R_8I";
  case CUDA_R_32I:
    return "CUDA_R_32I";
  case CUDA_C_32F:
    return "CUDA_C_32F";
  case CUDA_C_64F:
    return "CUDA_C_64F";
  case CUDA_R_8F_E4M3:
    return "CUDA_R_8F_E4M3";
  case CUDA_R_8F_E5M2:
    return "CUDA_R_8F_E5M2";
  default:
    return "cudaDataType " + std::to_string(type);
  }
}

std::string compute_type_name(int type) {
  switch (type) {
  case CUBLAS_COMPUTE_16F:
    return "CUBLAS_COMPUTE_16F";
  case CUBLAS_COMPUTE_32F:
    return "CUBLAS_COMPUTE_32F";
  case CUBLAS_COMPUTE_32F_FAST_16F:
    return "CUBLAS_COMPUTE_32F_FAST_16F";
  case CUBLAS_COMPUTE_32F_FAST_16BF:
    return "CUBLAS_COMPUTE_32F_FAST_16BF";
  case CUBLAS_COMPUTE_32F_FAST_TF32:
    return "CUBLAS_COMPUTE_32F_FAST_TF32";
  case CUBLAS_COMPUTE_64F:
    return "CUBLAS_COMPUTE_64F";
  case CUBLAS_COMPUTE_32I:
    return "CUBLAS_COMPUTE_32I";
  default:
    return "cublasComputeType " + std::to_string(type);
  }
}

} // namespace mimic::cublaslt
