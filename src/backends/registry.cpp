// Which backends a process gets, in device order: the AMD GPUs first (device 0 is a GPU
// when there is one and this build generates code for it), then the CPU; MIMIC_BACKEND keeps
// one of them only.
#include <vector>

#include "backends/amdgpu/amdgpu_backend.h"
#include "backends/amdgpu/compiler.h"
#include "backends/cpu/cpu_backend.h"
#include "runtime/backend.h"
#include "support/config.h"
#include "support/log.h"

namespace mimic::runtime {

std::vector<Backend*> available_backends() {
  // Never destroyed: applications may call CUDA from atexit handlers and static
  // destructors, after this file's statics would be gone.
  static const std::vector<Backend*>* backends = [] {
    auto* v = new std::vector<Backend*>;
    config::BackendChoice choice = config::backend_choice();
    // By default the GPUs come first only where this build can compile kernels for them: a
    // build without AMDGPU code generation keeps running programs on the CPU.
    bool want_amdgpu = choice == config::BackendChoice::Amdgpu ||
                       (choice == config::BackendChoice::Auto && amdgpu::compiler_built());
    if (want_amdgpu) {
      auto amdgpu = amdgpu::create_amdgpu_backend();
      if (amdgpu)
        v->push_back(amdgpu->release());
      else if (choice == config::BackendChoice::Amdgpu)
        // Asked for explicitly: say why there is no device rather than fall back.
        log_error("MIMIC_BACKEND=amdgpu: no AMD GPU available: " + amdgpu.error().message());
    }
    if (choice != config::BackendChoice::Amdgpu) v->push_back(cpu::create_cpu_backend().release());
    return v;
  }();
  return *backends;
}

} // namespace mimic::runtime
