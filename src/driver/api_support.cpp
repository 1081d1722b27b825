#include "driver/api_support.h"

#include "driver/api_tables.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace mimic::driver {
namespace {

// Where the trace and log lines go, decided once from MIMIC_TRACE.
struct TraceConfig {
  bool enabled = false;
  int fd = STDERR_FILENO; // the trace destination when enabled
};

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(size_t(n));
  }
}

TraceConfig read_trace_config() {
  TraceConfig config;
  const char* value = std::getenv("MIMIC_TRACE");
  if (!value || !*value || std::strcmp(value, "0") == 0) return config;
  config.enabled = true;
  if (std::strcmp(value, "1") == 0) return config;
  int fd = ::open(value, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::string message = std::string("mimic: MIMIC_TRACE: cannot open ") + value + ": " +
                          std::strerror(errno) + "; tracing on stderr instead\n";
    write_all(STDERR_FILENO, message);
    return config;
  }
  config.fd = fd;
  return config;
}

// A function-local static: initialised on the first call, not by a static constructor.
const TraceConfig& trace_config() {
  static const TraceConfig config = read_trace_config();
  return config;
}

} // namespace

bool trace_enabled() noexcept {
  return trace_config().enabled;
}

void log_message(std::string_view message) noexcept {
  try {
    std::string line = "mimic: ";
    line += message;
    line += '\n';
    write_all(STDERR_FILENO, line);
    const TraceConfig& config = trace_config();
    if (config.enabled && config.fd != STDERR_FILENO) write_all(config.fd, line);
  } catch (...) {
    // Out of memory while logging: nothing better to do.
  }
}

const char* result_name(CUresult result) noexcept {
  const mimic_result_name* begin = mimic_result_names;
  const mimic_result_name* end = begin + mimic_result_name_count;
  const mimic_result_name* it = std::lower_bound(
      begin, end, int(result), [](const mimic_result_name& e, int v) { return e.value < v; });
  return it != end && it->value == int(result) ? it->name : nullptr;
}

void report_exception(const char* api, const char* what) noexcept {
  try {
    log_message(std::string(api) + ": internal error: " + (what ? what : "unknown exception") +
                " (returns CUDA_ERROR_UNKNOWN)");
  } catch (...) {
  }
}

CUresult report_not_implemented(const char* api, std::atomic<bool>& reported) noexcept {
  if (!reported.exchange(true, std::memory_order_relaxed)) {
    try {
      log_message(std::string(api) + " is not implemented (returns CUDA_ERROR_NOT_SUPPORTED)");
    } catch (...) {
    }
  }
  return CUDA_ERROR_NOT_SUPPORTED;
}

namespace trace_detail {

void append_pointer(std::string& out, const void* pointer) {
  if (!pointer) {
    out += "NULL";
    return;
  }
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%" PRIxPTR, reinterpret_cast<uintptr_t>(pointer));
  out += buffer;
}

void append_string(std::string& out, const char* text) {
  if (!text) {
    out += "NULL";
    return;
  }
  constexpr size_t kMaxShown = 256;
  out += '"';
  size_t i = 0;
  for (; text[i] && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
      out += buffer;
    }
  }
  out += '"';
  if (text[i]) out += "...";
}

void append_uuid(std::string& out, const CUuuid* uuid) {
  append_pointer(out, uuid);
  if (!uuid) return;
  out += " {";
  append_bytes(out, uuid->bytes, sizeof uuid->bytes);
  out += '}';
}

void append_signed(std::string& out, long long value) {
  out += std::to_string(value);
}

void append_unsigned(std::string& out, unsigned long long value) {
  out += std::to_string(value);
}

void append_float(std::string& out, double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  out += buffer;
}

void append_bytes(std::string& out, const void* data, size_t size) {
  static const char kHex[] = "0123456789abcdef";
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
}

} // namespace trace_detail

TraceLine::TraceLine(const char* api) : text_(api) {
  text_ += '(';
}

void TraceLine::finish(CUresult result) {
  text_ += ") = ";
  if (const char* name = result_name(result))
    text_ += name;
  else
    text_ += std::to_string(int(result));
  text_ += '\n';
  write_all(trace_config().fd, text_);
}

} // namespace mimic::driver
