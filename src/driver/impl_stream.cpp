// Streams, events, host functions and stream-ordered memory hints.
#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "runtime/graph.h"
#include "runtime/memory.h"
#include "runtime/stream.h"

namespace mimic::driver {

CUresult check_async_work(runtime::Stream* s) {
  if (CUresult sticky = s->context->sticky_error.load())
    return sticky;
  return runtime::capture_check_async(s);
}

} // namespace mimic::driver

namespace mimic::driver::impl {

namespace {

CUresult stream_of(CUstream h, bool per_thread, runtime::Stream*& s) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c); !c)
    return r;
  if (h && h != CU_STREAM_LEGACY && h != CU_STREAM_PER_THREAD) {
    // An explicit handle names its own context, which need not be current.
    s = runtime::find_stream(h);
    return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  }
  s = runtime::resolve_stream(h, c, per_thread);
  return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

runtime::GraphNode event_node(CUgraphNodeType type, runtime::Event* event) {
  runtime::GraphNode node;
  node.type = type;
  node.event = event;
  node.context = event->context;
  return node;
}

CUresult create(CUstream* ph, unsigned flags, int priority) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (!ph || (flags & ~unsigned(CU_STREAM_NON_BLOCKING)))
    return CUDA_ERROR_INVALID_VALUE;
  // Priorities outside [greatest, least] = [-5, 0] are clamped, as CUDA does.
  priority = priority < -5 ? -5 : priority > 0 ? 0 : priority;
  auto s = runtime::create_stream(c, flags, priority);
  if (!s)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *ph = reinterpret_cast<CUstream>(s.value());
  return CUDA_SUCCESS;
}

CUresult synchronize(CUstream h, bool per_thread) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s))
    return r;
  if (CUresult r = runtime::capture_check_sync(s))
    return r;
  return s->synchronize();
}

CUresult query(CUstream h, bool per_thread) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s))
    return r;
  if (CUresult sticky = s->context->sticky_error.load())
    return sticky;
  if (CUresult r = runtime::capture_check_sync(s))
    return r;
  return s->idle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult wait_event(CUstream h, CUevent e, unsigned flags, bool per_thread) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s))
    return r;
  if (CUresult r = check_async_work(s))
    return r;
  runtime::Event* ev = runtime::find_event(e);
  if (!ev)
    return CUDA_ERROR_INVALID_HANDLE;
  if (flags & ~unsigned(CU_EVENT_WAIT_EXTERNAL))
    return CUDA_ERROR_INVALID_VALUE;
  if ((flags & CU_EVENT_WAIT_EXTERNAL) && runtime::is_capturing(s))
    return runtime::capture_node(s, event_node(CU_GRAPH_NODE_TYPE_WAIT_EVENT, ev));
  return runtime::wait_event(s, ev);
}

CUresult record(CUevent e, CUstream h, unsigned flags, bool per_thread) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s))
    return r;
  if (CUresult r = check_async_work(s))
    return r;
  runtime::Event* ev = runtime::find_event(e);
  if (!ev)
    return CUDA_ERROR_INVALID_HANDLE;
  if (flags & ~unsigned(CU_EVENT_RECORD_EXTERNAL))
    return CUDA_ERROR_INVALID_VALUE;
  if (ev->context != s->context)
    return CUDA_ERROR_INVALID_HANDLE;
  // An external record during capture is a node of the graph, not a capture-time marker.
  if ((flags & CU_EVENT_RECORD_EXTERNAL) && runtime::is_capturing(s))
    return runtime::capture_node(s, event_node(CU_GRAPH_NODE_TYPE_EVENT_RECORD, ev));
  runtime::record_event(ev, s);
  return CUDA_SUCCESS;
}

CUresult host_func(CUstream h, CUhostFn fn, void* user, bool per_thread) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s))
    return r;
  if (CUresult r = check_async_work(s))
    return r;
  if (!fn)
    return CUDA_ERROR_INVALID_VALUE;
  auto work = [fn, user] {
    fn(user);
    return CUDA_SUCCESS;
  };
  if (runtime::is_capturing(s)) {
    runtime::GraphNode node;
    node.type = CU_GRAPH_NODE_TYPE_HOST;
    node.context = s->context;
    node.host = CUDA_HOST_NODE_PARAMS{fn, user};
    node.work = work;
    return runtime::capture_node(s, node);
  }
  runtime::submit(s, work);
  return CUDA_SUCCESS;
}

