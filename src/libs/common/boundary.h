// The C API boundary shared by Mimic's libraries (cuBLAS, and the ones after it): one
// wrapper every implemented entry point goes through, and the once-only report of entry
// points that have no implementation.
#pragma once

#include <atomic>
#include <exception>
#include <string_view>

namespace mimic::libs {

// Logs "mimic: <library>: <api> is not implemented" the first time `reported` is unset.
void report_not_implemented(std::string_view library, const char* api,
                            std::atomic<bool>& reported) noexcept;

void report_exception(std::string_view library, const char* api, const char* what) noexcept;

// Runs an entry point's implementation: nothing throws across the C API; an escaping
// exception is logged and becomes `on_exception`.
template <typename Result, typename Body>
Result guarded_call(std::string_view library, const char* api, Result on_exception,
                    Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    report_exception(library, api, e.what());
  } catch (...) {
    report_exception(library, api, nullptr);
  }
  return on_exception;
}

} // namespace mimic::libs
