#include "libs/cublas/handle.h"

#include "libs/common/handle_registry.h"
#include "support/log.h"

#include <string>

namespace mimic::cublas {
namespace {

libs::HandleRegistry<Handle>& registry() {
  static auto* handles = new libs::HandleRegistry<Handle>; // outlives exit handlers
  return *handles;
}

std::unique_ptr<BlasBackend> backend_for(const libs::DeviceBinding& device) {
  switch (device.kind) {
  case libs::DeviceKind::HostMemory:
    return make_cpu_backend();
  case libs::DeviceKind::Separate:
    break; // rocBLAS through HIP arrives with the AMD backend (issue 8)
  }
  return nullptr;
}

} // namespace

cublasStatus_t status_from(CUresult result) {
  switch (result) {
  case CUDA_SUCCESS:
    return CUBLAS_STATUS_SUCCESS;
  case CUDA_ERROR_NOT_SUPPORTED:
    return CUBLAS_STATUS_NOT_SUPPORTED;
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_CONTEXT:
    return CUBLAS_STATUS_NOT_INITIALIZED;
  case CUDA_ERROR_OUT_OF_MEMORY:
    return CUBLAS_STATUS_ALLOC_FAILED;
  default:
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
}

cublasStatus_t copy_status_from(CUresult result) {
  return result == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_MAPPING_ERROR;
}

cublasStatus_t create_handle(Handle** out) {
  auto handle = std::make_unique<Handle>();
  if (CUresult r = libs::bind_current_device(&handle->device)) return status_from(r);
  handle->backend = backend_for(handle->device);
  if (!handle->backend) {
    warn_once("cublas-backend", std::string("cuBLAS: no backend for a ") +
                                    libs::device_kind_name(handle->device.kind) + " yet");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  *out = handle.release();
  registry().add(*out);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t destroy_handle(cublasHandle_t h) {
  Handle* handle = registry().remove(h);
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  // Queued work may still use memory the handle gave it (captured work, the workspace).
  if (libs::ensure_current(handle->device.context) == CUDA_SUCCESS)
    cuCtxSynchronize(); // as cublasDestroy does
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

Handle* find_handle(cublasHandle_t h) {
  return registry().find(h);
}

} // namespace mimic::cublas
