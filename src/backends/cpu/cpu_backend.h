// The CPU backend: the host's cores are the device's multiprocessors and host memory is
// device memory (one address space, so device pointers are host pointers).
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace mimic::cpu {

std::unique_ptr<runtime::Backend> create_cpu_backend();

} // namespace mimic::cpu
