#include "support/config.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "support/log.h"

namespace mimic::config {

namespace {

std::pair<int, int> parse_compute_capability() {
  const char* env = std::getenv("MIMIC_COMPUTE_CAPABILITY");
  if (!env || !*env)
    return {8, 6};
  std::string s = env;
  int major = -1, minor = -1;
  char* end = nullptr;
  if (auto dot = s.find('.'); dot != std::string::npos) {
    major = int(std::strtol(s.c_str(), &end, 10));
    if (end != s.c_str() + dot)
      major = -1;
    minor = int(std::strtol(s.c_str() + dot + 1, &end, 10));
  } else {
    long v = std::strtol(s.c_str(), &end, 10);
    major = int(v / 10);
    minor = int(v % 10);
  }
  if (*end != '\0' || major < 5 || major > 12 || minor < 0 || minor > 9) {
    log_warning("MIMIC_COMPUTE_CAPABILITY='" + s + "' is not a compute capability from 5.0 to 12.x; using 8.6");
    return {8, 6};
  }
  return {major, minor};
}

} // namespace

bool check_memory() {
  static const bool on = [] {
    const char* env = std::getenv("MIMIC_CHECK");
    if (!env || !*env)
      return false;
    std::string s = env;
    if (s.find("memory") != std::string::npos)
      return true;
    log_warning("MIMIC_CHECK='" + s + "' names no check Mimic knows (memory)");
    return false;
  }();
  return on;
}

unsigned worker_threads() {
  static const unsigned n = [] {
    unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const char* env = std::getenv("MIMIC_THREADS");
    if (!env || !*env)
      return hw;
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (*end != '\0' || v < 1 || v > 4096) {
      log_warning(std::string("MIMIC_THREADS='") + env + "' is not a thread count from 1 to 4096; using " +
                  std::to_string(hw));
      return hw;
    }
    return unsigned(v);
  }();
  return n;
}

bool inline_launches() {
  static const bool on = [] {
    const char* env = std::getenv("MIMIC_LAUNCH");
    if (!env || !*env)
      return true;
    std::string s = env;
    if (s == "async")
      return false;
    if (s != "inline")
      log_warning("MIMIC_LAUNCH='" + s + "' is neither 'inline' nor 'async'; using inline");
    return true;
  }();
  return on;
}

std::optional<BackendChoice> parse_backend_choice(std::string_view value) {
  if (value.empty() || value == "auto")
    return BackendChoice::Auto;
  if (value == "cpu")
    return BackendChoice::Cpu;
  if (value == "amdgpu")
    return BackendChoice::Amdgpu;
  return std::nullopt;
}

BackendChoice backend_choice() {
  static const BackendChoice choice = [] {
    const char* env = std::getenv("MIMIC_BACKEND");
    std::string_view s = env ? env : "";
    if (auto c = parse_backend_choice(s))
      return *c;
    log_warning("MIMIC_BACKEND='" + std::string(s) + "' is not a backend (auto, cpu or amdgpu); using auto");
    return BackendChoice::Auto;
  }();
  return choice;
}

std::pair<int, int> compute_capability() {
  static const std::pair<int, int> cc = parse_compute_capability();
  return cc;
}

bool switched_on(const char* variable) {
  const char* env = std::getenv(variable);
  return !(env && (std::string_view(env) == "0" || std::string_view(env) == "off"));
}

} // namespace mimic::config
