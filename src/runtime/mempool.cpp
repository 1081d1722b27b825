#include "runtime/mempool.h"

#include <set>
#include <vector>

#include "runtime/memory.h"

namespace mimic::runtime {

namespace {

// Pools are never deleted, only marked destroyed: stream work that returns a block may
// still name its pool after cuMemPoolDestroy. The registry and a pool's mutex are never
// held together.
struct PoolRegistry {
  std::mutex mutex;
  std::set<MemPool*> live;
  std::map<const Device*, MemPool*> defaults, currents;
  // Base address -> the pool that last handed it out; a pool's own block map decides
  // whether the entry is still true.
  std::map<uintptr_t, MemPool*> owners;
  std::vector<MemPool*> retired; // destroyed pools, kept reachable (LeakSanitizer)
};

PoolRegistry& pools() {
  static auto* r = new PoolRegistry;
  return *r;
}

constexpr size_t kGranularity = 512;

// The registry still holds the block under its id (a context reset may have released it).
bool block_alive(uintptr_t base, const MemPool::Block& b) {
  auto a = find_allocation(reinterpret_cast<const void*>(base));
  return a && a->base == base && a->buffer_id == b.buffer_id;
}

// Gives free blocks back to the device until the pool holds at most `keep` bytes;
// the pool's mutex is held.
void release_free_blocks(MemPool* pool, uint64_t keep) {
  for (auto it = pool->blocks.begin(); it != pool->blocks.end() && pool->reserved > keep;) {
    if (it->second.state != MemPool::BlockState::Free) {
      ++it;
      continue;
    }
    if (block_alive(it->first, it->second))
      release(reinterpret_cast<void*>(it->first), {MemoryKind::Device});
    pool->reserved -= it->second.size;
    it = pool->blocks.erase(it);
  }
}

bool reusable(const MemPool* pool, const MemPool::Block& b, const Stream* stream) {
  if (b.state == MemPool::BlockState::FreePending) return b.freed_on == stream;
  if (b.state == MemPool::BlockState::Free)
    return pool->allow_opportunistic || b.freed_on == stream;
  return false;
}

// The smallest reusable block of at least `size` bytes and at most twice that; the
// pool's mutex is held. Drops blocks whose memory went away with their context.
uintptr_t take_free_block(MemPool* pool, size_t size, const Stream* stream) {
  for (;;) {
    auto best = pool->blocks.end();
    for (auto it = pool->blocks.begin(); it != pool->blocks.end(); ++it) {
      const MemPool::Block& b = it->second;
      if (b.size < size || b.size / 2 > size || !reusable(pool, b, stream)) continue;
      if (best == pool->blocks.end() || b.size < best->second.size) best = it;
    }
    if (best == pool->blocks.end()) return 0;
    if (!block_alive(best->first, best->second)) {
      pool->reserved -= best->second.size;
      pool->blocks.erase(best);
      continue;
    }
    best->second.state = MemPool::BlockState::InUse;
    best->second.freed_on = nullptr;
    ++best->second.generation;
    return best->first;
  }
}

MemPool* new_pool(const Device& device, const CUmemPoolProps& props, bool is_default) {
  auto* pool = new MemPool;
  pool->device = &device;
  pool->props = props;
  pool->is_default = is_default;
  return pool;
}

} // namespace

MemPool* default_pool(const Device& device) {
  PoolRegistry& r = pools();
  std::lock_guard lock(r.mutex);
  MemPool*& pool = r.defaults[&device];
  if (!pool) {
    CUmemPoolProps props = {};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device.ordinal();
    pool = new_pool(device, props, true);
    r.live.insert(pool);
  }
  return pool;
}

MemPool* current_pool(const Device& device) {
  {
    PoolRegistry& r = pools();
    std::lock_guard lock(r.mutex);
    if (auto it = r.currents.find(&device); it != r.currents.end()) return it->second;
  }
  return default_pool(device);
}

void set_current_pool(const Device& device, MemPool* pool) {
  PoolRegistry& r = pools();
  std::lock_guard lock(r.mutex);
  r.currents[&device] = pool;
}

Result<MemPool*> create_pool(const Device& device, const CUmemPoolProps& props) {
  MemPool* pool = new_pool(device, props, false);
  PoolRegistry& r = pools();
  std::lock_guard lock(r.mutex);
  r.live.insert(pool);
  return pool;
}

CUresult destroy_pool(MemPool* pool) {
  if (pool->is_default) return CUDA_ERROR_INVALID_VALUE;
  {
    PoolRegistry& r = pools();
    std::lock_guard lock(r.mutex);
    if (!r.live.erase(pool)) return CUDA_ERROR_INVALID_HANDLE;
    r.retired.push_back(pool);
    if (auto it = r.currents.find(pool->device); it != r.currents.end() && it->second == pool)
      r.currents.erase(it);
  }
  std::lock_guard lock(pool->mutex);
  pool->destroyed = true;
  release_free_blocks(pool, 0);
  return CUDA_SUCCESS;
}

MemPool* find_pool(CUmemoryPool handle) {
  PoolRegistry& r = pools();
  std::lock_guard lock(r.mutex);
  auto* pool = reinterpret_cast<MemPool*>(handle);
  return r.live.count(pool) ? pool : nullptr;
}

Result<void*> pool_allocate(MemPool* pool, Context* context, size_t bytes, Stream* stream) {
  size_t size = (bytes + kGranularity - 1) / kGranularity * kGranularity;
  if (size < bytes) return Error("allocation size overflows", CUDA_ERROR_OUT_OF_MEMORY);
  uintptr_t base = 0;
  {
    std::lock_guard lock(pool->mutex);
    if (pool->destroyed) return Error("the memory pool was destroyed", CUDA_ERROR_INVALID_VALUE);
    base = take_free_block(pool, size, stream);
    if (!base) {
      if (pool->props.maxSize && pool->reserved + size > pool->props.maxSize)
        return Error("the memory pool is at its maximum size", CUDA_ERROR_OUT_OF_MEMORY);
      auto p = allocate(context, size, MemoryKind::Device);
      if (!p)
        return Error("cannot allocate " + std::to_string(size) + " bytes for a memory pool",
                     CUDA_ERROR_OUT_OF_MEMORY);
      base = reinterpret_cast<uintptr_t>(p.value());
      MemPool::Block b;
      b.size = size;
      b.buffer_id = find_allocation(p.value())->buffer_id;
      pool->blocks[base] = b;
      pool->reserved += size;
      pool->reserved_high = std::max(pool->reserved_high, pool->reserved);
    }
    pool->used += pool->blocks[base].size;
    pool->used_high = std::max(pool->used_high, pool->used);
  }
  PoolRegistry& r = pools();
  std::lock_guard lock(r.mutex);
  r.owners[base] = pool;
  return reinterpret_cast<void*>(base);
}

MemPool* pool_of(const void* pointer) {
  auto base = reinterpret_cast<uintptr_t>(pointer);
  MemPool* pool = nullptr;
  {
    PoolRegistry& r = pools();
    std::lock_guard lock(r.mutex);
    auto it = r.owners.find(base);
    if (it == r.owners.end()) return nullptr;
    pool = it->second;
  }
  std::lock_guard lock(pool->mutex);
  auto it = pool->blocks.find(base);
  return it != pool->blocks.end() && it->second.state == MemPool::BlockState::InUse ? pool
                                                                                    : nullptr;
}

bool pool_owns(const void* pointer) {
  auto base = reinterpret_cast<uintptr_t>(pointer);
  MemPool* pool = nullptr;
  {
    PoolRegistry& r = pools();
    std::lock_guard lock(r.mutex);
    auto it = r.owners.find(base);
    if (it == r.owners.end()) return false;
    pool = it->second;
  }
  std::lock_guard lock(pool->mutex);
  return pool->blocks.count(base) != 0;
}

CUresult pool_free_now(void* pointer) {
  MemPool* pool = pool_of(pointer);
  if (!pool) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(pool->mutex);
  auto it = pool->blocks.find(reinterpret_cast<uintptr_t>(pointer));
  if (it == pool->blocks.end() || it->second.state != MemPool::BlockState::InUse)
    return CUDA_ERROR_INVALID_VALUE;
  it->second.state = MemPool::BlockState::Free;
  it->second.freed_on = nullptr;
  ++it->second.generation;
  pool->used -= it->second.size;
  release_free_blocks(pool, pool->destroyed ? 0 : pool->release_threshold);
  return CUDA_SUCCESS;
}

CUresult pool_free(void* pointer, Stream* stream) {
  MemPool* pool = pool_of(pointer);
  if (!pool) return CUDA_ERROR_INVALID_VALUE;
  auto base = reinterpret_cast<uintptr_t>(pointer);
  uint64_t generation = 0;
  {
    std::lock_guard lock(pool->mutex);
    auto it = pool->blocks.find(base);
    if (it == pool->blocks.end() || it->second.state != MemPool::BlockState::InUse)
      return CUDA_ERROR_INVALID_VALUE;
    it->second.state = MemPool::BlockState::FreePending;
    it->second.freed_on = stream;
    generation = ++it->second.generation;
    pool->used -= it->second.size;
  }
  submit(stream, [pool, base, generation] {
    std::lock_guard lock(pool->mutex);
    auto it = pool->blocks.find(base);
    if (it != pool->blocks.end() && it->second.state == MemPool::BlockState::FreePending &&
        it->second.generation == generation)
      it->second.state = MemPool::BlockState::Free;
    release_free_blocks(pool, pool->destroyed ? 0 : pool->release_threshold);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

void forget_released_blocks(MemPool* pool) {
  std::lock_guard lock(pool->mutex);
  for (auto it = pool->blocks.begin(); it != pool->blocks.end();) {
    if (block_alive(it->first, it->second)) {
      ++it;
      continue;
    }
    pool->reserved -= it->second.size;
    if (it->second.state == MemPool::BlockState::InUse) pool->used -= it->second.size;
    it = pool->blocks.erase(it);
  }
}

void trim_pool(MemPool* pool, size_t keep) {
  std::lock_guard lock(pool->mutex);
  release_free_blocks(pool, keep);
}

} // namespace mimic::runtime
