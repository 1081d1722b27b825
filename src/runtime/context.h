// Contexts: the primary context of each device (retained and released by the runtime)
// and contexts created with cuCtxCreate; the per-thread stack of current contexts.
#pragma once

#include <atomic>
#include <cuda.h>
#include <map>
#include <mutex>

#include "runtime/device.h"

namespace mimic::runtime {

struct Stream;

struct Context {
  const Device* device = nullptr;
  bool primary = false;
  unsigned flags = 0;
  int primary_refcount = 0; // primary contexts only; guarded by the primary mutex
  // The first error that made the context unusable (a kernel fault), like CUDA's sticky
  // errors; CUDA_SUCCESS while healthy.
  std::atomic<CUresult> sticky_error{CUDA_SUCCESS};
  std::mutex mutex; // limits and configuration below
  size_t limits[CU_LIMIT_MAX] = {};
  CUfunc_cache cache_config = CU_FUNC_CACHE_PREFER_NONE;
  CUsharedconfig shared_config = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
  unsigned long long id = 0;

  // Context-local storage of the CUDA runtime (private export table c693336e):
  // key -> value and a destructor called as dtor(context, key, value) when the context is
  // destroyed or its primary activation reset.
  using LocalDestructor = void (*)(CUcontext, void*, void*);
  struct LocalValue {
    void* value;
    LocalDestructor destructor;
  };
  std::map<void*, LocalValue> local_storage; // guarded by `mutex`

  // Read by every launch on the legacy default stream (stream.cpp): that stream, once made
  // (it lives as long as the context), and how many live blocking streams it waits for.
  std::atomic<Stream*> legacy_stream{nullptr};
  std::atomic<unsigned> blocking_streams{0};
};

// Calls and forgets the context-local storage destructors.
void clear_local_storage(Context* context);

// A live context, or nullptr for a stale/foreign handle.
Context* find_context(CUcontext handle);
inline CUcontext to_handle(Context* c) { return reinterpret_cast<CUcontext>(c); }

// Primary contexts. retain creates it on first use; the handle is the same for the whole
// process. release returns CUDA_ERROR_INVALID_CONTEXT when it was not retained.
Context* primary_context(const Device& device);
CUresult retain_primary(const Device& device, Context** out);
CUresult release_primary(const Device& device);
CUresult reset_primary(const Device& device);
bool primary_active(const Device& device);

Result<Context*> create_context(const Device& device, unsigned flags);
CUresult destroy_context(Context* context);

// The calling thread's context stack.
Context* current_context();          // top, or nullptr
void set_current_context(Context* c); // replace the top (pop when c is null)
void push_current_context(Context* c);
Context* pop_current_context();       // nullptr when empty

// Default limits for a new context (cuCtxGetLimit).
size_t default_limit(CUlimit limit);

} // namespace mimic::runtime
