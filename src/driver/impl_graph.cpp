// CUDA graphs and stream capture: building graphs node by node or by capturing stream
// work, instantiating, launching and updating them. The runtime (runtime/graph.h) keeps
// the structure; this file validates arguments and builds each node's work.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "driver/impl_copy.h"
#include "runtime/graph.h"
#include "runtime/memory.h"
#include "runtime/module.h"
#include "runtime/stream.h"

namespace mimic::driver {

namespace {

void* ptr(CUdeviceptr p) {
  return reinterpret_cast<void*>(uintptr_t(p));
}

bool device_range_ok(CUdeviceptr p, size_t bytes) {
  return bytes == 0 || runtime::find_allocation(ptr(p), bytes).has_value();
}

} // namespace

runtime::GraphNode memcpy_node(runtime::Context* c, void* dst, const void* src, size_t bytes) {
  runtime::GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_MEMCPY;
  node.context = c;
  node.memcpy.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  node.memcpy.srcDevice = CUdeviceptr(reinterpret_cast<uintptr_t>(src));
  node.memcpy.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  node.memcpy.dstDevice = CUdeviceptr(reinterpret_cast<uintptr_t>(dst));
  node.memcpy.WidthInBytes = bytes;
  node.memcpy.Height = 1;
  node.memcpy.Depth = 1;
  runtime::Backend* backend = &c->device->backend();
  node.work = [backend, dst, src, bytes] {
    return backend->copy(dst, src, bytes) ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
  };
  return node;
}

namespace {

// Memory of graph allocation nodes (cuDeviceGetGraphMemAttribute).
std::atomic<uint64_t> graph_memory_current{0}, graph_memory_high{0};

// Allocates the memory of an allocation node now: it keeps its address for every launch
// and stays allocated until cuMemFree.
CUresult mem_alloc_node(const CUDA_MEM_ALLOC_NODE_PARAMS* p, runtime::GraphNode& node) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c)) return r;
  if (!p || p->bytesize == 0 || p->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      p->poolProps.handleTypes != CU_MEM_HANDLE_TYPE_NONE ||
      p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      p->poolProps.location.id != c->device->ordinal())
    return CUDA_ERROR_INVALID_VALUE;
  if (p->bytesize > c->device->properties().total_memory) return CUDA_ERROR_OUT_OF_MEMORY;
  auto memory = runtime::allocate(c, p->bytesize, runtime::MemoryKind::Device);
  if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
  node = runtime::GraphNode{};
  node.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  node.context = c;
  node.mem_alloc = *p;
  node.mem_alloc.accessDescs = nullptr;
  node.mem_alloc.accessDescCount = 0;
  node.mem_alloc.dptr = CUdeviceptr(reinterpret_cast<uintptr_t>(memory.value()));
  uint64_t now = graph_memory_current += p->bytesize;
  uint64_t high = graph_memory_high.load();
  while (now > high && !graph_memory_high.compare_exchange_weak(high, now)) {
  }
  return CUDA_SUCCESS;
}

CUresult mem_free_node(CUdeviceptr p, runtime::GraphNode& node) {
  auto a = runtime::find_allocation(ptr(p));
  if (!a || a->base != uintptr_t(p)) return CUDA_ERROR_INVALID_VALUE;
  node = runtime::GraphNode{};
  node.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
  node.context = a->context;
  node.mem_free = p;
  return CUDA_SUCCESS;
}

} // namespace

CUresult capture_mem_alloc(runtime::Stream* s, size_t bytes, CUdeviceptr* out) {
  if (!out || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  CUDA_MEM_ALLOC_NODE_PARAMS p{};
  p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.poolProps.location.id = s->context->device->ordinal();
  p.bytesize = bytes;
  runtime::GraphNode node;
  if (CUresult r = mem_alloc_node(&p, node)) return r;
  if (CUresult r = runtime::capture_node(s, node)) {
    runtime::release(ptr(node.mem_alloc.dptr), {runtime::MemoryKind::Device});
    return r;
  }
  *out = node.mem_alloc.dptr;
  return CUDA_SUCCESS;
}

CUresult capture_mem_free(runtime::Stream* s, CUdeviceptr p) {
  runtime::GraphNode node;
  if (CUresult r = mem_free_node(p, node)) return r;
  return runtime::capture_node(s, node);
}

runtime::GraphNode memset_node(runtime::Context* c, CUdeviceptr dst, unsigned value,
                               unsigned element, size_t count) {
  runtime::GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_MEMSET;
  node.context = c;
  node.memset = CUDA_MEMSET_NODE_PARAMS{dst, 0, value, element, count, 1};
  runtime::Backend* backend = &c->device->backend();
  node.work = [backend, dst, value, element, count] {
    return backend->fill(ptr(dst), value, element, count) ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
  };
  return node;
}

} // namespace mimic::driver

namespace mimic::driver::impl {

namespace {

using runtime::Graph;
using runtime::GraphExec;
using runtime::GraphNode;

// A handle that is not live is CUDA_ERROR_INVALID_HANDLE; a NULL one is
// CUDA_ERROR_INVALID_VALUE, as CUDA documents for the graph API.
CUresult graph_of(CUgraph h, Graph*& g) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  g = runtime::find_graph(h);
  return g ? CUDA_SUCCESS : h ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
}

CUresult node_of(CUgraphNode h, GraphNode*& n) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  n = runtime::find_graph_node(h);
  return n ? CUDA_SUCCESS : h ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
}

CUresult exec_of(CUgraphExec h, GraphExec*& e) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  e = runtime::find_graph_exec(h);
  return e ? CUDA_SUCCESS : h ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
}

CUresult stream_of(CUstream h, bool per_thread, runtime::Stream*& s) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c); !c) return r;
  if (h && h != CU_STREAM_LEGACY && h != CU_STREAM_PER_THREAD) {
    s = runtime::find_stream(h);
    return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  }
  s = runtime::resolve_stream(h, c, per_thread);
  return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult node_list(const CUgraphNode* handles, size_t count, std::vector<GraphNode*>& out) {
  if (count && !handles) return CUDA_ERROR_INVALID_VALUE;
  out.clear();
  for (size_t i = 0; i < count; ++i) {
    GraphNode* n = nullptr;
    if (CUresult r = node_of(handles[i], n)) return r;
    out.push_back(n);
  }
  return CUDA_SUCCESS;
}

// Edge data other than the default (a full dependency through every port) is not
// supported.
CUresult check_edge_data(const CUgraphEdgeData* data, size_t count) {
  if (!data) return CUDA_SUCCESS;
  static const CUgraphEdgeData kDefault{};
  for (size_t i = 0; i < count; ++i)
    if (std::memcmp(&data[i], &kDefault, sizeof kDefault) != 0) return CUDA_ERROR_NOT_SUPPORTED;
  return CUDA_SUCCESS;
}

CUresult add(CUgraphNode* out, CUgraph hg, const CUgraphNode* deps, size_t count,
             const GraphNode& prototype) {
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  std::vector<GraphNode*> list;
  if (CUresult r = node_list(deps, count, list)) return r;
  GraphNode* n = runtime::add_node(g, prototype, list);
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  *out = runtime::to_handle(n);
  return CUDA_SUCCESS;
}

// ---- node parameters: validated, with their work

