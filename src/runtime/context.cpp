#include "runtime/context.h"

#include <map>
#include <vector>

#include "runtime/array.h"
#include "runtime/handle.h"
#include "runtime/memory.h"
#include "runtime/module.h"
#include "runtime/stream.h"
#include "runtime/texture.h"

namespace mimic::runtime {

namespace {

HandleRegistry<Context>& registry() {
  static auto* r = new HandleRegistry<Context>;
  return *r;
}

std::mutex& primary_mutex() {
  static auto* m = new std::mutex;
  return *m;
}

std::atomic<unsigned long long> next_context_id{1};

thread_local std::vector<Context*> tls_stack;

Context* new_context(const Device& device, bool primary, unsigned flags) {
  auto* c = new Context;
  c->device = &device;
  c->primary = primary;
  c->flags = flags;
  c->id = next_context_id++;
  for (int l = 0; l < CU_LIMIT_MAX; ++l)
    c->limits[l] = default_limit(CUlimit(l));
  registry().add(c);
  return c;
}

// The end of a context or of a primary context's activation: its work finishes, then its
// streams, events, modules, texture/surface objects and arrays become stale handles and
// its memory is released.
void end_activation(Context* c) {
  retire_streams_and_events(c);
  retire_modules(c);
  retire_texture_objects(c);
  retire_arrays(c);
  release_all(c);
}

} // namespace

size_t default_limit(CUlimit limit) {
  switch (limit) {
  case CU_LIMIT_STACK_SIZE:
    return 1024;
  case CU_LIMIT_PRINTF_FIFO_SIZE:
    return 1 << 20;
  case CU_LIMIT_MALLOC_HEAP_SIZE:
    return 8 << 20;
  case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
    return 2;
  case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
    return 2048;
  case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
    return 64;
  default:
    return 0;
  }
}

Context* find_context(CUcontext handle) { return registry().find(handle); }

Context* primary_context(const Device& device) {
  static auto* primaries = new std::map<const Device*, Context*>;
  std::lock_guard lock(primary_mutex());
  auto& slot = (*primaries)[&device];
  if (!slot)
    slot = new_context(device, true, 0);
  return slot;
}

CUresult retain_primary(const Device& device, Context** out) {
  Context* c = primary_context(device);
  std::lock_guard lock(primary_mutex());
  if (c->primary_refcount == 0)
    c->sticky_error = CUDA_SUCCESS; // a fresh activation starts healthy
  ++c->primary_refcount;
  *out = c;
  return CUDA_SUCCESS;
}

CUresult release_primary(const Device& device) {
  Context* c = primary_context(device);
  {
    std::lock_guard lock(primary_mutex());
    if (c->primary_refcount == 0)
      return CUDA_ERROR_INVALID_CONTEXT;
    if (--c->primary_refcount > 0)
      return CUDA_SUCCESS;
  }
  // The last release ends the activation, as a reset does.
  clear_local_storage(c);
  end_activation(c);
  return CUDA_SUCCESS;
}

CUresult reset_primary(const Device& device) {
  Context* c = primary_context(device);
  clear_local_storage(c);
  end_activation(c);
  std::lock_guard lock(primary_mutex());
  c->primary_refcount = 0;
  c->sticky_error = CUDA_SUCCESS;
  return CUDA_SUCCESS;
}

void clear_local_storage(Context* c) {
  std::map<void*, Context::LocalValue> values;
  {
    std::lock_guard lock(c->mutex);
    values.swap(c->local_storage);
  }
  for (auto& [key, v] : values)
    if (v.destructor)
      v.destructor(to_handle(c), key, v.value);
}

bool primary_active(const Device& device) {
  Context* c = primary_context(device);
  std::lock_guard lock(primary_mutex());
  return c->primary_refcount > 0;
}

Result<Context*> create_context(const Device& device, unsigned flags) {
  return new_context(device, false, flags);
}

CUresult destroy_context(Context* c) {
  if (c->primary)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!registry().remove(c))
    return CUDA_ERROR_INVALID_CONTEXT;
  clear_local_storage(c);
  end_activation(c);
  // Remove it from this thread's stack; other threads' stacks will find it dead.
  std::erase(tls_stack, c);
  return CUDA_SUCCESS; // the object stays allocated so stale handles stay detectable
}

Context* current_context() {
  while (!tls_stack.empty() && !registry().find(tls_stack.back()))
    tls_stack.pop_back();
  return tls_stack.empty() ? nullptr : tls_stack.back();
}

void set_current_context(Context* c) {
  if (!c) {
    if (!tls_stack.empty())
      tls_stack.pop_back();
    return;
  }
  if (tls_stack.empty())
    tls_stack.push_back(c);
  else
    tls_stack.back() = c;
}

void push_current_context(Context* c) { tls_stack.push_back(c); }

Context* pop_current_context() {
  if (tls_stack.empty())
    return nullptr;
  Context* c = tls_stack.back();
  tls_stack.pop_back();
  return c;
}

} // namespace mimic::runtime
