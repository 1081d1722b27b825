// Which backends a process gets, in device order: the AMD GPUs first (device 0 is a GPU
// when there is one), then the CPU; MIMIC_BACKEND keeps one of them only.
#include <vector>

#include "backends/amdgpu/amdgpu_backend.h"
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
    if (choice != config::BackendChoice::Cpu) {
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