CUresult host_node(const CUDA_HOST_NODE_PARAMS* p, GraphNode& node) {
  if (!p || !p->fn) return CUDA_ERROR_INVALID_VALUE;
  node.type = CU_GRAPH_NODE_TYPE_HOST;
  node.host = *p;
  CUhostFn fn = p->fn;
  void* user = p->userData;
  node.work = [fn, user] {
    fn(user);
    return CUDA_SUCCESS;
  };
  return CUDA_SUCCESS;
}

CUresult memset_params(const CUDA_MEMSET_NODE_PARAMS* p, CUcontext ctx, GraphNode& node) {
  runtime::Context* c = nullptr;
  if (CUresult r = context_or_current(ctx, c)) return r;
  if (!p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) || p->width == 0 ||
      p->height == 0)
    return CUDA_ERROR_INVALID_VALUE;
  size_t row = p->width * p->elementSize;
  size_t pitch = p->height > 1 ? p->pitch : row;
  if (pitch < row || p->dst % p->elementSize != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!device_range_ok(p->dst, pitch * (p->height - 1) + row)) return CUDA_ERROR_INVALID_VALUE;
  node = memset_node(c, p->dst, p->value, p->elementSize, p->width);
  node.memset = *p;
  if (p->height > 1) {
    runtime::Backend* backend = &c->device->backend();
    CUDA_MEMSET_NODE_PARAMS m = *p;
    node.work = [backend, m, pitch] {
      for (size_t y = 0; y < m.height; ++y)
        if (!backend->fill(ptr(m.dst + y * pitch), m.value, m.elementSize, m.width))
          return CUDA_ERROR_UNKNOWN;
      return CUDA_SUCCESS;
    };
  }
  return CUDA_SUCCESS;
}

CUresult memcpy_params(const CUDA_MEMCPY3D* p, CUcontext ctx, GraphNode& node) {
  runtime::Context* c = nullptr;
  if (CUresult r = context_or_current(ctx, c)) return r;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  // cuMemcpy3D's own checks and row-wise copy (any memory kind, arrays included).
  runtime::Work work;
  if (CUresult r = prepare_copy_3d(c, *p, work)) return r;
  node = GraphNode{};
  node.type = CU_GRAPH_NODE_TYPE_MEMCPY;
  node.context = c;
  node.memcpy = *p;
  node.work = std::move(work);
  return CUDA_SUCCESS;
}

CUresult kernel_params(const CUDA_KERNEL_NODE_PARAMS_v2* p, GraphNode& node) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  runtime::Context* c = nullptr;
  if (CUresult r = context_or_current(p->func ? nullptr : p->ctx, c)) return r;
  CUfunction fn = p->func ? p->func : reinterpret_cast<CUfunction>(p->kern);
  const unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
  const unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
  auto k = std::make_shared<runtime::KernelNodeParams>();
  if (CUresult r =
          prepare_launch(c, fn, grid, block, p->sharedMemBytes, p->kernelParams, p->extra, *k))
    return r;
  node.type = CU_GRAPH_NODE_TYPE_KERNEL;
  node.context = c;
  node.kernel = k;
  node.work = [k] { return run_launch(*k); };
  return CUDA_SUCCESS;
}

CUDA_KERNEL_NODE_PARAMS_v2 widen(const CUDA_KERNEL_NODE_PARAMS_v1* p) {
  CUDA_KERNEL_NODE_PARAMS_v2 v2{};
  v2.func = p->func;
  v2.gridDimX = p->gridDimX;
  v2.gridDimY = p->gridDimY;
  v2.gridDimZ = p->gridDimZ;
  v2.blockDimX = p->blockDimX;
  v2.blockDimY = p->blockDimY;
  v2.blockDimZ = p->blockDimZ;
  v2.sharedMemBytes = p->sharedMemBytes;
  v2.kernelParams = p->kernelParams;
  v2.extra = p->extra;
  return v2;
}

CUresult event_node(CUevent e, CUgraphNodeType type, GraphNode& node) {
  runtime::Event* ev = runtime::find_event(e);
  if (!ev) return CUDA_ERROR_INVALID_VALUE;
  node.type = type;
  node.event = ev;
  node.context = ev->context;
  return CUDA_SUCCESS;
}

CUresult typed_node(CUgraphNode h, CUgraphNodeType type, GraphNode*& n) {
  if (CUresult r = node_of(h, n)) return r;
  return n->type == type ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// Replaces a node's parameters, keeping its place in the graph.
void assign(GraphNode* n, GraphNode&& params) {
  params.graph = n->graph;
  params.dependencies = std::move(n->dependencies);
  params.child = n->child;
  params.cloned_from = n->cloned_from;
  params.attributes = std::move(n->attributes);
  *n = std::move(params);
}

CUresult exec_set(CUgraphExec he, CUgraphNode hn, CUresult built, const GraphNode& params) {
  GraphExec* e;
  if (CUresult r = exec_of(he, e)) return r;
  GraphNode* n;
  if (CUresult r = node_of(hn, n)) return r;
  if (built != CUDA_SUCCESS) return built;
  return runtime::set_exec_node(e, n, params);
}

// Copies up to *count items (all when out is null: the count only), CUDA's convention.
template <typename T> CUresult copy_out(const std::vector<T>& items, T* out, size_t* count) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (!out) {
    *count = items.size();
    return CUDA_SUCCESS;
  }
  size_t n = std::min(*count, items.size());
  std::copy(items.begin(), items.begin() + n, out);
  std::fill(out + n, out + *count, T{});
  *count = n;
  return CUDA_SUCCESS;
}

std::vector<CUgraphNode> handles(const std::vector<GraphNode*>& nodes) {
  std::vector<CUgraphNode> out;
  for (GraphNode* n : nodes)
    out.push_back(runtime::to_handle(n));
  return out;
}

CUresult node_neighbours(CUgraphNode h, bool dependencies, CUgraphNode* out,
                         CUgraphEdgeData* edge_data, size_t* count) {
  GraphNode* n;
  if (CUresult r = node_of(h, n)) return r;
  auto list = handles(dependencies ? n->dependencies : runtime::dependents(n));
  if (edge_data && out && count)
    std::fill(edge_data, edge_data + std::min(*count, list.size()), CUgraphEdgeData{});
  return copy_out(list, out, count);
}

CUresult edges(CUgraph hg, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* edge_data,
               size_t* count) {
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  if (!count || (!from != !to)) return CUDA_ERROR_INVALID_VALUE;
  std::vector<CUgraphNode> f, t;
  for (GraphNode* n : g->nodes)
    for (GraphNode* d : n->dependencies) {
      f.push_back(runtime::to_handle(d));
      t.push_back(runtime::to_handle(n));
    }
  if (!from) {
    *count = f.size();
    return CUDA_SUCCESS;
  }
  size_t n = *count;
  copy_out(f, from, &n);
  copy_out(t, to, count);
  if (edge_data) std::fill(edge_data, edge_data + *count, CUgraphEdgeData{});
  return CUDA_SUCCESS;
}

