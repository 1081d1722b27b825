// Memory the runtime hands out or knows of: device allocations, pinned and registered
// host memory, managed memory. The registry answers "which allocation holds this
// address" for pointer attributes and checks every pointer an API call is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cuda.h>
#include <optional>

#include "runtime/context.h"

namespace mimic::runtime {

enum class MemoryKind : uint8_t { Device, HostPinned, HostRegistered, Managed };

struct Allocation {
  uintptr_t base = 0;
  size_t size = 0;
  MemoryKind kind = MemoryKind::Device;
  Context* context = nullptr;
  unsigned flags = 0;
  unsigned long long buffer_id = 0;
};

// Allocates through the context's device backend and records the block.
Result<void*> allocate(Context* context, size_t bytes, MemoryKind kind, unsigned flags = 0);
// `pointer` must be the base of a live allocation of one of the given kinds;
// CUDA_ERROR_INVALID_VALUE otherwise (double free, interior or foreign pointer).
CUresult release(void* pointer, std::initializer_list<MemoryKind> kinds);

// Records existing host memory (cuMemHostRegister); the caller keeps ownership.
CUresult register_host(Context* context, void* pointer, size_t bytes, unsigned flags);
CUresult unregister_host(void* pointer);

// The allocation containing [address, address + bytes), if any.
std::optional<Allocation> find_allocation(const void* address, size_t bytes = 1);

// Whether [address, address + bytes) lies in one live allocation (kernels' accesses
// under MIMIC_CHECK=memory).
bool device_accessible(const void* address, size_t bytes);

// Bytes currently allocated on a device (for cuMemGetInfo).
size_t bytes_in_use(const Device& device);

// Drops every allocation of a context (context destruction, primary reset).
void release_all(Context* context);

} // namespace mimic::runtime
