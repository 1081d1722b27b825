#include "backends/cpu/vector_width.h"

#include <cstdlib>
#include <string>
#include <string_view>

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include "support/log.h"

namespace mimic::cpu {

namespace {

// Cores whose clock drops for 512-bit work (the reason LLVM prefers 256-bit vectors).
bool clocks_down_for_512(std::string_view cpu) {
  return cpu == "skylake-avx512" || cpu == "cascadelake" || cpu == "cooperlake";
}

unsigned host_default() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](const char* f) { return features.lookup(f); };
  if (!has("avx512f") || !has("avx512bw") || !has("avx512vl")) return 0;
  return clocks_down_for_512(llvm::sys::getHostCPUName()) ? 0 : 512;
}

} // namespace

unsigned preferred_vector_bits() {
  static const unsigned bits = [] {
    const char* env = std::getenv("MIMIC_VECTOR_BITS");
    if (!env || !*env) return host_default();
    std::string_view v(env);
    if (v == "256") return 256u;
    if (v == "512") return 512u;
    warn_once("vector-bits", "MIMIC_VECTOR_BITS=" + std::string(v) +
                                 " is not 256 or 512; using this CPU's default");
    return host_default();
  }();
  return bits;
}

} // namespace mimic::cpu