CUresult change_dependencies(CUgraph hg, const CUgraphNode* from, const CUgraphNode* to,
                             size_t count, bool adding) {
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  std::vector<GraphNode*> f, t;
  if (CUresult r = node_list(from, count, f)) return r;
  if (CUresult r = node_list(to, count, t)) return r;
  for (size_t i = 0; i < count; ++i)
    if (f[i]->graph != g || t[i]->graph != g) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i) {
    CUresult r =
        adding ? runtime::add_dependency(f[i], t[i]) : runtime::remove_dependency(f[i], t[i]);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

CUresult instantiate(CUgraphExec* out, CUgraph hg, unsigned long long flags,
                     CUgraphNode* error_node) {
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  constexpr unsigned long long kKnown =
      CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
      CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
  if (!out || (flags & ~kKnown)) return CUDA_ERROR_INVALID_VALUE;
  if (error_node) *error_node = nullptr;
  auto e = runtime::instantiate(g, flags);
  if (!e) return CUresult(e.error().code());
  e.value()->context = runtime::current_context();
  *out = runtime::to_handle(e.value());
  return CUDA_SUCCESS;
}

CUresult launch(CUgraphExec he, CUstream h, bool per_thread) {
  GraphExec* e;
  if (CUresult r = exec_of(he, e)) return r;
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s)) return r;
  if (CUresult r = check_async_work(s)) return r;
  return runtime::launch_graph(e, s);
}

CUresult upload(CUgraphExec he, CUstream h, bool per_thread) {
  GraphExec* e;
  if (CUresult r = exec_of(he, e)) return r;
  runtime::Stream* s;
  return stream_of(h, per_thread, s); // nothing to upload: one memory for host and device
}

// ---- capture

CUresult begin_capture(CUstream h, CUstreamCaptureMode mode, bool per_thread) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s)) return r;
  return runtime::begin_capture(s, mode);
}

CUresult end_capture(CUstream h, CUgraph* out, bool per_thread) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s)) return r;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  Graph* g = nullptr;
  CUresult r = runtime::end_capture(s, &g);
  *out = g ? runtime::to_handle(g) : nullptr;
  return r;
}

CUresult capture_info(CUstream h, bool per_thread, CUstreamCaptureStatus* status, cuuint64_t* id,
                      CUgraph* graph, const CUgraphNode** deps, const CUgraphEdgeData** edge_data,
                      size_t* count) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s)) return r;
  if (!status) return CUDA_ERROR_INVALID_VALUE;
  if (runtime::legacy_blocked_by_capture(s)) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  runtime::CaptureInfo info = runtime::capture_info(s);
  *status = info.status;
  bool active = info.status != CU_STREAM_CAPTURE_STATUS_NONE;
  if (id && active) *id = info.id;
  if (graph) *graph = active ? runtime::to_handle(info.graph) : nullptr;
  if (deps) *deps = active ? reinterpret_cast<const CUgraphNode*>(info.frontier->data()) : nullptr;
  if (edge_data) *edge_data = active ? info.edge_data : nullptr;
  if (count) *count = active ? info.frontier->size() : 0;
  return CUDA_SUCCESS;
}

CUresult update_capture(CUstream h, CUgraphNode* deps, const CUgraphEdgeData* edge_data,
                        size_t count, unsigned flags, bool per_thread) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s)) return r;
  if (CUresult r = check_edge_data(edge_data, count)) return r;
  std::vector<GraphNode*> list;
  if (CUresult r = node_list(deps, count, list)) return r;
  return runtime::update_capture_dependencies(s, list, flags);
}

CUresult is_capturing(CUstream h, CUstreamCaptureStatus* status, bool per_thread) {
  return capture_info(h, per_thread, status, nullptr, nullptr, nullptr, nullptr, nullptr);
}

// A conditional node: its handle and kind checked, its empty body graphs made and handed
// back through phGraph_out for the application to fill.
CUresult conditional_node(const CUDA_CONDITIONAL_NODE_PARAMS& p, GraphNode& node) {
  runtime::ConditionalHandle* h = runtime::find_conditional(p.handle);
  if (!h || !p.phGraph_out) return CUDA_ERROR_INVALID_VALUE;
  runtime::Context* c = nullptr;
  if (CUresult r = context_or_current(p.ctx, c); !c) return r;
  bool size_ok = p.type == CU_GRAPH_COND_TYPE_IF       ? p.size == 1 || p.size == 2
                 : p.type == CU_GRAPH_COND_TYPE_WHILE  ? p.size == 1
                 : p.type == CU_GRAPH_COND_TYPE_SWITCH ? p.size >= 1
                                                       : false;
  if (!size_ok) return CUDA_ERROR_INVALID_VALUE;
  node = GraphNode{};
  node.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  node.context = c;
  node.condition = h;
  node.condition_type = p.type;
  for (unsigned i = 0; i < p.size; ++i) {
    node.bodies.push_back(runtime::create_graph());
    p.phGraph_out[i] = runtime::to_handle(node.bodies.back());
  }
  return CUDA_SUCCESS;
}

// A node from the generic parameters of cuGraphAddNode / cuGraphNodeSetParams.
CUresult node_from_params(const CUgraphNodeParams* p, GraphNode& node) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  switch (p->type) {
  case CU_GRAPH_NODE_TYPE_EMPTY:
    node = GraphNode{};
    return CUDA_SUCCESS;
  case CU_GRAPH_NODE_TYPE_KERNEL: {
    static_assert(sizeof(CUDA_KERNEL_NODE_PARAMS_v3) == sizeof(CUDA_KERNEL_NODE_PARAMS_v2));
    CUDA_KERNEL_NODE_PARAMS_v2 v2;
    std::memcpy(&v2, &p->kernel, sizeof v2);
    return kernel_params(&v2, node);
  }
  case CU_GRAPH_NODE_TYPE_MEMCPY:
    if (p->memcpy.flags || p->memcpy.reserved) return CUDA_ERROR_INVALID_VALUE;
    return memcpy_params(&p->memcpy.copyParams, p->memcpy.copyCtx, node);
  case CU_GRAPH_NODE_TYPE_MEMSET: {
    const CUDA_MEMSET_NODE_PARAMS_v2& m = p->memset;
    CUDA_MEMSET_NODE_PARAMS v1{m.dst, m.pitch, m.value, m.elementSize, m.width, m.height};
    return memset_params(&v1, m.ctx, node);
  }
  case CU_GRAPH_NODE_TYPE_HOST: {
    CUDA_HOST_NODE_PARAMS v1{p->host.fn, p->host.userData};
    return host_node(&v1, node);
  }
  case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
    return event_node(p->eventRecord.event, CU_GRAPH_NODE_TYPE_EVENT_RECORD, node);
  case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
    return event_node(p->eventWait.event, CU_GRAPH_NODE_TYPE_WAIT_EVENT, node);
  case CU_GRAPH_NODE_TYPE_GRAPH: {
    Graph* child;
    if (CUresult r = graph_of(p->graph.graph, child)) return r;
    if (p->graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE) return CUDA_ERROR_NOT_SUPPORTED;
    node = GraphNode{};
    node.type = CU_GRAPH_NODE_TYPE_GRAPH;
    node.child = runtime::clone_graph(child);
    return CUDA_SUCCESS;
  }
  case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
    static_assert(sizeof(CUDA_MEM_ALLOC_NODE_PARAMS_v2) == sizeof(CUDA_MEM_ALLOC_NODE_PARAMS));
    CUDA_MEM_ALLOC_NODE_PARAMS v1;
    std::memcpy(&v1, &p->alloc, sizeof v1);
    return mem_alloc_node(&v1, node);
  }
  case CU_GRAPH_NODE_TYPE_MEM_FREE:
    return mem_free_node(p->free.dptr, node);
  case CU_GRAPH_NODE_TYPE_CONDITIONAL:
    return conditional_node(p->conditional, node);
  default:
    return CUDA_ERROR_NOT_SUPPORTED; // semaphore and batch-op nodes
  }
}

