// Memory: allocation (device, pinned host, registered host, managed, pitched), copies,
// fills, pointer attributes. Device-side addresses are checked against the allocation
// registry before any byte moves: a wild pointer is CUDA_ERROR_INVALID_VALUE, not a crash.
#include <cstring>

#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "runtime/graph.h"
#include "runtime/memory.h"
#include "runtime/mempool.h"
#include "runtime/stream.h"

namespace mimic::driver::impl {

namespace {

using runtime::MemoryKind;

void* ptr(CUdeviceptr p) { return reinterpret_cast<void*>(uintptr_t(p)); }
CUdeviceptr dptr(const void* p) { return CUdeviceptr(reinterpret_cast<uintptr_t>(p)); }

// `bytes` starting at `p` must lie inside memory the device can reach through the
// runtime (any allocation kind).
bool device_range_ok(CUdeviceptr p, size_t bytes) {
  return bytes == 0 || runtime::find_allocation(ptr(p), bytes).has_value();
}

// Host memory the worker may touch later: pinned or registered blocks stay valid, other
// host memory only while the caller waits.
bool is_pinned_host(const void* p, size_t bytes) {
  auto a = runtime::find_allocation(p, bytes);
  return a && (a->kind == MemoryKind::HostPinned || a->kind == MemoryKind::HostRegistered ||
               a->kind == MemoryKind::Managed);
}

CUresult alloc(CUdeviceptr* dptr_out, size_t bytesize, MemoryKind kind, unsigned flags) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (!dptr_out)
    return CUDA_ERROR_INVALID_VALUE;
  if (bytesize == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (bytesize > c->device->properties().total_memory)
    return CUDA_ERROR_OUT_OF_MEMORY;
  auto p = runtime::allocate(c, bytesize, kind, flags);
  if (!p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *dptr_out = dptr(p.value());
  return CUDA_SUCCESS;
}

CUresult stream_for(CUstream h, bool per_thread, runtime::Context*& c, runtime::Stream*& s) {
  if (CUresult r = current_context(c))
    return r;
  s = runtime::resolve_stream(h, c, per_thread);
  if (!s)
    return CUDA_ERROR_INVALID_HANDLE;
  return check_async_work(s); // the legacy stream is unusable during capture
}

// A copy between any two addresses, ordered on a stream. `wait` makes it synchronous;
// an asynchronous call on a capturing stream becomes a graph node.
CUresult copy(void* dst, const void* src, size_t bytes, CUstream h, bool per_thread, bool wait, bool async) {
  runtime::Context* c;
  runtime::Stream* s;
  if (CUresult r = stream_for(h, per_thread, c, s))
    return r;
  if (bytes == 0)
    return CUDA_SUCCESS;
  if (!dst || !src)
    return CUDA_ERROR_INVALID_VALUE;
  if (async && runtime::is_capturing(s))
    return runtime::capture_node(s, memcpy_node(c, dst, src, bytes));
  runtime::Backend* backend = &c->device->backend();
  auto work = [backend, dst, src, bytes] {
    Status st = backend->copy(dst, src, bytes);
    return st ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
  };
  if (wait)
    return runtime::submit_and_wait(s, work);
  runtime::submit(s, work);
  return CUDA_SUCCESS;
}

CUresult htod(CUdeviceptr dst, const void* src, size_t n, CUstream h, bool per_thread, bool async) {
  if (n && !device_range_ok(dst, n))
    return CUDA_ERROR_INVALID_VALUE;
  return copy(ptr(dst), src, n, h, per_thread, !async || !is_pinned_host(src, n), async);
}

CUresult dtoh(void* dst, CUdeviceptr src, size_t n, CUstream h, bool per_thread, bool async) {
  if (n && !device_range_ok(src, n))
    return CUDA_ERROR_INVALID_VALUE;
  return copy(dst, ptr(src), n, h, per_thread, !async || !is_pinned_host(dst, n), async);
}

CUresult dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h, bool per_thread, bool async) {
  if (n && (!device_range_ok(dst, n) || !device_range_ok(src, n)))
    return CUDA_ERROR_INVALID_VALUE;
  return copy(ptr(dst), ptr(src), n, h, per_thread, !async, async);
}

// cuMemcpy with unified addressing: either side may be host or device memory.
CUresult unified(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h, bool per_thread, bool async) {
  bool host_involved = !device_range_ok(dst, n) || !device_range_ok(src, n);
  return copy(ptr(dst), ptr(src), n, h, per_thread, !async || host_involved, async);
}

CUresult fill(CUdeviceptr dst, uint32_t value, size_t element, size_t count, CUstream h, bool per_thread,
              bool async) {
  runtime::Context* c;
  runtime::Stream* s;
  if (CUresult r = stream_for(h, per_thread, c, s))
    return r;
  if (count == 0)
    return CUDA_SUCCESS;
  if (!device_range_ok(dst, element * count) || (dst % element) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (async && runtime::is_capturing(s))
    return runtime::capture_node(s, memset_node(c, dst, value, unsigned(element), count));
  runtime::Backend* backend = &c->device->backend();
  auto work = [backend, dst, value, element, count] {
    return backend->fill(ptr(dst), value, element, count) ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
  };
  if (!async)
    return runtime::submit_and_wait(s, work);
  runtime::submit(s, work);
  return CUDA_SUCCESS;
}

} // namespace

// ---- allocation

CUresult cuMemAlloc_v3020(CUdeviceptr_v2* dptr_out, size_t bytesize) {
  return alloc(dptr_out, bytesize, MemoryKind::Device, 0);
}

CUresult cuMemAllocManaged_v6000(CUdeviceptr_v2* dptr_out, size_t bytesize, unsigned int flags) {
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
    return CUDA_ERROR_INVALID_VALUE;
  return alloc(dptr_out, bytesize, MemoryKind::Managed, flags);
}

CUresult cuMemAllocPitch_v3020(CUdeviceptr_v2* dptr_out, size_t* pPitch, size_t WidthInBytes, size_t Height,
                               unsigned int ElementSizeBytes) {
  if (!pPitch || WidthInBytes == 0 || Height == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16)
    return CUDA_ERROR_INVALID_VALUE;
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  size_t align = size_t(c->device->properties().texture_pitch_alignment);
  size_t pitch = (WidthInBytes + align - 1) / align * align;
  if (Height > SIZE_MAX / pitch)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = alloc(dptr_out, pitch * Height, MemoryKind::Device, 0);
  if (r == CUDA_SUCCESS)
    *pPitch = pitch;
  return r;
}

CUresult cuMemFree_v3020(CUdeviceptr_v2 p) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (p == 0)
    return CUDA_SUCCESS;
  // Freeing waits for the device, as cuMemFree does.
  runtime::synchronize_context(c);
  // Memory from cuMemAllocAsync may be freed here too; its block goes back to its pool.
  if (runtime::pool_owns(ptr(p)))
    return runtime::pool_free_now(ptr(p));
  return runtime::release(ptr(p), {MemoryKind::Device, MemoryKind::Managed});
}

CUresult cuMemHostAlloc_v2020(void** pp, size_t bytesize, unsigned int Flags) {
  constexpr unsigned kKnown = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  if (!pp || bytesize == 0 || (Flags & ~kKnown))
    return CUDA_ERROR_INVALID_VALUE;
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  auto p = runtime::allocate(c, bytesize, MemoryKind::HostPinned, Flags);
  if (!p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *pp = p.value();
  return CUDA_SUCCESS;
}

CUresult cuMemAllocHost_v3020(void** pp, size_t bytesize) { return cuMemHostAlloc_v2020(pp, bytesize, 0); }

CUresult cuMemFreeHost_v2000(void* p) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  runtime::synchronize_context(c);
  return runtime::release(p, {MemoryKind::HostPinned});
}

CUresult cuMemHostGetDevicePointer_v3020(CUdeviceptr_v2* pdptr, void* p, unsigned int Flags) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (!pdptr || !p || Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  auto a = runtime::find_allocation(p);
  if (!a || (a->kind != MemoryKind::HostPinned && a->kind != MemoryKind::HostRegistered))
    return CUDA_ERROR_INVALID_VALUE;
  // The CPU backend shares the host's address space: the mapping is the identity.
  *pdptr = dptr(p);
  return CUDA_SUCCESS;
}

CUresult cuMemHostGetFlags_v2030(unsigned int* pFlags, void* p) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (!pFlags || !p)
    return CUDA_ERROR_INVALID_VALUE;
  auto a = runtime::find_allocation(p);
  if (!a || (a->kind != MemoryKind::HostPinned && a->kind != MemoryKind::HostRegistered))
    return CUDA_ERROR_INVALID_VALUE;
  *pFlags = a->flags;
  return CUDA_SUCCESS;
}

