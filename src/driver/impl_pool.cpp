// Memory pools and stream-ordered allocation. The pool logic (reuse, statistics,
// trimming) is in runtime/mempool.h; here arguments, handles and streams are checked.
#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "runtime/graph.h"
#include "runtime/memory.h"
#include "runtime/mempool.h"
#include "runtime/stream.h"

namespace mimic::driver::impl {

namespace {

void* ptr(CUdeviceptr p) {
  return reinterpret_cast<void*>(uintptr_t(p));
}

CUresult stream_for(CUstream h, bool per_thread, runtime::Context*& c, runtime::Stream*& s) {
  if (CUresult r = current_context(c)) return r;
  s = runtime::resolve_stream(h, c, per_thread);
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  return check_async_work(s); // the legacy stream is unusable during capture
}

CUresult allocate(CUdeviceptr* out, size_t bytes, runtime::MemPool* pool, CUstream h,
                  bool per_thread) {
  runtime::Context* c;
  runtime::Stream* s;
  if (CUresult r = stream_for(h, per_thread, c, s)) return r;
  if (!out || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  // On a capturing stream: a graph allocation node (impl_graph.cpp).
  if (runtime::is_capturing(s)) return capture_mem_alloc(s, bytes, out);
  if (!pool) pool = runtime::current_pool(*c->device);
  if (pool->device != c->device) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > c->device->properties().total_memory) return CUDA_ERROR_OUT_OF_MEMORY;
  auto p = runtime::pool_allocate(pool, c, bytes, s);
  if (!p) return CUresult(p.error().code());
  *out = CUdeviceptr(reinterpret_cast<uintptr_t>(p.value()));
  return CUDA_SUCCESS;
}

// Pool memory goes back to its pool; memory from cuMemAlloc is released once the stream
// reaches the free, as CUDA allows.
CUresult free_async(CUdeviceptr p, CUstream h, bool per_thread) {
  runtime::Context* c;
  runtime::Stream* s;
  if (CUresult r = stream_for(h, per_thread, c, s)) return r;
  if (p == 0) return CUDA_ERROR_INVALID_VALUE;
  if (runtime::is_capturing(s)) return capture_mem_free(s, p);
  if (runtime::pool_owns(ptr(p))) return runtime::pool_free(ptr(p), s);
  auto a = runtime::find_allocation(ptr(p));
  if (!a || a->base != uintptr_t(p) ||
      (a->kind != runtime::MemoryKind::Device && a->kind != runtime::MemoryKind::Managed))
    return CUDA_ERROR_INVALID_VALUE;
  runtime::submit(s, [p] {
    return runtime::release(ptr(p), {runtime::MemoryKind::Device, runtime::MemoryKind::Managed});
  });
  return CUDA_SUCCESS;
}

CUresult pool_handle(CUmemoryPool h, runtime::MemPool*& pool) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  pool = runtime::find_pool(h);
  return pool ? CUDA_SUCCESS : h ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
}

// Device pools of pinned memory are the only kind Mimic has.
CUresult device_location(const CUmemLocation* location, CUmemAllocationType type,
                         const runtime::Device*& d) {
  if (!location) return CUDA_ERROR_INVALID_VALUE;
  if (location->type != CU_MEM_LOCATION_TYPE_DEVICE || type != CU_MEM_ALLOCATION_TYPE_PINNED)
    return CUDA_ERROR_NOT_SUPPORTED;
  return device_of(location->id, d);
}

} // namespace

// ---- stream-ordered allocation

CUresult cuMemAllocAsync_v11020(CUdeviceptr* dptr, size_t bytesize, CUstream s) {
  return allocate(dptr, bytesize, nullptr, s, false);
}
CUresult cuMemAllocAsync_v11020_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream s) {
  return allocate(dptr, bytesize, nullptr, s, true);
}

CUresult cuMemAllocFromPoolAsync_v11020(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                        CUstream s) {
  runtime::MemPool* p = nullptr;
  if (CUresult r = pool_handle(pool, p)) return r;
  return allocate(dptr, bytesize, p, s, false);
}
CUresult cuMemAllocFromPoolAsync_v11020_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                             CUstream s) {
  runtime::MemPool* p = nullptr;
  if (CUresult r = pool_handle(pool, p)) return r;
  return allocate(dptr, bytesize, p, s, true);
}

CUresult cuMemFreeAsync_v11020(CUdeviceptr p, CUstream s) {
  return free_async(p, s, false);
}
CUresult cuMemFreeAsync_v11020_ptsz(CUdeviceptr p, CUstream s) {
  return free_async(p, s, true);
}

// ---- device pools