CUresult add_generic(CUgraphNode* out, CUgraph hg, const CUgraphNode* deps,
                     const CUgraphEdgeData* data, size_t count, CUgraphNodeParams* p) {
  if (CUresult r = check_edge_data(data, count)) return r;
  GraphNode node;
  if (CUresult r = node_from_params(p, node)) return r;
  CUresult r = add(out, hg, deps, count, node);
  if (r != CUDA_SUCCESS && node.child) runtime::destroy_graph(node.child);
  if (r != CUDA_SUCCESS)
    for (Graph* body : node.bodies)
      runtime::destroy_graph(body);
  if (node.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
    if (r != CUDA_SUCCESS)
      runtime::release(ptr(node.mem_alloc.dptr), {runtime::MemoryKind::Device});
    else
      p->alloc.dptr = node.mem_alloc.dptr;
  }
  return r;
}

CUresult begin_capture_to_graph(CUstream h, CUgraph hg, const CUgraphNode* deps,
                                const CUgraphEdgeData* data, size_t count, CUstreamCaptureMode mode,
                                bool per_thread) {
  runtime::Stream* s;
  if (CUresult r = stream_of(h, per_thread, s)) return r;
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  if (CUresult r = check_edge_data(data, count)) return r;
  std::vector<GraphNode*> list;
  if (CUresult r = node_list(deps, count, list)) return r;
  return runtime::begin_capture(s, mode, g, list);
}

} // namespace

// ---- stream capture

CUresult cuStreamBeginCapture_v10000(CUstream h) {
  return begin_capture(h, CU_STREAM_CAPTURE_MODE_GLOBAL, false);
}
CUresult cuStreamBeginCapture_v10000_ptsz(CUstream h) {
  return begin_capture(h, CU_STREAM_CAPTURE_MODE_GLOBAL, true);
}
CUresult cuStreamBeginCapture_v10010(CUstream h, CUstreamCaptureMode mode) {
  return begin_capture(h, mode, false);
}
CUresult cuStreamBeginCapture_v10010_ptsz(CUstream h, CUstreamCaptureMode mode) {
  return begin_capture(h, mode, true);
}
CUresult cuStreamEndCapture_v10000(CUstream h, CUgraph* g) {
  return end_capture(h, g, false);
}
CUresult cuStreamEndCapture_v10000_ptsz(CUstream h, CUgraph* g) {
  return end_capture(h, g, true);
}
CUresult cuStreamIsCapturing_v10000(CUstream h, CUstreamCaptureStatus* s) {
  return is_capturing(h, s, false);
}
CUresult cuStreamIsCapturing_v10000_ptsz(CUstream h, CUstreamCaptureStatus* s) {
  return is_capturing(h, s, true);
}

CUresult cuStreamGetCaptureInfo_v10010(CUstream h, CUstreamCaptureStatus* status, cuuint64_t* id) {
  return capture_info(h, false, status, id, nullptr, nullptr, nullptr, nullptr);
}
CUresult cuStreamGetCaptureInfo_v10010_ptsz(CUstream h, CUstreamCaptureStatus* status,
                                            cuuint64_t* id) {
  return capture_info(h, true, status, id, nullptr, nullptr, nullptr, nullptr);
}
CUresult cuStreamGetCaptureInfo_v11030(CUstream h, CUstreamCaptureStatus* status, cuuint64_t* id,
                                       CUgraph* graph, const CUgraphNode** deps, size_t* count) {
  return capture_info(h, false, status, id, graph, deps, nullptr, count);
}
CUresult cuStreamGetCaptureInfo_v11030_ptsz(CUstream h, CUstreamCaptureStatus* status,
                                            cuuint64_t* id, CUgraph* graph,
                                            const CUgraphNode** deps, size_t* count) {
  return capture_info(h, true, status, id, graph, deps, nullptr, count);
}
CUresult cuStreamGetCaptureInfo_v12030(CUstream h, CUstreamCaptureStatus* status, cuuint64_t* id,
                                       CUgraph* graph, const CUgraphNode** deps,
                                       const CUgraphEdgeData** edge_data, size_t* count) {
  return capture_info(h, false, status, id, graph, deps, edge_data, count);
}
CUresult cuStreamGetCaptureInfo_v12030_ptsz(CUstream h, CUstreamCaptureStatus* status,
                                            cuuint64_t* id, CUgraph* graph,
                                            const CUgraphNode** deps,
                                            const CUgraphEdgeData** edge_data, size_t* count) {
  return capture_info(h, true, status, id, graph, deps, edge_data, count);
}

CUresult cuStreamUpdateCaptureDependencies_v11030(CUstream h, CUgraphNode* deps, size_t count,
                                                  unsigned int flags) {
  return update_capture(h, deps, nullptr, count, flags, false);
}
CUresult cuStreamUpdateCaptureDependencies_v11030_ptsz(CUstream h, CUgraphNode* deps, size_t count,
                                                       unsigned int flags) {
  return update_capture(h, deps, nullptr, count, flags, true);
}
CUresult cuStreamUpdateCaptureDependencies_v12030(CUstream h, CUgraphNode* deps,
                                                  const CUgraphEdgeData* edge_data, size_t count,
                                                  unsigned int flags) {
  return update_capture(h, deps, edge_data, count, flags, false);
}
CUresult cuStreamUpdateCaptureDependencies_v12030_ptsz(CUstream h, CUgraphNode* deps,
                                                       const CUgraphEdgeData* edge_data,
                                                       size_t count, unsigned int flags) {
  return update_capture(h, deps, edge_data, count, flags, true);
}

CUresult cuThreadExchangeStreamCaptureMode_v10010(CUstreamCaptureMode* mode) {
  if (!mode ||
      (*mode != CU_STREAM_CAPTURE_MODE_GLOBAL && *mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
       *mode != CU_STREAM_CAPTURE_MODE_RELAXED))
    return CUDA_ERROR_INVALID_VALUE;
  *mode = runtime::exchange_capture_mode(*mode);
  return CUDA_SUCCESS;
}

// ---- graphs and nodes

CUresult cuGraphCreate_v10000(CUgraph* out, unsigned int flags) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!out || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  *out = runtime::to_handle(runtime::create_graph());
  return CUDA_SUCCESS;
}

CUresult cuGraphDestroy_v10000(CUgraph hg) {
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  return runtime::destroy_graph(g);
}

CUresult cuGraphAddEmptyNode_v10000(CUgraphNode* out, CUgraph g, const CUgraphNode* deps,
                                    size_t n) {
  return add(out, g, deps, n, GraphNode{});
}

CUresult cuGraphAddHostNode_v10000(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                                   const CUDA_HOST_NODE_PARAMS* p) {
  GraphNode node;
  if (CUresult r = host_node(p, node)) return r;
  return add(out, g, deps, n, node);
}

CUresult cuGraphAddMemsetNode_v10000(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                                     const CUDA_MEMSET_NODE_PARAMS* p, CUcontext ctx) {
  GraphNode node;
  if (CUresult r = memset_params(p, ctx, node)) return r;
  return add(out, g, deps, n, node);
}

CUresult cuGraphAddMemcpyNode_v10000(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                                     const CUDA_MEMCPY3D* p, CUcontext ctx) {
  GraphNode node;
  if (CUresult r = memcpy_params(p, ctx, node)) return r;
  return add(out, g, deps, n, node);
}