CUresult cuMemHostRegister_v6050(void* p, size_t bytesize, unsigned int Flags) {
  constexpr unsigned kKnown = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                              CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (!p || bytesize == 0 || (Flags & ~kKnown))
    return CUDA_ERROR_INVALID_VALUE;
  if (Flags & CU_MEMHOSTREGISTER_IOMEMORY)
    return CUDA_ERROR_NOT_SUPPORTED;
  return runtime::register_host(c, p, bytesize, Flags);
}
CUresult cuMemHostRegister_v4000(void* p, size_t bytesize, unsigned int Flags) {
  return cuMemHostRegister_v6050(p, bytesize, Flags);
}

CUresult cuMemHostUnregister_v4000(void* p) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  runtime::synchronize_context(c);
  return runtime::unregister_host(p);
}

CUresult cuMemGetInfo_v3020(size_t* free, size_t* total) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (!free || !total)
    return CUDA_ERROR_INVALID_VALUE;
  size_t t = c->device->properties().total_memory;
  size_t used = runtime::bytes_in_use(*c->device);
  *total = t;
  *free = used < t ? t - used : 0;
  return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange_v3020(CUdeviceptr_v2* pbase, size_t* psize, CUdeviceptr_v2 p) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  auto a = runtime::find_allocation(ptr(p));
  if (!a || a->kind == MemoryKind::HostRegistered || a->kind == MemoryKind::HostPinned)
    return CUDA_ERROR_NOT_FOUND;
  if (pbase)
    *pbase = CUdeviceptr(a->base);
  if (psize)
    *psize = a->size;
  return CUDA_SUCCESS;
}

