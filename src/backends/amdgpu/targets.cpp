// The RDNA targets of code_object.h. A plain list with no LLVM in it, so that the HIP
// binding and `mimic doctor` know which GPUs Mimic supports in builds without code generation.
#include <algorithm>

#include "backends/amdgpu/code_object.h"

namespace mimic::amdgpu {

const std::vector<std::string>& supported_targets() {
  // Never destroyed (read from exit handlers too). Wave32 RDNA GPUs, so a CUDA warp is a wave.
  static const auto* targets = new std::vector<std::string>{
      "gfx1010", "gfx1011", "gfx1012",                                             // RDNA1
      "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036", // RDNA2
      "gfx1100", "gfx1101", "gfx1102", "gfx1103",                                  // RDNA3
      "gfx1150", "gfx1151", "gfx1152", "gfx1153",                                  // RDNA3.5
      "gfx1200", "gfx1201",                                                        // RDNA4
  };
  return *targets;
}

bool is_supported_target(std::string_view gfx) {
  const auto& all = supported_targets();
  return std::find(all.begin(), all.end(), gfx) != all.end();
}

} // namespace mimic::amdgpu