CUresult cuGraphAddKernelNode_v12000(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                                     const CUDA_KERNEL_NODE_PARAMS_v2* p) {
  GraphNode node;
  if (CUresult r = kernel_params(p, node)) return r;
  return add(out, g, deps, n, node);
}

CUresult cuGraphAddKernelNode_v10000(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                                     const CUDA_KERNEL_NODE_PARAMS_v1* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  CUDA_KERNEL_NODE_PARAMS_v2 v2 = widen(p);
  return cuGraphAddKernelNode_v12000(out, g, deps, n, &v2);
}

CUresult cuGraphAddEventRecordNode_v11010(CUgraphNode* out, CUgraph g, const CUgraphNode* deps,
                                          size_t n, CUevent e) {
  GraphNode node;
  if (CUresult r = event_node(e, CU_GRAPH_NODE_TYPE_EVENT_RECORD, node)) return r;
  return add(out, g, deps, n, node);
}

CUresult cuGraphAddEventWaitNode_v11010(CUgraphNode* out, CUgraph g, const CUgraphNode* deps,
                                        size_t n, CUevent e) {
  GraphNode node;
  if (CUresult r = event_node(e, CU_GRAPH_NODE_TYPE_WAIT_EVENT, node)) return r;
  return add(out, g, deps, n, node);
}

CUresult cuGraphAddChildGraphNode_v10000(CUgraphNode* out, CUgraph g, const CUgraphNode* deps,
                                         size_t n, CUgraph child) {
  Graph* c;
  if (CUresult r = graph_of(child, c)) return r;
  if (runtime::find_graph(g) == c) return CUDA_ERROR_INVALID_VALUE;
  GraphNode node;
  node.type = CU_GRAPH_NODE_TYPE_GRAPH;
  node.child = runtime::clone_graph(c);
  CUresult r = add(out, g, deps, n, node);
  if (r != CUDA_SUCCESS) runtime::destroy_graph(node.child);
  return r;
}

CUresult cuGraphChildGraphNodeGetGraph_v10000(CUgraphNode h, CUgraph* out) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_GRAPH, n)) return r;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (!n->child) return CUDA_ERROR_NOT_SUPPORTED; // a captured cuGraphLaunch
  *out = runtime::to_handle(n->child);
  return CUDA_SUCCESS;
}

CUresult cuGraphNodeGetType_v10000(CUgraphNode h, CUgraphNodeType* type) {
  GraphNode* n;
  if (CUresult r = node_of(h, n)) return r;
  if (!type) return CUDA_ERROR_INVALID_VALUE;
  *type = n->type;
  return CUDA_SUCCESS;
}

CUresult cuGraphDestroyNode_v10000(CUgraphNode h) {
  GraphNode* n;
  if (CUresult r = node_of(h, n)) return r;
  return runtime::destroy_node(n);
}

CUresult cuGraphHostNodeGetParams_v10000(CUgraphNode h, CUDA_HOST_NODE_PARAMS* p) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_HOST, n)) return r;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  *p = n->host;
  return CUDA_SUCCESS;
}

CUresult cuGraphHostNodeSetParams_v10000(CUgraphNode h, const CUDA_HOST_NODE_PARAMS* p) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_HOST, n)) return r;
  GraphNode node;
  if (CUresult r = host_node(p, node)) return r;
  assign(n, std::move(node));
  return CUDA_SUCCESS;
}

CUresult cuGraphMemsetNodeGetParams_v10000(CUgraphNode h, CUDA_MEMSET_NODE_PARAMS* p) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_MEMSET, n)) return r;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  *p = n->memset;
  return CUDA_SUCCESS;
}

CUresult cuGraphMemsetNodeSetParams_v10000(CUgraphNode h, const CUDA_MEMSET_NODE_PARAMS* p) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_MEMSET, n)) return r;
  GraphNode node;
  if (CUresult r = memset_params(p, runtime::to_handle(n->context), node)) return r;
  assign(n, std::move(node));
  return CUDA_SUCCESS;
}

CUresult cuGraphMemcpyNodeGetParams_v10000(CUgraphNode h, CUDA_MEMCPY3D* p) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_MEMCPY, n)) return r;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  *p = n->memcpy;
  return CUDA_SUCCESS;
}

CUresult cuGraphMemcpyNodeSetParams_v10000(CUgraphNode h, const CUDA_MEMCPY3D* p) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_MEMCPY, n)) return r;
  GraphNode node;
  if (CUresult r = memcpy_params(p, runtime::to_handle(n->context), node)) return r;
  assign(n, std::move(node));
  return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeGetParams_v12000(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS_v2* p) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_KERNEL, n)) return r;
  if (!p || !n->kernel) return CUDA_ERROR_INVALID_VALUE;
  const runtime::KernelNodeParams& k = *n->kernel;
  *p = CUDA_KERNEL_NODE_PARAMS_v2{};
  // A launch through a CUkernel reports it as `kern` (the CUDA runtime maps it back to
  // its host stub), one through a CUfunction as `func`.
  if (runtime::find_kernel(reinterpret_cast<CUkernel>(k.function)))
    p->kern = reinterpret_cast<CUkernel>(k.function);
  else
    p->func = k.function;
  p->gridDimX = k.grid[0];
  p->gridDimY = k.grid[1];
  p->gridDimZ = k.grid[2];
  p->blockDimX = k.block[0];
  p->blockDimY = k.block[1];
  p->blockDimZ = k.block[2];
  p->sharedMemBytes = k.shared_bytes;
  p->kernelParams = const_cast<void**>(k.arg_pointers.data());
  p->ctx = runtime::to_handle(k.context);
  return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeGetParams_v10000(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS_v1* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  CUDA_KERNEL_NODE_PARAMS_v2 v2;
  if (CUresult r = cuGraphKernelNodeGetParams_v12000(h, &v2)) return r;
  if (!v2.func && v2.kern) { // v1 has no `kern`: name the kernel's function in the context
    auto f = runtime::resolve_function(reinterpret_cast<CUfunction>(v2.kern),
                                       runtime::find_context(v2.ctx));
    if (f) v2.func = reinterpret_cast<CUfunction>(f.value());
  }
  std::memcpy(p, &v2, sizeof *p); // v1 is v2's prefix
  return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeSetParams_v12000(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS_v2* p) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_KERNEL, n)) return r;
  GraphNode node;
  if (CUresult r = kernel_params(p, node)) return r;
  assign(n, std::move(node));
  return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeSetParams_v10000(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS_v1* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  CUDA_KERNEL_NODE_PARAMS_v2 v2 = widen(p);
  return cuGraphKernelNodeSetParams_v12000(h, &v2);
}

CUresult cuGraphEventRecordNodeGetEvent_v11010(CUgraphNode h, CUevent* out) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_EVENT_RECORD, n)) return r;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  *out = reinterpret_cast<CUevent>(n->event);
  return CUDA_SUCCESS;
}

CUresult cuGraphEventRecordNodeSetEvent_v11010(CUgraphNode h, CUevent e) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_EVENT_RECORD, n)) return r;
  GraphNode node;
  if (CUresult r = event_node(e, n->type, node)) return r;
  assign(n, std::move(node));
  return CUDA_SUCCESS;
}

CUresult cuGraphEventWaitNodeGetEvent_v11010(CUgraphNode h, CUevent* out) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_WAIT_EVENT, n)) return r;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  *out = reinterpret_cast<CUevent>(n->event);
  return CUDA_SUCCESS;
}