// ---- copies

CUresult cuMemcpy_v4000(CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t n) { return unified(dst, src, n, nullptr, false, false); }
CUresult cuMemcpy_v7000_ptds(CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t n) { return unified(dst, src, n, nullptr, true, false); }
CUresult cuMemcpyAsync_v4000(CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t n, CUstream s) { return unified(dst, src, n, s, false, true); }
CUresult cuMemcpyAsync_v7000_ptsz(CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t n, CUstream s) { return unified(dst, src, n, s, true, true); }

CUresult cuMemcpyHtoD_v3020(CUdeviceptr_v2 dst, const void* src, size_t n) { return htod(dst, src, n, nullptr, false, false); }
CUresult cuMemcpyHtoD_v7000_ptds(CUdeviceptr_v2 dst, const void* src, size_t n) { return htod(dst, src, n, nullptr, true, false); }
CUresult cuMemcpyHtoDAsync_v3020(CUdeviceptr_v2 dst, const void* src, size_t n, CUstream s) { return htod(dst, src, n, s, false, true); }
CUresult cuMemcpyHtoDAsync_v7000_ptsz(CUdeviceptr_v2 dst, const void* src, size_t n, CUstream s) { return htod(dst, src, n, s, true, true); }

CUresult cuMemcpyDtoH_v3020(void* dst, CUdeviceptr_v2 src, size_t n) { return dtoh(dst, src, n, nullptr, false, false); }
CUresult cuMemcpyDtoH_v7000_ptds(void* dst, CUdeviceptr_v2 src, size_t n) { return dtoh(dst, src, n, nullptr, true, false); }
CUresult cuMemcpyDtoHAsync_v3020(void* dst, CUdeviceptr_v2 src, size_t n, CUstream s) { return dtoh(dst, src, n, s, false, true); }
CUresult cuMemcpyDtoHAsync_v7000_ptsz(void* dst, CUdeviceptr_v2 src, size_t n, CUstream s) { return dtoh(dst, src, n, s, true, true); }

CUresult cuMemcpyDtoD_v3020(CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t n) { return dtod(dst, src, n, nullptr, false, false); }
CUresult cuMemcpyDtoD_v7000_ptds(CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t n) { return dtod(dst, src, n, nullptr, true, false); }
CUresult cuMemcpyDtoDAsync_v3020(CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t n, CUstream s) { return dtod(dst, src, n, s, false, true); }
CUresult cuMemcpyDtoDAsync_v7000_ptsz(CUdeviceptr_v2 dst, CUdeviceptr_v2 src, size_t n, CUstream s) { return dtod(dst, src, n, s, true, true); }

// ---- fills

