// Which backends a process gets. The CPU backend is always there; the AMD GPU backend
// joins when it exists and finds a device.
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "runtime/backend.h"

namespace mimic::runtime {

std::vector<Backend*> available_backends() {
  // Never destroyed: applications may call CUDA from atexit handlers and static
  // destructors, after this file's statics would be gone.
  static const std::vector<Backend*>* backends = [] {
    auto* v = new std::vector<Backend*>;
    v->push_back(cpu::create_cpu_backend().release());
    return v;
  }();
  return *backends;
}

} // namespace mimic::runtime