CUresult add_callback(CUstream h, CUstreamCallback cb, void* user, unsigned flags, bool per_thread) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s))
    return r;
  if (CUresult r = check_async_work(s))
    return r;
  if (!cb || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  CUstream handle = h;
  runtime::Stream* stream = s;
  runtime::submit(s, [cb, user, handle, stream] {
    // The callback learns of a failure earlier in the stream through `status`.
    CUresult status = stream->context->sticky_error.load();
    cb(handle, status, user);
    return CUDA_SUCCESS;
  });
  return CUDA_SUCCESS;
}

CUresult check_managed_range(CUdeviceptr p, size_t count) {
  auto a = runtime::find_allocation(reinterpret_cast<void*>(uintptr_t(p)), count);
  if (!a || a->kind != runtime::MemoryKind::Managed)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

} // namespace

CUresult cuStreamCreate_v2000(CUstream* ph, unsigned int Flags) { return create(ph, Flags, 0); }
CUresult cuStreamCreateWithPriority_v5050(CUstream* ph, unsigned int flags, int priority) {
  return create(ph, flags, priority);
}

CUresult cuStreamDestroy_v4000(CUstream h) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  runtime::Stream* s = runtime::find_stream(h);
  if (!s)
    return CUDA_ERROR_INVALID_HANDLE;
  return runtime::destroy_stream(s);
}

CUresult cuStreamSynchronize_v2000(CUstream h) { return synchronize(h, false); }
CUresult cuStreamSynchronize_v7000_ptsz(CUstream h) { return synchronize(h, true); }
CUresult cuStreamQuery_v2000(CUstream h) { return query(h, false); }
CUresult cuStreamQuery_v7000_ptsz(CUstream h) { return query(h, true); }
CUresult cuStreamWaitEvent_v3020(CUstream h, CUevent e, unsigned int f) { return wait_event(h, e, f, false); }
CUresult cuStreamWaitEvent_v7000_ptsz(CUstream h, CUevent e, unsigned int f) { return wait_event(h, e, f, true); }

// One query of a stream property, for both the legacy- and per-thread-default-stream forms.
template <typename T, typename Get> CUresult stream_query(CUstream h, bool per_thread, T* out, Get get) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s))
    return r;
  if (!out)
    return CUDA_ERROR_INVALID_VALUE;
  *out = get(*s);
  return CUDA_SUCCESS;
}

constexpr auto stream_flags = [](const runtime::Stream& s) { return s.flags; };
constexpr auto stream_priority = [](const runtime::Stream& s) { return s.priority; };
constexpr auto stream_context = [](const runtime::Stream& s) { return runtime::to_handle(s.context); };
constexpr auto stream_id = [](const runtime::Stream& s) { return s.id; };
constexpr auto stream_device = [](const runtime::Stream& s) { return CUdevice(s.context->device->ordinal()); };

CUresult cuStreamGetFlags_v5050(CUstream h, unsigned int* flags) { return stream_query(h, false, flags, stream_flags); }
CUresult cuStreamGetFlags_v7000_ptsz(CUstream h, unsigned int* flags) {
  return stream_query(h, true, flags, stream_flags);
}
CUresult cuStreamGetPriority_v5050(CUstream h, int* priority) {
  return stream_query(h, false, priority, stream_priority);
}
CUresult cuStreamGetPriority_v7000_ptsz(CUstream h, int* priority) {
  return stream_query(h, true, priority, stream_priority);
}
CUresult cuStreamGetCtx_v9020(CUstream h, CUcontext* pctx) { return stream_query(h, false, pctx, stream_context); }
CUresult cuStreamGetCtx_v9020_ptsz(CUstream h, CUcontext* pctx) { return stream_query(h, true, pctx, stream_context); }
CUresult cuStreamGetId_v12000(CUstream h, unsigned long long* id) { return stream_query(h, false, id, stream_id); }
CUresult cuStreamGetId_v12000_ptsz(CUstream h, unsigned long long* id) { return stream_query(h, true, id, stream_id); }
CUresult cuStreamGetDevice_v12080(CUstream h, CUdevice* device) {
  return stream_query(h, false, device, stream_device);
}

CUresult cuLaunchHostFunc_v10000(CUstream h, CUhostFn fn, void* user) { return host_func(h, fn, user, false); }
CUresult cuLaunchHostFunc_v10000_ptsz(CUstream h, CUhostFn fn, void* user) { return host_func(h, fn, user, true); }
CUresult cuStreamAddCallback_v5000(CUstream h, CUstreamCallback cb, void* user, unsigned int flags) {
  return add_callback(h, cb, user, flags, false);
}
CUresult cuStreamAddCallback_v7000_ptsz(CUstream h, CUstreamCallback cb, void* user, unsigned int flags) {
  return add_callback(h, cb, user, flags, true);
}

