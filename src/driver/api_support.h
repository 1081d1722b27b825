// The boundary between C callers and Mimic's C++ driver, used by the generated exports:
// the one wrapper every implemented entry point goes through, the once-only report of
// entry points that are not implemented, and the MIMIC_TRACE call log.
#pragma once

#include "driver/cuda_api.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <type_traits>

namespace mimic::driver {

// Writes "mimic: <message>" on stderr, and into the trace file when MIMIC_TRACE names one.
void log_message(std::string_view message) noexcept;

// "CUDA_ERROR_INVALID_VALUE" for CUDA_ERROR_INVALID_VALUE; nullptr for unknown values.
const char* result_name(CUresult result) noexcept;

void report_exception(const char* api, const char* what) noexcept;

// Logs "<api> is not implemented" the first time `reported` is seen unset.
CUresult report_not_implemented(const char* api, std::atomic<bool>& reported) noexcept;

// Runs an entry point's implementation. Exceptions stop here: nothing throws across the C
// API, an escaping exception is logged and becomes CUDA_ERROR_UNKNOWN.
template <typename Body> CUresult guarded_call(const char* api, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    report_exception(api, e.what());
  } catch (...) {
    report_exception(api, nullptr);
  }
  return CUDA_ERROR_UNKNOWN;
}

// --- Tracing -------------------------------------------------------------------------
// MIMIC_TRACE=1 logs every call on stderr, MIMIC_TRACE=<path> appends to that file:
//   cuMemAlloc_v2(dptr=0x7ffd5c3e1a08, bytesize=4096) = CUDA_SUCCESS
// The environment is read on the first call, never at load time.

bool trace_enabled() noexcept;

// A CUdeviceptr argument: an address, shown in hex although its type is an integer.
struct DevicePtr {
  unsigned long long value;
};

namespace trace_detail {
void append_pointer(std::string& out, const void* pointer);
void append_string(std::string& out, const char* text);
void append_uuid(std::string& out, const CUuuid* uuid);
void append_signed(std::string& out, long long value);
void append_unsigned(std::string& out, unsigned long long value);
void append_float(std::string& out, double value);
void append_bytes(std::string& out, const void* data, size_t size);
} // namespace trace_detail

// Formats by type: pointers in hex, `const char*` as a quoted string, integers and enums
// in decimal, structs passed by value as their bytes.
template <typename T> void append_value(std::string& out, const T& value) {
  using namespace trace_detail;
  if constexpr (std::is_same_v<T, DevicePtr>) {
    append_pointer(out, reinterpret_cast<const void*>(static_cast<uintptr_t>(value.value)));
  } else if constexpr (std::is_same_v<T, const char*>) {
    append_string(out, value);
  } else if constexpr (std::is_same_v<T, const CUuuid*>) {
    append_uuid(out, value);
  } else if constexpr (std::is_pointer_v<T>) {
    append_pointer(out, reinterpret_cast<const void*>(value));
  } else if constexpr (std::is_enum_v<T>) {
    append_signed(out, static_cast<long long>(value));
  } else if constexpr (std::is_floating_point_v<T>) {
    append_float(out, value);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    append_signed(out, value);
  } else if constexpr (std::is_integral_v<T>) {
    append_unsigned(out, value);
  } else {
    static_assert(std::is_trivially_copyable_v<T>, "cannot trace this argument type");
    out += '{';
    append_bytes(out, &value, sizeof(T));
    out += '}';
  }
}

class TraceLine {
public:
  explicit TraceLine(const char* api);
  template <typename T> TraceLine& arg(const char* name, const T& value) {
    if (!first_) text_ += ", ";
    first_ = false;
    text_ += name;
    text_ += '=';
    append_value(text_, value);
    return *this;
  }
  // Appends " = <result>" and writes the line.
  void finish(CUresult result);

private:
  std::string text_;
  bool first_ = true;
};

// Writes one trace line; `add_args` fills in the arguments. Never throws.
template <typename AddArgs>
void trace_call(const char* api, CUresult result, AddArgs&& add_args) noexcept {
  try {
    TraceLine line(api);
    add_args(line);
    line.finish(result);
  } catch (...) {
    // Tracing is best effort: losing a line must not change the call's result.
  }
}

} // namespace mimic::driver