CUresult cuGraphEventWaitNodeSetEvent_v11010(CUgraphNode h, CUevent e) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_WAIT_EVENT, n)) return r;
  GraphNode node;
  if (CUresult r = event_node(e, n->type, node)) return r;
  assign(n, std::move(node));
  return CUDA_SUCCESS;
}

// ---- structure

CUresult cuGraphGetNodes_v10000(CUgraph hg, CUgraphNode* nodes, size_t* count) {
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  return copy_out(handles(g->nodes), nodes, count);
}

CUresult cuGraphGetRootNodes_v10000(CUgraph hg, CUgraphNode* nodes, size_t* count) {
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  std::vector<GraphNode*> roots;
  for (GraphNode* n : g->nodes)
    if (n->dependencies.empty()) roots.push_back(n);
  return copy_out(handles(roots), nodes, count);
}

CUresult cuGraphGetEdges_v10000(CUgraph g, CUgraphNode* from, CUgraphNode* to, size_t* count) {
  return edges(g, from, to, nullptr, count);
}
CUresult cuGraphGetEdges_v12030(CUgraph g, CUgraphNode* from, CUgraphNode* to,
                                CUgraphEdgeData* data, size_t* count) {
  return edges(g, from, to, data, count);
}

CUresult cuGraphNodeGetDependencies_v10000(CUgraphNode h, CUgraphNode* out, size_t* count) {
  return node_neighbours(h, true, out, nullptr, count);
}
CUresult cuGraphNodeGetDependencies_v12030(CUgraphNode h, CUgraphNode* out, CUgraphEdgeData* data,
                                           size_t* count) {
  return node_neighbours(h, true, out, data, count);
}
CUresult cuGraphNodeGetDependentNodes_v10000(CUgraphNode h, CUgraphNode* out, size_t* count) {
  return node_neighbours(h, false, out, nullptr, count);
}
CUresult cuGraphNodeGetDependentNodes_v12030(CUgraphNode h, CUgraphNode* out, CUgraphEdgeData* data,
                                             size_t* count) {
  return node_neighbours(h, false, out, data, count);
}

CUresult cuGraphAddDependencies_v10000(CUgraph g, const CUgraphNode* from, const CUgraphNode* to,
                                       size_t n) {
  return change_dependencies(g, from, to, n, true);
}
CUresult cuGraphAddDependencies_v12030(CUgraph g, const CUgraphNode* from, const CUgraphNode* to,
                                       const CUgraphEdgeData* data, size_t n) {
  if (CUresult r = check_edge_data(data, n)) return r;
  return change_dependencies(g, from, to, n, true);
}
CUresult cuGraphRemoveDependencies_v10000(CUgraph g, const CUgraphNode* from, const CUgraphNode* to,
                                          size_t n) {
  return change_dependencies(g, from, to, n, false);
}
CUresult cuGraphRemoveDependencies_v12030(CUgraph g, const CUgraphNode* from, const CUgraphNode* to,
                                          const CUgraphEdgeData* data, size_t n) {
  if (CUresult r = check_edge_data(data, n)) return r;
  return change_dependencies(g, from, to, n, false);
}

CUresult cuGraphClone_v10000(CUgraph* out, CUgraph original) {
  Graph* g;
  if (CUresult r = graph_of(original, g)) return r;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  *out = runtime::to_handle(runtime::clone_graph(g));
  return CUDA_SUCCESS;
}

CUresult cuGraphNodeFindInClone_v10000(CUgraphNode* out, CUgraphNode original, CUgraph clone) {
  Graph* g;
  if (CUresult r = graph_of(clone, g)) return r;
  GraphNode* n;
  if (CUresult r = node_of(original, n)) return r;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  GraphNode* found = runtime::find_in_clone(n, g);
  if (!found) return CUDA_ERROR_INVALID_VALUE;
  *out = runtime::to_handle(found);
  return CUDA_SUCCESS;
}

// ---- executable graphs

CUresult cuGraphInstantiate_v10000(CUgraphExec* out, CUgraph g, CUgraphNode* error_node, char* log,
                                   size_t size) {
  if (log && size) log[0] = '\0';
  return instantiate(out, g, 0, error_node);
}
CUresult cuGraphInstantiate_v11000(CUgraphExec* out, CUgraph g, CUgraphNode* error_node, char* log,
                                   size_t size) {
  return cuGraphInstantiate_v10000(out, g, error_node, log, size);
}
CUresult cuGraphInstantiateWithFlags_v11040(CUgraphExec* out, CUgraph g, unsigned long long flags) {
  return instantiate(out, g, flags, nullptr);
}

CUresult cuGraphInstantiateWithParams_v12000(CUgraphExec* out, CUgraph g,
                                             CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = instantiate(out, g, p->flags, &p->hErrNode_out);
  p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
  return r;
}
CUresult cuGraphInstantiateWithParams_v12000_ptsz(CUgraphExec* out, CUgraph g,
                                                  CUDA_GRAPH_INSTANTIATE_PARAMS* p) {
  return cuGraphInstantiateWithParams_v12000(out, g, p);
}

CUresult cuGraphExecGetFlags_v12000(CUgraphExec he, cuuint64_t* flags) {
  GraphExec* e;
  if (CUresult r = exec_of(he, e)) return r;
  if (!flags) return CUDA_ERROR_INVALID_VALUE;
  *flags = e->flags;
  return CUDA_SUCCESS;
}

CUresult cuGraphLaunch_v10000(CUgraphExec e, CUstream s) {
  return launch(e, s, false);
}
CUresult cuGraphLaunch_v10000_ptsz(CUgraphExec e, CUstream s) {
  return launch(e, s, true);
}
CUresult cuGraphUpload_v11010(CUgraphExec e, CUstream s) {
  return upload(e, s, false);
}
CUresult cuGraphUpload_v11010_ptsz(CUgraphExec e, CUstream s) {
  return upload(e, s, true);
}

CUresult cuGraphExecDestroy_v10000(CUgraphExec he) {
  GraphExec* e;
  if (CUresult r = exec_of(he, e)) return r;
  return runtime::destroy_exec(e);
}

CUresult cuGraphExecUpdate_v12000(CUgraphExec he, CUgraph hg, CUgraphExecUpdateResultInfo* info) {
  GraphExec* e;
  if (CUresult r = exec_of(he, e)) return r;
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  if (!info) return CUDA_ERROR_INVALID_VALUE;
  CUgraphExecUpdateResult result;
  GraphNode* error_node = nullptr;
  CUresult r = runtime::update_exec(e, g, result, error_node);
  info->result = result;
  info->errorNode = error_node ? runtime::to_handle(error_node) : nullptr;
  info->errorFromNode = nullptr;
  return r;
}

CUresult cuGraphExecUpdate_v10020(CUgraphExec he, CUgraph hg, CUgraphNode* error_node,
                                  CUgraphExecUpdateResult* result) {
  if (!error_node || !result) return CUDA_ERROR_INVALID_VALUE;
  CUgraphExecUpdateResultInfo info{};
  CUresult r = cuGraphExecUpdate_v12000(he, hg, &info);
  *result = info.result;
  *error_node = info.errorNode;
  return r;
}

CUresult cuGraphExecHostNodeSetParams_v10020(CUgraphExec e, CUgraphNode n,
                                             const CUDA_HOST_NODE_PARAMS* p) {
  GraphNode node;
  CUresult built = host_node(p, node);
  return exec_set(e, n, built, node);
}