CUresult cuDeviceGetDefaultMemPool_v11020(CUmemoryPool* pool_out, CUdevice dev) {
  const runtime::Device* d = nullptr;
  if (CUresult r = device_of(dev, d)) return r;
  if (!pool_out) return CUDA_ERROR_INVALID_VALUE;
  *pool_out = runtime::to_handle(runtime::default_pool(*d));
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetMemPool_v11020(CUmemoryPool* pool, CUdevice dev) {
  const runtime::Device* d = nullptr;
  if (CUresult r = device_of(dev, d)) return r;
  if (!pool) return CUDA_ERROR_INVALID_VALUE;
  *pool = runtime::to_handle(runtime::current_pool(*d));
  return CUDA_SUCCESS;
}

CUresult cuDeviceSetMemPool_v11020(CUdevice dev, CUmemoryPool pool) {
  const runtime::Device* d = nullptr;
  if (CUresult r = device_of(dev, d)) return r;
  runtime::MemPool* p = runtime::find_pool(pool);
  if (!p) return pool ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
  if (p->device != d) return CUDA_ERROR_INVALID_VALUE;
  runtime::set_current_pool(*d, p);
  return CUDA_SUCCESS;
}

CUresult cuMemGetDefaultMemPool_v13000(CUmemoryPool* pool_out, CUmemLocation* location,
                                       CUmemAllocationType type) {
  const runtime::Device* d = nullptr;
  if (CUresult r = device_location(location, type, d)) return r;
  return cuDeviceGetDefaultMemPool_v11020(pool_out, d->ordinal());
}

CUresult cuMemGetMemPool_v13000(CUmemoryPool* pool_out, CUmemLocation* location,
                                CUmemAllocationType type) {
  const runtime::Device* d = nullptr;
  if (CUresult r = device_location(location, type, d)) return r;
  return cuDeviceGetMemPool_v11020(pool_out, d->ordinal());
}

CUresult cuMemSetMemPool_v13000(CUmemLocation* location, CUmemAllocationType type,
                                CUmemoryPool pool) {
  const runtime::Device* d = nullptr;
  if (CUresult r = device_location(location, type, d)) return r;
  return cuDeviceSetMemPool_v11020(d->ordinal(), pool);
}

// ---- pools

CUresult cuMemPoolCreate_v11020(CUmemoryPool* pool, const CUmemPoolProps* props) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!pool || !props) return CUDA_ERROR_INVALID_VALUE;
  if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (props->handleTypes & ~unsigned(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    return CUDA_ERROR_NOT_SUPPORTED;
  const runtime::Device* d = nullptr;
  if (device_of(props->location.id, d) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
  auto p = runtime::create_pool(*d, *props);
  if (!p) return CUresult(p.error().code());
  *pool = runtime::to_handle(p.value());
  return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy_v11020(CUmemoryPool pool) {
  runtime::MemPool* p = nullptr;
  if (CUresult r = pool_handle(pool, p)) return r;
  return runtime::destroy_pool(p);
}

CUresult cuMemPoolTrimTo_v11020(CUmemoryPool pool, size_t minBytesToKeep) {
  runtime::MemPool* p = nullptr;
  if (CUresult r = pool_handle(pool, p)) return r;
  runtime::trim_pool(p, minBytesToKeep);
  return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute_v11020(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  runtime::MemPool* p = nullptr;
  if (CUresult r = pool_handle(pool, p)) return r;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(p->mutex);
  auto as_int = [&] { return *static_cast<int*>(value) != 0; };
  auto as_u64 = [&] { return *static_cast<cuuint64_t*>(value); };
  switch (attr) {
  case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    p->follow_event_dependencies = as_int();
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    p->allow_opportunistic = as_int();
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
    p->allow_internal_dependencies = as_int();
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
    p->release_threshold = as_u64();
    return CUDA_SUCCESS;
  // The high-water marks may only be reset (to the current value), by writing 0.
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    if (as_u64() != 0) return CUDA_ERROR_INVALID_VALUE;
    p->reserved_high = p->reserved;
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
    if (as_u64() != 0) return CUDA_ERROR_INVALID_VALUE;
    p->used_high = p->used;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuMemPoolGetAttribute_v11020(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  runtime::MemPool* p = nullptr;
  if (CUresult r = pool_handle(pool, p)) return r;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  runtime::forget_released_blocks(p);
  std::lock_guard lock(p->mutex);
  auto put_int = [&](bool v) { *static_cast<int*>(value) = v; };
  auto put_u64 = [&](uint64_t v) { *static_cast<cuuint64_t*>(value) = v; };
  switch (attr) {
  case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    put_int(p->follow_event_dependencies);
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    put_int(p->allow_opportunistic);
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
    put_int(p->allow_internal_dependencies);
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
    put_u64(p->release_threshold);
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
    put_u64(p->reserved);
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    put_u64(p->reserved_high);
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
    put_u64(p->used);
    return CUDA_SUCCESS;
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
    put_u64(p->used_high);
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

// The owning device always has read-write access; peers default to none.
CUresult cuMemPoolSetAccess_v11020(CUmemoryPool pool, const CUmemAccessDesc* map, size_t count) {
  runtime::MemPool* p = nullptr;
  if (CUresult r = pool_handle(pool, p)) return r;
  if (count && !map) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i) {
    const runtime::Device* d = nullptr;
    if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        device_of(map[i].location.id, d) != CUDA_SUCCESS)
      return CUDA_ERROR_INVALID_VALUE;
    CUmemAccess_flags f = map[i].flags;
    if (f != CU_MEM_ACCESS_FLAGS_PROT_NONE && f != CU_MEM_ACCESS_FLAGS_PROT_READ &&
        f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return CUDA_ERROR_INVALID_VALUE;
    if (d == p->device && f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return CUDA_ERROR_INVALID_DEVICE;
  }
  std::lock_guard lock(p->mutex);
  for (size_t i = 0; i < count; ++i)
    if (map[i].location.id != p->device->ordinal()) p->access[map[i].location.id] = map[i].flags;
  return CUDA_SUCCESS;
}

CUresult cuMemPoolGetAccess_v11020(CUmemAccess_flags* flags, CUmemoryPool memPool,
                                   CUmemLocation* location) {
  runtime::MemPool* p = nullptr;
  if (CUresult r = pool_handle(memPool, p)) return r;
  if (!flags || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_INVALID_VALUE;
  const runtime::Device* d = nullptr;
  if (device_of(location->id, d) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
  if (d == p->device) {
    *flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return CUDA_SUCCESS;
  }
  std::lock_guard lock(p->mutex);
  auto it = p->access.find(location->id);
  *flags = it == p->access.end() ? CU_MEM_ACCESS_FLAGS_PROT_NONE : it->second;
  return CUDA_SUCCESS;
}

} // namespace mimic::driver::impl
