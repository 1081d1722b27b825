// Memory pools (CUmemoryPool) and stream-ordered allocation (cuMemAllocAsync,
// cuMemFreeAsync). A pool keeps blocks of device memory it allocated through the
// registry; a freed block comes back to the pool once the work enqueued on its stream
// before the free has run.
//
// Reuse rules (CUDA's, simplified):
// - an allocation on stream S may take a block freed on S at once, even before S has
//   reached the free: S runs the new user's work after the free;
// - any stream may take a block whose free has run, while REUSE_ALLOW_OPPORTUNISTIC is set;
// - otherwise the pool allocates a new block.
// Blocks are not split; a block is reused for requests of at least half its size.
// Memory above the release threshold goes back to the device as soon as a free has run
// (CUDA releases it at the next synchronisation; a program cannot tell the difference
// except that we give memory back sooner). cuMemPoolTrimTo releases free blocks at once.
#pragma once

#include <cuda.h>
#include <map>
#include <mutex>

#include "runtime/context.h"
#include "runtime/stream.h"

namespace mimic::runtime {

struct MemPool {
  const Device* device = nullptr;
  CUmemPoolProps props = {};
  bool is_default = false;

  std::mutex mutex; // everything below
  bool destroyed = false;
  uint64_t release_threshold = 0;
  bool follow_event_dependencies = true;
  bool allow_opportunistic = true;
  bool allow_internal_dependencies = true;
  uint64_t reserved = 0, reserved_high = 0, used = 0, used_high = 0;
  std::map<int, CUmemAccess_flags> access; // peer device ordinal -> access

  enum class BlockState : uint8_t { InUse, FreePending, Free };
  struct Block {
    size_t size = 0;
    unsigned long long buffer_id = 0; // the registry's, to notice memory released under us
    BlockState state = BlockState::InUse;
    const Stream* freed_on = nullptr; // compared, never dereferenced
    uint64_t generation = 0;
  };
  std::map<uintptr_t, Block> blocks;
};

// The device's default pool (created on first use) and its current pool (the default
// until cuDeviceSetMemPool).
MemPool* default_pool(const Device& device);
MemPool* current_pool(const Device& device);
void set_current_pool(const Device& device, MemPool* pool);

Result<MemPool*> create_pool(const Device& device, const CUmemPoolProps& props);
// The default pool cannot be destroyed (CUDA_ERROR_INVALID_VALUE). Blocks still in use
// go back to the device when they are freed.
CUresult destroy_pool(MemPool* pool);
MemPool* find_pool(CUmemoryPool handle);
inline CUmemoryPool to_handle(MemPool* p) {
  return reinterpret_cast<CUmemoryPool>(p);
}

// `bytes` > 0 of device memory usable by work enqueued on `stream` after this call.
Result<void*> pool_allocate(MemPool* pool, Context* context, size_t bytes, Stream* stream);
// The pool of a live pool allocation (its base address), or nullptr.
MemPool* pool_of(const void* pointer);
// Whether `pointer` is the base of a block of a pool, in use or free.
bool pool_owns(const void* pointer);
// Returns the block to its pool now (cuMemFree, once the device is idle).
CUresult pool_free_now(void* pointer);
// Returns the block to its pool after the work enqueued on `stream` so far;
// CUDA_ERROR_INVALID_VALUE when `pointer` is not a live pool allocation.
CUresult pool_free(void* pointer, Stream* stream);
// Forgets blocks whose memory went away with their context (context destruction, primary
// context reset), so that the statistics tell the truth; the pool's mutex is not held.
void forget_released_blocks(MemPool* pool);
// Releases free blocks until the pool holds at most `keep` bytes.
void trim_pool(MemPool* pool, size_t keep);

} // namespace mimic::runtime
