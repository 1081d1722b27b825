// A cublasHandle_t: the device it was created on, the stream its work goes to, its modes,
// and the backend that computes for that device.
#pragma once

#include "libs/common/device.h"
#include "libs/common/stream_order.h"
#include "libs/cublas/blas_backend.h"

#include <cublas_api.h>

#include <memory>

namespace mimic::cublas {

struct Handle {
  libs::DeviceBinding device;
  CUstream stream = nullptr;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
  cublasAtomicsMode_t atomics_mode = CUBLAS_ATOMICS_NOT_ALLOWED;
  cublasEmulationStrategy_t emulation_strategy = CUBLAS_EMULATION_STRATEGY_DEFAULT;
  int sm_count_target = 0;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  std::unique_ptr<BlasBackend> backend;
  libs::CapturedWork captured;

  libs::StreamTarget target() { return {device.context, stream, &captured}; }
  bool device_pointers() const { return pointer_mode == CUBLAS_POINTER_MODE_DEVICE; }
};

// Creates a handle for the current device (binding one as the CUDA runtime would).
cublasStatus_t create_handle(Handle** out);
cublasStatus_t destroy_handle(cublasHandle_t handle);
// The live handle `handle` names, or nullptr (a NULL, stale or foreign handle).
Handle* find_handle(cublasHandle_t handle);

// CUDA driver results as cuBLAS statuses: NOT_SUPPORTED stays itself, a failed copy is a
// MAPPING_ERROR, every other failure EXECUTION_FAILED.
cublasStatus_t status_from(CUresult result);
cublasStatus_t copy_status_from(CUresult result);

} // namespace mimic::cublas
