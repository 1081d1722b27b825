#include "support/log.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <mutex>
#include <set>

namespace mimic {

namespace {
std::mutex& log_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
} // namespace

void log_warning(const std::string& message) {
  std::lock_guard lock(log_mutex());
  fprintf(stderr, "mimic: warning: %s\n", message.c_str());
}

void log_error(const std::string& message) {
  std::lock_guard lock(log_mutex());
  fprintf(stderr, "mimic: error: %s\n", message.c_str());
}

bool verbose() {
  static const bool on = [] {
    const char* v = std::getenv("MIMIC_VERBOSE");
    return v && *v && std::string_view(v) != "0";
  }();
  return on;
}

void log_note(const std::string& message) {
  if (!verbose()) return;
  std::lock_guard lock(log_mutex());
  fprintf(stderr, "mimic: note: %s\n", message.c_str());
}

bool warn_once(const std::string& key, const std::string& message) {
  static auto* seen = new std::set<std::string>; // usable from exit handlers
  {
    std::lock_guard lock(log_mutex());
    if (!seen->insert(key).second)
      return false;
  }
  log_warning(message);
  return true;
}

} // namespace mimic
