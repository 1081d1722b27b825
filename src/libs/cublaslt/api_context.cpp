#include "libs/cublaslt/api_context.h"

#include "libs/common/cublas_status.h"
#include "libs/cublaslt/context.h"
#include "libs/cublaslt/failure.h"

#include <atomic>
#include <cstdlib>

namespace mimic::cublaslt::impl {

cublasStatus_t create(cublasLtHandle_t* handle) {
  if (!handle) return fail(CUBLAS_STATUS_INVALID_VALUE, "the handle pointer is NULL");
  return create_context(handle);
}

cublasStatus_t destroy(cublasLtHandle_t handle) {
  return destroy_context(handle);
}

size_t get_version() {
  return CUBLAS_VERSION;
}

size_t get_cudart_version() {
  return CUDART_VERSION;
}

cublasStatus_t get_property(libraryPropertyType type, int* value) {
  if (!value) return fail(CUBLAS_STATUS_INVALID_VALUE, "the value pointer is NULL");
  switch (type) {
  case MAJOR_VERSION:
    *value = CUBLAS_VER_MAJOR;
    return CUBLAS_STATUS_SUCCESS;
  case MINOR_VERSION:
    *value = CUBLAS_VER_MINOR;
    return CUBLAS_STATUS_SUCCESS;
  case PATCH_LEVEL:
    *value = CUBLAS_VER_PATCH;
    return CUBLAS_STATUS_SUCCESS;
  }
  return fail(CUBLAS_STATUS_INVALID_VALUE, "unknown library property " + std::to_string(type));
}

const char* status_name(cublasStatus_t status) {
  return libs::cublas_status_name(status);
}

const char* status_string(cublasStatus_t status) {
  return libs::cublas_status_string(status);
}

namespace {

// Mimic's heuristic is a choice among its own few algorithms and needs no cache; the
// capacity is kept so that what an application sets it reads back.
std::atomic<size_t>& cache_capacity() {
  static std::atomic<size_t> capacity = [] {
    const char* env = std::getenv("CUBLASLT_HEURISTICS_CACHE_CAPACITY");
    return env ? size_t(std::strtoull(env, nullptr, 10)) : size_t(8192);
  }();
  return capacity;
}

} // namespace

cublasStatus_t heuristics_cache_get_capacity(size_t* capacity) {
  if (!capacity) return fail(CUBLAS_STATUS_INVALID_VALUE, "the capacity pointer is NULL");
  *capacity = cache_capacity().load();
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t heuristics_cache_set_capacity(size_t capacity) {
  cache_capacity().store(capacity);
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace mimic::cublaslt::impl
