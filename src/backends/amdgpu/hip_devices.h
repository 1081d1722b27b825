// The GPUs a HIP runtime reports, described in CUDA's terms (runtime::DeviceProperties) and
// marked supported or not (their gfx target among supported_targets()).
#pragma once

#include <string>
#include <vector>

#include "backends/amdgpu/hip_api.h"
#include "runtime/backend.h"
#include "support/error.h"

namespace mimic::amdgpu {

struct HipDevice {
  int ordinal = 0;       // HIP's device number
  std::string name;      // the product name, e.g. "AMD Radeon RX 7900 XTX"
  std::string gfx;       // the LLVM target, e.g. "gfx1100" (target features removed)
  std::string arch_name; // gcnArchName as HIP gives it, e.g. "gfx1100:sramecc-:xnack-"
  uint64_t total_memory = 0;
  bool supported = false;
  std::string unsupported_reason; // when not supported: why, naming what Mimic supports
  runtime::DeviceProperties properties;
};

// hipInit, then every device hipGetDeviceCount reports. Fails when the runtime cannot
// initialise or finds no GPU, saying which call answered what.
Result<std::vector<HipDevice>> enumerate_hip_devices(const HipApi& hip);

// The gfx target named by a gcnArchName ("gfx1100:sramecc-:xnack-" -> "gfx1100").
std::string gfx_of_arch_name(const std::string& arch_name);

} // namespace mimic::amdgpu
