// ppo_cuda --profile: seconds per kind of work (each GEMM kind, each kernel), measured by
// synchronising the device around every piece, printed to stderr after each iteration. Off,
// a scope costs one branch; on, the synchronisations slow the run a little.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace profile {

inline bool enabled = false;
inline std::map<std::string, double> seconds;

class Scope {
public:
  explicit Scope(const char* name) : name_(name) {
    if (!enabled) return;
    cudaDeviceSynchronize();
    start_ = std::chrono::steady_clock::now();
  }
  ~Scope() {
    if (!enabled) return;
    cudaDeviceSynchronize();
    seconds[name_] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

private:
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

// One line per kind, largest first, then clears the tally.
inline void report(int iteration) {
  if (!enabled) return;
  std::vector<std::pair<double, std::string>> rows;
  double total = 0;
  for (const auto& [name, s] : seconds) {
    rows.push_back({s, name});
    total += s;
  }
  std::sort(rows.rbegin(), rows.rend());
  for (const auto& [s, name] : rows)
    fprintf(stderr, "profile iter=%d %-22s %8.4f s %5.1f%%\n", iteration, name.c_str(), s,
            100 * s / total);
  seconds.clear();
}

} // namespace profile