CUresult cuMemsetD8_v3020(CUdeviceptr_v2 d, unsigned char v, size_t n) { return fill(d, v, 1, n, nullptr, false, false); }
CUresult cuMemsetD8_v7000_ptds(CUdeviceptr_v2 d, unsigned char v, size_t n) { return fill(d, v, 1, n, nullptr, true, false); }
CUresult cuMemsetD16_v3020(CUdeviceptr_v2 d, unsigned short v, size_t n) { return fill(d, v, 2, n, nullptr, false, false); }
CUresult cuMemsetD16_v7000_ptds(CUdeviceptr_v2 d, unsigned short v, size_t n) { return fill(d, v, 2, n, nullptr, true, false); }
CUresult cuMemsetD32_v3020(CUdeviceptr_v2 d, unsigned int v, size_t n) { return fill(d, v, 4, n, nullptr, false, false); }
CUresult cuMemsetD32_v7000_ptds(CUdeviceptr_v2 d, unsigned int v, size_t n) { return fill(d, v, 4, n, nullptr, true, false); }
CUresult cuMemsetD8Async_v3020(CUdeviceptr_v2 d, unsigned char v, size_t n, CUstream s) { return fill(d, v, 1, n, s, false, true); }
CUresult cuMemsetD8Async_v7000_ptsz(CUdeviceptr_v2 d, unsigned char v, size_t n, CUstream s) { return fill(d, v, 1, n, s, true, true); }
CUresult cuMemsetD16Async_v3020(CUdeviceptr_v2 d, unsigned short v, size_t n, CUstream s) { return fill(d, v, 2, n, s, false, true); }
CUresult cuMemsetD16Async_v7000_ptsz(CUdeviceptr_v2 d, unsigned short v, size_t n, CUstream s) { return fill(d, v, 2, n, s, true, true); }
CUresult cuMemsetD32Async_v3020(CUdeviceptr_v2 d, unsigned int v, size_t n, CUstream s) { return fill(d, v, 4, n, s, false, true); }
CUresult cuMemsetD32Async_v7000_ptsz(CUdeviceptr_v2 d, unsigned int v, size_t n, CUstream s) { return fill(d, v, 4, n, s, true, true); }

// ---- pointer attributes

namespace {

CUresult pointer_attribute(void* data, CUpointer_attribute attribute, CUdeviceptr p) {
  auto a = runtime::find_allocation(ptr(p));
  auto put_int = [&](int v) { *static_cast<int*>(data) = v; };
  auto put_uint = [&](unsigned v) { *static_cast<unsigned*>(data) = v; };
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_CONTEXT:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    *static_cast<CUcontext*>(data) = runtime::to_handle(a->context);
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    put_uint(a->kind == MemoryKind::Device || a->kind == MemoryKind::Managed ? CU_MEMORYTYPE_DEVICE
                                                                              : CU_MEMORYTYPE_HOST);
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
  case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    // One address space: both views are the address itself.
    *static_cast<void**>(data) = ptr(p);
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    put_int(1);
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    *static_cast<unsigned long long*>(data) = a->buffer_id;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    put_int(a->kind == MemoryKind::Managed);
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    put_int(a->context->device->ordinal());
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
  case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
  case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    put_int(0);
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    *static_cast<CUdeviceptr*>(data) = CUdeviceptr(a->base);
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    *static_cast<size_t*>(data) = a->size;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MAPPED:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    put_int(1);
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    *static_cast<unsigned long long*>(data) = 0;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    put_int(a->kind == MemoryKind::HostRegistered && (a->flags & CU_MEMHOSTREGISTER_READ_ONLY)
                ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ
                : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
    if (!a)
      return CUDA_ERROR_INVALID_VALUE;
    *static_cast<CUmemoryPool*>(data) = runtime::to_handle(runtime::pool_of(ptr(CUdeviceptr(a->base))));
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

} // namespace

CUresult cuPointerGetAttribute_v4000(void* data, CUpointer_attribute attribute, CUdeviceptr_v2 p) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!data)
    return CUDA_ERROR_INVALID_VALUE;
  return pointer_attribute(data, attribute, p);
}

CUresult cuPointerGetAttributes_v7000(unsigned int numAttributes, CUpointer_attribute* attributes, void** data,
                                      CUdeviceptr_v2 p) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (numAttributes == 0 || !attributes || !data)
    return CUDA_ERROR_INVALID_VALUE;
  bool known = runtime::find_allocation(ptr(p)).has_value();
  for (unsigned i = 0; i < numAttributes; ++i) {
    if (!data[i])
      continue;
    if (known) {
      if (CUresult r = pointer_attribute(data[i], attributes[i], p); r != CUDA_SUCCESS)
        return r;
      continue;
    }
    // Memory the driver does not know: zeroes (the documented answer), type 0, no context.
    switch (attributes[i]) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      *static_cast<CUcontext*>(data[i]) = nullptr;
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      *static_cast<void**>(data[i]) = nullptr;
      break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      *static_cast<unsigned long long*>(data[i]) = 0;
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data[i]) = -2;
      break;
    default:
      *static_cast<int*>(data[i]) = 0;
      break;
    }
  }
  return CUDA_SUCCESS;
}

} // namespace mimic::driver::impl
