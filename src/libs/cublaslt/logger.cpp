#include "libs/cublaslt/logger.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <unistd.h>

namespace mimic::cublaslt {
namespace {

struct Logger {
  std::mutex mutex;
  int mask = 0;
  bool disabled = false; // cublasLtLoggerForceDisable: for the rest of the process
  FILE* file = nullptr;  // nullptr: stdout
  bool owns_file = false;
  cublasLtLoggerCallback_t callback = nullptr;
};

std::atomic<int> wanted_mask{0};

int mask_for_level(int level) {
  return level <= 0 ? 0 : (1 << (level > 5 ? 5 : level)) - 1;
}

// A CUBLASLT_LOG_FILE name may hold %i, the process id.
std::string expand_file_name(const char* name) {
  std::string out;
  for (const char* p = name; *p; ++p) {
    if (p[0] == '%' && p[1] == 'i') {
      out += std::to_string(getpid());
      ++p;
    } else {
      out += *p;
    }
  }
  return out;
}

Logger& logger() {
  static Logger* made = [] {
    auto* l = new Logger; // outlives exit handlers
    if (const char* level = std::getenv("CUBLASLT_LOG_LEVEL"))
      l->mask = mask_for_level(std::atoi(level));
    if (const char* mask = std::getenv("CUBLASLT_LOG_MASK")) l->mask = std::atoi(mask);
    if (const char* file = std::getenv("CUBLASLT_LOG_FILE"); file && *file) {
      l->file = std::fopen(expand_file_name(file).c_str(), "a");
      l->owns_file = l->file != nullptr;
    }
    wanted_mask = l->mask;
    return l;
  }();
  return *made;
}

const char* level_name(int mask) {
  switch (mask) {
  case log_error:
    return "Error";
  case log_trace:
    return "Trace";
  case log_hints:
    return "Hints";
  case log_info:
    return "Info";
  default:
    return "Api";
  }
}

int level_of(int mask) {
  int level = 1;
  while (mask > 1) {
    mask >>= 1;
    ++level;
  }
  return level;
}

void replace_file(Logger& l, FILE* file, bool owns) {
  if (l.owns_file && l.file) std::fclose(l.file);
  l.file = file;
  l.owns_file = owns;
}

} // namespace

bool log_enabled(int mask) noexcept {
  static std::once_flag env_read;
  std::call_once(env_read, [] { logger(); });
  return (wanted_mask.load(std::memory_order_relaxed) & mask) != 0;
}

void log_message(int mask, const char* function, const std::string& message) noexcept {
  try {
    Logger& l = logger();
    std::lock_guard lock(l.mutex);
    if (l.disabled || !(l.mask & mask)) return;
    if (l.callback) {
      l.callback(level_of(mask), function, message.c_str());
      return;
    }
    FILE* out = l.file ? l.file : stdout;
    std::fprintf(out, "[cublasLt][%d][%s][%s] %s\n", int(getpid()), level_name(mask), function,
                 message.c_str());
    std::fflush(out);
  } catch (...) {
  }
}

namespace {

template <typename Change> cublasStatus_t configure(Change&& change) {
  log_enabled(0); // the environment first, so that the call's setting wins
  Logger& l = logger();
  std::lock_guard lock(l.mutex);
  if (!l.disabled) change(l);
  wanted_mask = l.disabled ? 0 : l.mask;
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace

cublasStatus_t logger_set_callback(cublasLtLoggerCallback_t callback) {
  return configure([&](Logger& l) { l.callback = callback; });
}

cublasStatus_t logger_set_file(FILE* file) {
  return configure([&](Logger& l) { replace_file(l, file, false); });
}

cublasStatus_t logger_open_file(const char* path) {
  if (!path) return CUBLAS_STATUS_INVALID_VALUE;
  FILE* file = std::fopen(path, "a");
  if (!file) return CUBLAS_STATUS_INVALID_VALUE;
  return configure([&](Logger& l) { replace_file(l, file, true); });
}

cublasStatus_t logger_set_level(int level) {
  if (level < 0 || level > 5) return CUBLAS_STATUS_INVALID_VALUE;
  return configure([&](Logger& l) { l.mask = mask_for_level(level); });
}

cublasStatus_t logger_set_mask(int mask) {
  return configure([&](Logger& l) { l.mask = mask; });
}

cublasStatus_t logger_force_disable() {
  return configure([](Logger& l) {
    l.disabled = true;
    l.mask = 0;
  });
}

} // namespace mimic::cublaslt