CUresult cuGraphExecMemsetNodeSetParams_v10020(CUgraphExec e, CUgraphNode n,
                                               const CUDA_MEMSET_NODE_PARAMS* p, CUcontext ctx) {
  GraphNode node;
  CUresult built = memset_params(p, ctx, node);
  return exec_set(e, n, built, node);
}

CUresult cuGraphExecMemcpyNodeSetParams_v10020(CUgraphExec e, CUgraphNode n, const CUDA_MEMCPY3D* p,
                                               CUcontext ctx) {
  GraphNode node;
  CUresult built = memcpy_params(p, ctx, node);
  return exec_set(e, n, built, node);
}

CUresult cuGraphExecKernelNodeSetParams_v12000(CUgraphExec e, CUgraphNode n,
                                               const CUDA_KERNEL_NODE_PARAMS_v2* p) {
  GraphNode node;
  CUresult built = kernel_params(p, node);
  return exec_set(e, n, built, node);
}

CUresult cuGraphExecKernelNodeSetParams_v10010(CUgraphExec e, CUgraphNode n,
                                               const CUDA_KERNEL_NODE_PARAMS_v1* p) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  CUDA_KERNEL_NODE_PARAMS_v2 v2 = widen(p);
  return cuGraphExecKernelNodeSetParams_v12000(e, n, &v2);
}

CUresult cuGraphExecChildGraphNodeSetParams_v11010(CUgraphExec he, CUgraphNode hn, CUgraph child) {
  GraphExec* e;
  if (CUresult r = exec_of(he, e)) return r;
  GraphNode* n;
  if (CUresult r = node_of(hn, n)) return r;
  Graph* g;
  if (CUresult r = graph_of(child, g)) return r;
  return runtime::set_exec_child_graph(e, n, g);
}

CUresult cuGraphExecEventRecordNodeSetEvent_v11010(CUgraphExec e, CUgraphNode n, CUevent ev) {
  GraphNode node;
  CUresult built = event_node(ev, CU_GRAPH_NODE_TYPE_EVENT_RECORD, node);
  return exec_set(e, n, built, node);
}

CUresult cuGraphExecEventWaitNodeSetEvent_v11010(CUgraphExec e, CUgraphNode n, CUevent ev) {
  GraphNode node;
  CUresult built = event_node(ev, CU_GRAPH_NODE_TYPE_WAIT_EVENT, node);
  return exec_set(e, n, built, node);
}

// ---- generic node parameters, node enabling, debugging

CUresult cuGraphConditionalHandleCreate_v12030(CUgraphConditionalHandle* out, CUgraph hg, CUcontext ctx,
                                               unsigned int defaultLaunchValue, unsigned int flags) {
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  runtime::Context* c = nullptr;
  if (CUresult r = context_or_current(ctx, c); !c) return r;
  if (!out || (flags & ~unsigned(CU_GRAPH_COND_ASSIGN_DEFAULT))) return CUDA_ERROR_INVALID_VALUE;
  *out = runtime::to_handle(runtime::create_conditional(g, c, defaultLaunchValue, flags));
  return CUDA_SUCCESS;
}

CUresult cuGraphAddNode_v12020(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t n,
                               CUgraphNodeParams* p) {
  return add_generic(out, g, deps, nullptr, n, p);
}
CUresult cuGraphAddNode_v12030(CUgraphNode* out, CUgraph g, const CUgraphNode* deps,
                               const CUgraphEdgeData* data, size_t n, CUgraphNodeParams* p) {
  return add_generic(out, g, deps, data, n, p);
}

CUresult cuGraphNodeSetParams_v12020(CUgraphNode h, CUgraphNodeParams* p) {
  GraphNode* n;
  if (CUresult r = node_of(h, n)) return r;
  if (!p || p->type != n->type) return CUDA_ERROR_INVALID_VALUE;
  if (p->type == CU_GRAPH_NODE_TYPE_GRAPH || p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC ||
      p->type == CU_GRAPH_NODE_TYPE_MEM_FREE || p->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
    return CUDA_ERROR_NOT_SUPPORTED;
  GraphNode node;
  if (CUresult r = node_from_params(p, node)) return r;
  assign(n, std::move(node));
  return CUDA_SUCCESS;
}

CUresult cuGraphExecNodeSetParams_v12020(CUgraphExec e, CUgraphNode n, CUgraphNodeParams* p) {
  if (p && (p->type == CU_GRAPH_NODE_TYPE_GRAPH || p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC ||
            p->type == CU_GRAPH_NODE_TYPE_MEM_FREE || p->type == CU_GRAPH_NODE_TYPE_CONDITIONAL))
    return CUDA_ERROR_NOT_SUPPORTED;
  GraphNode node;
  CUresult built = node_from_params(p, node);
  return exec_set(e, n, built, node);
}

CUresult cuStreamBeginCaptureToGraph_v12030(CUstream h, CUgraph g, const CUgraphNode* deps,
                                            const CUgraphEdgeData* data, size_t n,
                                            CUstreamCaptureMode mode) {
  return begin_capture_to_graph(h, g, deps, data, n, mode, false);
}
CUresult cuStreamBeginCaptureToGraph_v12030_ptsz(CUstream h, CUgraph g, const CUgraphNode* deps,
                                                 const CUgraphEdgeData* data, size_t n,
                                                 CUstreamCaptureMode mode) {
  return begin_capture_to_graph(h, g, deps, data, n, mode, true);
}

CUresult cuGraphNodeSetEnabled_v11060(CUgraphExec he, CUgraphNode hn, unsigned int enabled) {
  GraphExec* e;
  if (CUresult r = exec_of(he, e)) return r;
  GraphNode* n;
  if (CUresult r = node_of(hn, n)) return r;
  // CUDA lets only kernel, memcpy and memset nodes be disabled.
  if (n->type != CU_GRAPH_NODE_TYPE_KERNEL && n->type != CU_GRAPH_NODE_TYPE_MEMCPY &&
      n->type != CU_GRAPH_NODE_TYPE_MEMSET)
    return CUDA_ERROR_INVALID_VALUE;
  return runtime::set_exec_node_enabled(e, n, enabled != 0);
}

CUresult cuGraphNodeGetEnabled_v11060(CUgraphExec he, CUgraphNode hn, unsigned int* enabled) {
  GraphExec* e;
  if (CUresult r = exec_of(he, e)) return r;
  GraphNode* n;
  if (CUresult r = node_of(hn, n)) return r;
  if (!enabled) return CUDA_ERROR_INVALID_VALUE;
  bool on = true;
  if (CUresult r = runtime::exec_node_enabled(e, n, on)) return r;
  *enabled = on ? 1 : 0;
  return CUDA_SUCCESS;
}

namespace {

const char* type_name(CUgraphNodeType type) {
  switch (type) {
  case CU_GRAPH_NODE_TYPE_KERNEL:
    return "kernel";
  case CU_GRAPH_NODE_TYPE_MEMCPY:
    return "memcpy";
  case CU_GRAPH_NODE_TYPE_MEMSET:
    return "memset";
  case CU_GRAPH_NODE_TYPE_HOST:
    return "host";
  case CU_GRAPH_NODE_TYPE_GRAPH:
    return "graph";
  case CU_GRAPH_NODE_TYPE_EMPTY:
    return "empty";
  case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
    return "event wait";
  case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
    return "event record";
  default:
    return "node";
  }
}

void print_dot(FILE* out, const Graph* g, const std::string& prefix) {
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const GraphNode* n = g->nodes[i];
    std::string id = prefix + std::to_string(i);
    if (n->child) {
      fprintf(out, "subgraph cluster_%s {\n label=\"graph node %s\";\n", id.c_str(), id.c_str());
      print_dot(out, n->child, id + "_");
      fprintf(out, "}\n");
    }
    fprintf(out, "\"%s\" [label=\"%s %s\"];\n", id.c_str(), type_name(n->type), id.c_str());
    for (const GraphNode* d : n->dependencies) {
      size_t j = size_t(std::find(g->nodes.begin(), g->nodes.end(), d) - g->nodes.begin());
      fprintf(out, "\"%s%zu\" -> \"%s\";\n", prefix.c_str(), j, id.c_str());
    }
  }
}

} // namespace

