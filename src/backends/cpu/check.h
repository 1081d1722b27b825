// MIMIC_CHECK=memory: what the access checks of one launch need (BlockState::check).
#pragma once

#include <atomic>
#include <cstddef>

namespace mimic::cpu {

struct LaunchCheck {
  bool (*accessible)(const void* address, size_t bytes) = nullptr; // the allocation registry
  const char* kernel = "";
  std::atomic<bool> reported{false}; // the first bad access of the launch is reported
};

// Whether [p, p + bytes) lies in one block of device-side malloc.
bool device_heap_contains(const void* p, size_t bytes);

} // namespace mimic::cpu
