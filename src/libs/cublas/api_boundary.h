// The boundary the generated exports (tools/gen_cublas_api.py) call through: every
// implemented entry point runs inside api_call, every other one is not_implemented.
#pragma once

#include "libs/common/boundary.h"

#include <cublas_api.h>

#include <atomic>
#include <type_traits>

namespace mimic::cublas::impl {

// cuBLAS's API log (cublasLoggerConfigure, cublasSetLoggerCallback, CUBLAS_LOGINFO_DBG):
// one line per call when logging is on.
bool api_log_enabled() noexcept;
void api_log(const char* api, cublasStatus_t status) noexcept;

template <typename Body> auto api_call(const char* api, Body&& body) noexcept {
  using Result = decltype(body());
  if constexpr (std::is_same_v<Result, cublasStatus_t>) {
    cublasStatus_t status = libs::guarded_call("cuBLAS", api, CUBLAS_STATUS_INTERNAL_ERROR, body);
    if (api_log_enabled()) api_log(api, status);
    return status;
  } else {
    return libs::guarded_call("cuBLAS", api, Result{}, body);
  }
}

// A stub: logs `api` once; returns NOT_SUPPORTED, or for the legacy API's value-returning
// functions a zero value (their error is what cublasGetError would report).
template <typename Result> Result not_implemented(const char* api, std::atomic<bool>& reported) {
  libs::report_not_implemented("cuBLAS", api, reported);
  if constexpr (std::is_same_v<Result, cublasStatus_t>)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  else if constexpr (!std::is_void_v<Result>)
    return Result{};
}

} // namespace mimic::cublas::impl