CUresult cuGraphDebugDotPrint_v11030(CUgraph hg, const char* path, unsigned int flags) {
  (void)flags; // every level of detail prints the structure
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  if (!path) return CUDA_ERROR_INVALID_VALUE;
  FILE* out = std::fopen(path, "w");
  if (!out) return CUDA_ERROR_OPERATING_SYSTEM;
  fprintf(out, "digraph mimic_graph {\n");
  print_dot(out, g, "n");
  fprintf(out, "}\n");
  return std::fclose(out) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
}

// ---- kernel node attributes

CUresult cuGraphKernelNodeGetAttribute_v11000(CUgraphNode h, CUkernelNodeAttrID attr,
                                              CUkernelNodeAttrValue_v1* value) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_KERNEL, n)) return r;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  *value = CUkernelNodeAttrValue{}; // the defaults: no window, no cooperation, priority 0
  for (auto& [id, v] : n->attributes)
    if (id == attr) *value = v;
  return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeSetAttribute_v11000(CUgraphNode h, CUkernelNodeAttrID attr,
                                              const CUkernelNodeAttrValue_v1* value) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_KERNEL, n)) return r;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  for (auto& [id, v] : n->attributes)
    if (id == attr) {
      v = *value;
      return CUDA_SUCCESS;
    }
  n->attributes.emplace_back(attr, *value);
  return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeCopyAttributes_v11000(CUgraphNode dst, CUgraphNode src) {
  GraphNode *d, *s;
  if (CUresult r = typed_node(dst, CU_GRAPH_NODE_TYPE_KERNEL, d)) return r;
  if (CUresult r = typed_node(src, CU_GRAPH_NODE_TYPE_KERNEL, s)) return r;
  d->attributes = s->attributes;
  return CUDA_SUCCESS;
}

// ---- user objects

CUresult cuUserObjectCreate_v11030(CUuserObject* out, void* ptr, CUhostFn destroy,
                                   unsigned int refs, unsigned int flags) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!out || !destroy || refs == 0 || flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)
    return CUDA_ERROR_INVALID_VALUE;
  *out = runtime::to_handle(runtime::create_user_object(ptr, destroy, refs));
  return CUDA_SUCCESS;
}

CUresult cuUserObjectRetain_v11030(CUuserObject h, unsigned int count) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  runtime::UserObject* o = runtime::find_user_object(h);
  if (!o || count == 0) return CUDA_ERROR_INVALID_VALUE;
  runtime::retain_user_object(o, count);
  return CUDA_SUCCESS;
}

CUresult cuUserObjectRelease_v11030(CUuserObject h, unsigned int count) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  runtime::UserObject* o = runtime::find_user_object(h);
  if (!o || count == 0) return CUDA_ERROR_INVALID_VALUE;
  return runtime::release_user_object(o, count);
}

CUresult cuGraphRetainUserObject_v11030(CUgraph hg, CUuserObject h, unsigned int count,
                                        unsigned int flags) {
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  runtime::UserObject* o = runtime::find_user_object(h);
  if (!o || count == 0 || (flags & ~unsigned(CU_GRAPH_USER_OBJECT_MOVE)))
    return CUDA_ERROR_INVALID_VALUE;
  runtime::graph_retain_user_object(g, o, count, flags & CU_GRAPH_USER_OBJECT_MOVE);
  return CUDA_SUCCESS;
}

CUresult cuGraphReleaseUserObject_v11030(CUgraph hg, CUuserObject h, unsigned int count) {
  Graph* g;
  if (CUresult r = graph_of(hg, g)) return r;
  runtime::UserObject* o = runtime::find_user_object(h);
  if (!o || count == 0) return CUDA_ERROR_INVALID_VALUE;
  return runtime::graph_release_user_object(g, o, count);
}

// ---- memory allocation nodes

CUresult cuGraphAddMemAllocNode_v11040(CUgraphNode* out, CUgraph g, const CUgraphNode* deps,
                                       size_t n, CUDA_MEM_ALLOC_NODE_PARAMS* p) {
  Graph* graph;
  if (CUresult r = graph_of(g, graph)) return r;
  GraphNode node;
  if (CUresult r = mem_alloc_node(p, node)) return r;
  if (CUresult r = add(out, g, deps, n, node)) {
    runtime::release(ptr(node.mem_alloc.dptr), {runtime::MemoryKind::Device});
    return r;
  }
  p->dptr = node.mem_alloc.dptr;
  return CUDA_SUCCESS;
}

CUresult cuGraphMemAllocNodeGetParams_v11040(CUgraphNode h, CUDA_MEM_ALLOC_NODE_PARAMS* p) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_MEM_ALLOC, n)) return r;
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  *p = n->mem_alloc;
  return CUDA_SUCCESS;
}

CUresult cuGraphAddMemFreeNode_v11040(CUgraphNode* out, CUgraph g, const CUgraphNode* deps,
                                      size_t n, CUdeviceptr dptr) {
  GraphNode node;
  if (CUresult r = mem_free_node(dptr, node)) return r;
  return add(out, g, deps, n, node);
}

CUresult cuGraphMemFreeNodeGetParams_v11040(CUgraphNode h, CUdeviceptr* dptr) {
  GraphNode* n;
  if (CUresult r = typed_node(h, CU_GRAPH_NODE_TYPE_MEM_FREE, n)) return r;
  if (!dptr) return CUDA_ERROR_INVALID_VALUE;
  *dptr = n->mem_free;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGraphMemTrim_v11040(CUdevice device) {
  const runtime::Device* d;
  return device_of(device, d); // nothing is cached: allocation nodes own their memory
}

CUresult cuDeviceGetGraphMemAttribute_v11040(CUdevice device, CUgraphMem_attribute attr,
                                             void* value) {
  const runtime::Device* d;
  if (CUresult r = device_of(device, d)) return r;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  auto* out = static_cast<cuuint64_t*>(value);
  switch (attr) {
  case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
  case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
    *out = graph_memory_current.load();
    return CUDA_SUCCESS;
  case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
  case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
    *out = graph_memory_high.load();
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuDeviceSetGraphMemAttribute_v11040(CUdevice device, CUgraphMem_attribute attr,
                                             void* value) {
  const runtime::Device* d;
  if (CUresult r = device_of(device, d)) return r;
  if (!value || *static_cast<cuuint64_t*>(value) != 0) return CUDA_ERROR_INVALID_VALUE;
  // Only the high watermarks can be reset (to the current use).
  if (attr != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && attr != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)
    return CUDA_ERROR_INVALID_VALUE;
  graph_memory_high = graph_memory_current.load();
  return CUDA_SUCCESS;
}

} // namespace mimic::driver::impl