// ---- events

CUresult cuEventCreate_v2000(CUevent* ph, unsigned int Flags) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  constexpr unsigned kKnown = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
  if (!ph || (Flags & ~kKnown))
    return CUDA_ERROR_INVALID_VALUE;
  if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
    return CUDA_ERROR_INVALID_VALUE;
  auto e = runtime::create_event(c, Flags);
  if (!e)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *ph = reinterpret_cast<CUevent>(e.value());
  return CUDA_SUCCESS;
}

CUresult cuEventRecord_v2000(CUevent e, CUstream h) { return record(e, h, 0, false); }
CUresult cuEventRecord_v7000_ptsz(CUevent e, CUstream h) { return record(e, h, 0, true); }
CUresult cuEventRecordWithFlags_v11010(CUevent e, CUstream h, unsigned int f) { return record(e, h, f, false); }
CUresult cuEventRecordWithFlags_v11010_ptsz(CUevent e, CUstream h, unsigned int f) { return record(e, h, f, true); }

CUresult cuEventSynchronize_v2000(CUevent e) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  runtime::Event* ev = runtime::find_event(e);
  if (!ev)
    return CUDA_ERROR_INVALID_HANDLE;
  if (runtime::event_captured(ev))
    return CUDA_ERROR_CAPTURED_EVENT;
  return runtime::synchronize_event(ev);
}

CUresult cuEventQuery_v2000(CUevent e) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  runtime::Event* ev = runtime::find_event(e);
  if (!ev)
    return CUDA_ERROR_INVALID_HANDLE;
  if (runtime::event_captured(ev))
    return CUDA_ERROR_CAPTURED_EVENT;
  if (CUresult sticky = ev->context->sticky_error.load())
    return sticky;
  return runtime::query_event(ev);
}

CUresult cuEventElapsedTime_v2000(float* ms, CUevent start, CUevent end) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!ms)
    return CUDA_ERROR_INVALID_VALUE;
  runtime::Event* a = runtime::find_event(start);
  runtime::Event* b = runtime::find_event(end);
  if (!a || !b)
    return CUDA_ERROR_INVALID_HANDLE;
  if (runtime::event_captured(a) || runtime::event_captured(b))
    return CUDA_ERROR_CAPTURED_EVENT;
  return runtime::elapsed_ms(a, b, ms);
}
CUresult cuEventElapsedTime_v12080(float* ms, CUevent start, CUevent end) { return cuEventElapsedTime_v2000(ms, start, end); }

CUresult cuEventDestroy_v4000(CUevent e) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  runtime::Event* ev = runtime::find_event(e);
  if (!ev)
    return CUDA_ERROR_INVALID_HANDLE;
  return runtime::destroy_event(ev);
}

// ---- managed memory hints: validated, then nothing to do (one memory for host and device)

CUresult cuMemPrefetchAsync_v8000(CUdeviceptr_v2 p, size_t count, CUdevice_v1 dst, CUstream h) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, false, s))
    return r;
  if (dst != CU_DEVICE_CPU && !runtime::device(dst))
    return CUDA_ERROR_INVALID_DEVICE;
  return check_managed_range(p, count);
}

CUresult cuMemPrefetchAsync_v12020(CUdeviceptr_v2 p, size_t count, CUmemLocation_v1 location, unsigned int flags,
                                   CUstream h) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, false, s))
    return r;
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (location.type == CU_MEM_LOCATION_TYPE_DEVICE && !runtime::device(location.id))
    return CUDA_ERROR_INVALID_DEVICE;
  return check_managed_range(p, count);
}

CUresult cuMemAdvise_v8000(CUdeviceptr_v2 p, size_t count, CUmem_advise advice, CUdevice_v1 device) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
    return CUDA_ERROR_INVALID_VALUE;
  if (device != CU_DEVICE_CPU && !runtime::device(device))
    return CUDA_ERROR_INVALID_DEVICE;
  return check_managed_range(p, count);
}

CUresult cuMemAdvise_v12020(CUdeviceptr_v2 p, size_t count, CUmem_advise advice, CUmemLocation_v1 location) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
    return CUDA_ERROR_INVALID_VALUE;
  if (location.type == CU_MEM_LOCATION_TYPE_DEVICE && !runtime::device(location.id))
    return CUDA_ERROR_INVALID_DEVICE;
  return check_managed_range(p, count);
}

} // namespace mimic::driver::impl
