// The boundary the generated exports (tools/gen_cublas_api.py) call through: every
// implemented entry point runs inside api_call, every other one is not_implemented.
#pragma once

#include "libs/common/boundary.h"
#include "libs/common/cublas_status.h"
#include "libs/cublaslt/logger.h"

#include <cublasLt.h>

#include <atomic>
#include <string>
#include <type_traits>

namespace mimic::cublaslt::impl {

// The entry point this thread is in, for messages from deeper down (fail()).
inline thread_local const char* current_api = "cublasLt";

template <typename Body> auto api_call(const char* api, Body&& body) noexcept {
  using Result = decltype(body());
  const char* outer = current_api;
  current_api = api;
  if constexpr (std::is_same_v<Result, cublasStatus_t>) {
    cublasStatus_t status = libs::guarded_call("cuBLASLt", api, CUBLAS_STATUS_INTERNAL_ERROR, body);
    if (log_enabled(log_api))
      log_message(log_api, api, std::string("returned ") + libs::cublas_status_name(status));
    current_api = outer;
    return status;
  } else {
    Result result = libs::guarded_call("cuBLASLt", api, Result{}, body);
    current_api = outer;
    return result;
  }
}

// A stub: logs `api` once and returns NOT_SUPPORTED.
template <typename Result> Result not_implemented(const char* api, std::atomic<bool>& reported) {
  libs::report_not_implemented("cuBLASLt", api, reported);
  if constexpr (std::is_same_v<Result, cublasStatus_t>)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  else if constexpr (!std::is_void_v<Result>)
    return Result{};
}

} // namespace mimic::cublaslt::impl
