#include "libs/common/boundary.h"

#include "support/log.h"

#include <string>

namespace mimic::libs {

void report_not_implemented(std::string_view library, const char* api,
                            std::atomic<bool>& reported) noexcept {
  if (reported.exchange(true, std::memory_order_relaxed)) return;
  try {
    log_warning(std::string(library) + ": " + api +
                " is not implemented; it returns NOT_SUPPORTED");
  } catch (...) {
    // Out of memory while logging: the status still says it.
  }
}

void report_exception(std::string_view library, const char* api, const char* what) noexcept {
  try {
    log_error(std::string(library) + ": " + api +
              " failed inside Mimic: " + (what ? what : "unknown exception"));
  } catch (...) {
  }
}

} // namespace mimic::libs
