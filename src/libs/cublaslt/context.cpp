#include "libs/cublaslt/context.h"

#include "libs/common/handle_registry.h"
#include "libs/cublaslt/failure.h"
#include "libs/cublaslt/lt_backend.h"

#include <cublas_api.h>

#include <atomic>
#include <dlfcn.h>
#include <memory>

namespace mimic::cublaslt {
namespace {

libs::HandleRegistry<Context>& registry() {
  static auto* contexts = new libs::HandleRegistry<Context>; // outlives exit handlers
  return *contexts;
}

using GetVersionFn = cublasStatus_t (*)(cublasHandle_t, int*);

// cublasGetVersion_v2 of the libcublas this process has loaded (Mimic's, under mimic run):
// it answers NOT_INITIALIZED for anything but a live cuBLAS handle, without touching it.
GetVersionFn cublas_get_version() {
  static std::atomic<GetVersionFn> found{nullptr};
  if (GetVersionFn f = found.load(std::memory_order_acquire)) return f;
  for (const char* soname : {"libcublas.so.13", "libcublas.so.12"}) {
    void* lib = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
    if (!lib) continue;
    auto f = reinterpret_cast<GetVersionFn>(dlsym(lib, "cublasGetVersion_v2"));
    dlclose(lib); // NOLOAD took a reference; the application's keeps it loaded
    if (f) {
      found.store(f, std::memory_order_release);
      return f;
    }
  }
  return nullptr;
}

bool is_live_cublas_handle(const void* handle) {
  GetVersionFn get_version = cublas_get_version();
  int version = 0;
  return get_version && get_version(static_cast<cublasHandle_t>(const_cast<void*>(handle)),
                                    &version) == CUBLAS_STATUS_SUCCESS;
}

Context& cublas_handle_context() {
  static auto* shared = new Context; // work captured through cuBLAS handles: kept for the process
  return *shared;
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

cublasStatus_t create_context(cublasLtHandle_t* out) {
  // Initialises CUDA as cublasLtCreate does, so that a missing device shows here.
  libs::DeviceBinding device;
  if (CUresult r = libs::bind_current_device(&device)) return status_from(r);
  auto context = std::make_unique<Context>();
  registry().add(context.get());
  *out = reinterpret_cast<cublasLtHandle_t>(context.release());
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t destroy_context(cublasLtHandle_t handle) {
  Context* context = registry().remove(handle);
  if (!context) return CUBLAS_STATUS_NOT_INITIALIZED;
  // Queued work may still run with what the handle keeps (captured work).
  CUcontext current = nullptr;
  if (cuCtxGetCurrent(&current) == CUDA_SUCCESS && current) cuCtxSynchronize();
  delete context;
  return CUBLAS_STATUS_SUCCESS;
}

Context* find_context(cublasLtHandle_t handle) {
  if (!handle) return nullptr;
  if (Context* context = registry().find(handle)) return context;
  return is_live_cublas_handle(handle) ? &cublas_handle_context() : nullptr;
}

cublasStatus_t bind_target(Context& context, CUstream stream, libs::StreamTarget* target,
                           libs::DeviceKind* kind) {
  libs::DeviceBinding device;
  if (CUresult r = libs::bind_current_device(&device)) return status_from(r);
  *target = {device.context, stream, &context.captured};
  *kind = device.kind;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t select_backend(Context& context, CUstream stream, libs::StreamTarget* target,
                              LtBackend** backend) {
  libs::DeviceKind kind;
  if (cublasStatus_t s = bind_target(context, stream, target, &kind)) return s;
  *backend = backend_for(kind);
  if (!*backend)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                std::string("no cuBLASLt backend for a ") + libs::device_kind_name(kind) + " yet");
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace mimic::cublaslt
