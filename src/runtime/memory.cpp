#include "runtime/memory.h"

#include <map>
#include <mutex>

namespace mimic::runtime {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, Allocation> blocks; // by base address
  unsigned long long next_id = 1;
};

Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

// The block whose range contains [a, a + n); caller holds the mutex.
const Allocation* containing(Registry& r, uintptr_t a, size_t n) {
  auto it = r.blocks.upper_bound(a);
  if (it == r.blocks.begin())
    return nullptr;
  --it;
  const Allocation& b = it->second;
  if (a < b.base || a - b.base >= b.size || n > b.size - (a - b.base))
    return nullptr;
  return &b;
}

// Returns a block's memory to its backend, the way it was obtained.
void give_back(const Allocation& a) {
  const Device& device = *a.context->device;
  void* pointer = reinterpret_cast<void*>(a.base);
  switch (a.kind) {
  case MemoryKind::HostRegistered:
    device.backend().unregister_host(device.backend_index(), pointer);
    return;
  case MemoryKind::HostPinned:
    device.backend().release_host(device.backend_index(), pointer);
    return;
  case MemoryKind::Device:
  case MemoryKind::Managed:
    device.backend().release(device.backend_index(), pointer);
    return;
  }
}

} // namespace

Result<void*> allocate(Context* context, size_t bytes, MemoryKind kind, unsigned flags) {
  const Device& device = *context->device;
  Backend& backend = device.backend();
  auto p = kind == MemoryKind::HostPinned ? backend.allocate_host(device.backend_index(), bytes)
           : kind == MemoryKind::Managed  ? backend.allocate_managed(device.backend_index(), bytes)
                                          : backend.allocate(device.backend_index(), bytes);
  if (!p)
    return p.error();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(p.value());
  a.size = bytes;
  a.kind = kind;
  a.context = context;
  a.flags = flags;
  a.buffer_id = r.next_id++;
  r.blocks[a.base] = a;
  return p.value();
}

CUresult release(void* pointer, std::initializer_list<MemoryKind> kinds) {
  Registry& r = registry();
  Allocation a;
  {
    std::lock_guard lock(r.mutex);
    auto it = r.blocks.find(reinterpret_cast<uintptr_t>(pointer));
    if (it == r.blocks.end())
      return CUDA_ERROR_INVALID_VALUE;
    bool kind_ok = false;
    for (MemoryKind k : kinds)
      kind_ok |= it->second.kind == k;
    if (!kind_ok)
      return CUDA_ERROR_INVALID_VALUE;
    a = it->second;
    r.blocks.erase(it);
  }
  give_back(a);
  return CUDA_SUCCESS;
}

CUresult register_host(Context* context, void* pointer, size_t bytes, unsigned flags) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  uintptr_t base = reinterpret_cast<uintptr_t>(pointer);
  // Overlapping an existing registration or allocation is an error, as in CUDA.
  auto it = r.blocks.lower_bound(base);
  if (it != r.blocks.end() && it->first < base + bytes)
    return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  if (containing(r, base, 1))
    return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  const Device& device = *context->device;
  if (Status s = device.backend().register_host(device.backend_index(), pointer, bytes); !s)
    return s.error().code() ? CUresult(s.error().code()) : CUDA_ERROR_OUT_OF_MEMORY;
  Allocation a;
  a.base = base;
  a.size = bytes;
  a.kind = MemoryKind::HostRegistered;
  a.context = context;
  a.flags = flags;
  a.buffer_id = r.next_id++;
  r.blocks[base] = a;
  return CUDA_SUCCESS;
}

CUresult unregister_host(void* pointer) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.blocks.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == r.blocks.end() || it->second.kind != MemoryKind::HostRegistered)
    return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  give_back(it->second);
  r.blocks.erase(it);
  return CUDA_SUCCESS;
}

std::optional<Allocation> find_allocation(const void* address, size_t bytes) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (const Allocation* a = containing(r, reinterpret_cast<uintptr_t>(address), bytes ? bytes : 1))
    return *a;
  return std::nullopt;
}

bool device_accessible(const void* address, size_t bytes) { return find_allocation(address, bytes).has_value(); }

size_t bytes_in_use(const Device& device) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  size_t total = 0;
  for (const auto& [base, a] : r.blocks)
    if (a.context && a.context->device == &device && a.kind != MemoryKind::HostRegistered)
      total += a.size;
  return total;
}

void release_all(Context* context) {
  Registry& r = registry();
  std::vector<Allocation> doomed;
  {
    std::lock_guard lock(r.mutex);
    for (auto it = r.blocks.begin(); it != r.blocks.end();) {
      if (it->second.context == context) {
        doomed.push_back(it->second);
        it = r.blocks.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const Allocation& a : doomed)
    give_back(a);
}

} // namespace mimic::runtime
