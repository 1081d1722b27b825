// cuBLASLt's log: levels and masks (CUBLASLT_LOG_LEVEL, CUBLASLT_LOG_MASK, CUBLASLT_LOG_FILE
// or the cublasLtLogger* functions), written to stdout, a file or a callback. Mimic logs
// each call's result at the API-trace level and the reason of every failed call at the
// error level.
#pragma once

#include <cublasLt.h>

#include <cstdio>
#include <string>

namespace mimic::cublaslt {

// Mask bits, as CUBLASLT_LOG_MASK and cublasLtLoggerSetMask take them.
enum LogMask : int {
  log_error = 1,
  log_trace = 2,
  log_hints = 4,
  log_info = 8,
  log_api = 16,
};

// Whether messages of `mask` bit are wanted (cheap; read the environment once).
bool log_enabled(int mask) noexcept;
// Writes one message of `mask` bit for `function`.
void log_message(int mask, const char* function, const std::string& message) noexcept;

cublasStatus_t logger_set_callback(cublasLtLoggerCallback_t callback);
cublasStatus_t logger_set_file(FILE* file);
cublasStatus_t logger_open_file(const char* path);
cublasStatus_t logger_set_level(int level);
cublasStatus_t logger_set_mask(int mask);
cublasStatus_t logger_force_disable();

} // namespace mimic::cublaslt
