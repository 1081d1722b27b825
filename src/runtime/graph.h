// CUDA graphs and stream capture, backend-neutral. A graph is a set of nodes with
// dependency edges; every node that does something holds a Work closure built by the
// driver (copy, fill, host function, kernel launch), so the runtime never needs to know
// what a node means. An executable graph is the nodes flattened (child graphs inlined)
// in a topological order; a launch enqueues one stream item that runs them in turn.
//
// Stream capture: while a stream captures, runtime::submit on it adds a node whose
// dependencies are the stream's capture frontier instead of enqueueing. An event
// recorded in a capturing stream remembers that frontier; a stream that waits on it
// joins the capture. Synchronous calls that would order against capturing work fail.
#pragma once

#include <atomic>
#include <cuda.h>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/stream.h"

namespace mimic::runtime {

struct Graph;

// A user object (cuUserObjectCreate): a destructor run when the last reference, held by
// the application, graphs or executable graphs, goes.
struct UserObject {
  void* ptr = nullptr;
  CUhostFn destroy = nullptr;
  std::mutex mutex;
  unsigned refs = 0;
};

// A kernel launch, validated and with its parameters packed (built by the driver).
struct KernelNodeParams {
  CUfunction function = nullptr; // as given: a CUfunction, or a CUkernel
  Context* context = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  std::vector<uint8_t> args;
  std::vector<void*> arg_pointers; // one per parameter, into `args`
};

// The value a conditional node tests (cuGraphConditionalHandleCreate). With
// CU_GRAPH_COND_ASSIGN_DEFAULT it is set to default_value when each launch of a graph
// using it starts; otherwise it keeps its last value (default_value at first). Kernels
// change it with cudaGraphSetConditional, which reaches set_conditional once device-side
// support exists. The value is shared by all executable graphs of the graph.
struct ConditionalHandle {
  Graph* graph = nullptr;
  Context* context = nullptr;
  unsigned default_value = 0;
  unsigned flags = 0;
  std::atomic<unsigned> value{0};
  std::atomic<uint64_t> writes{0}; // set_conditional calls, to tell a stuck WHILE loop
};

struct GraphNode {
  Graph* graph = nullptr;
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
  std::vector<GraphNode*> dependencies;
  Work work; // empty for empty, child-graph and event nodes
  // CU_GRAPH_NODE_TYPE_GRAPH: a clone owned by the node; null for an executable graph
  // launched into a capture (its `work` runs the launch).
  Graph* child = nullptr;
  Event* event = nullptr; // event record and wait nodes
  Context* context = nullptr;
  // The parameters as given, for the getters.
  CUDA_HOST_NODE_PARAMS host{};
  CUDA_MEMSET_NODE_PARAMS memset{};
  CUDA_MEMCPY3D memcpy{};
  std::shared_ptr<const KernelNodeParams> kernel;
  CUDA_MEM_ALLOC_NODE_PARAMS mem_alloc{}; // its dptr is allocated when the node is made
  CUdeviceptr mem_free = 0;
  GraphNode* cloned_from = nullptr;
  // Kernel nodes: launch attributes set with cuGraphKernelNodeSetAttribute.
  std::vector<std::pair<CUkernelNodeAttrID, CUkernelNodeAttrValue>> attributes;
  // Conditional nodes: the handle tested, the kind, and the body graphs the node owns
  // (IF: then[, else]; WHILE: one; SWITCH: one per value).
  ConditionalHandle* condition = nullptr;
  CUgraphConditionalNodeType condition_type = CU_GRAPH_COND_TYPE_IF;
  std::vector<Graph*> bodies;
};

struct Graph {
  std::vector<GraphNode*> nodes; // in creation order
  Graph* cloned_from = nullptr;
  std::unordered_map<UserObject*, unsigned> user_objects; // references held
};

struct GraphExec {
  struct Step {
    GraphNode* origin; // the node of the instantiated graph (or of a child graph)
    CUgraphNodeType type;
    Work work;
    Event* event;
    bool enabled = true; // cuGraphNodeSetEnabled
  };
  Context* context = nullptr;
  unsigned long long flags = 0;
  std::mutex mutex;                  // steps
  std::vector<Step> steps;           // topological order
  std::vector<GraphNode*> top_level; // the instantiated graph's nodes, creation order
  std::string signature;             // topology, for cuGraphExecUpdate
  // The user object references of the graph, released when the executable graph is
  // destroyed and no launch of it is pending.
  std::shared_ptr<void> user_object_refs;
  // Conditional handles its conditional nodes test, reset at each launch when they ask.
  std::vector<ConditionalHandle*> conditionals;
};

Graph* find_graph(CUgraph handle);
GraphNode* find_graph_node(CUgraphNode handle);
GraphExec* find_graph_exec(CUgraphExec handle);
inline CUgraph to_handle(Graph* g) {
  return reinterpret_cast<CUgraph>(g);
}
inline CUgraphNode to_handle(GraphNode* n) {
  return reinterpret_cast<CUgraphNode>(n);
}
inline CUgraphExec to_handle(GraphExec* e) {
  return reinterpret_cast<CUgraphExec>(e);
}

Graph* create_graph();
CUresult destroy_graph(Graph* graph);
// Adds a copy of `prototype` to `graph` after `dependencies` (which must be distinct nodes
// of `graph`); nullptr when they are not.
GraphNode* add_node(Graph* graph, const GraphNode& prototype,
                    const std::vector<GraphNode*>& dependencies);
CUresult destroy_node(GraphNode* node);
CUresult add_dependency(GraphNode* from, GraphNode* to);
CUresult remove_dependency(GraphNode* from, GraphNode* to);
std::vector<GraphNode*> dependents(const GraphNode* node);
Graph* clone_graph(const Graph* graph);
GraphNode* find_in_clone(const GraphNode* original, const Graph* clone);

// CUDA_ERROR_INVALID_VALUE for a cycle.
Result<GraphExec*> instantiate(Graph* graph, unsigned long long flags);
CUresult destroy_exec(GraphExec* exec);
CUresult launch_graph(GraphExec* exec, Stream* stream);
// Same topology: takes the new graph's node parameters. Otherwise the result names why
// and `error_node` the first node that differs.
CUresult update_exec(GraphExec* exec, Graph* graph, CUgraphExecUpdateResult& result,
                     GraphNode*& error_node);
// Replaces the parameters of `node` (a node of the instantiated graph) in `exec` with
// those of `prototype`, which must have the same type.
CUresult set_exec_node(GraphExec* exec, GraphNode* node, const GraphNode& prototype);
// Replaces the child graph of a child graph node in `exec`: `child` must have the same
// topology and node order (CUDA_ERROR_INVALID_VALUE otherwise).
CUresult set_exec_child_graph(GraphExec* exec, GraphNode* node, Graph* child);
// A disabled node does nothing when the graph runs (its dependencies still hold).
CUresult set_exec_node_enabled(GraphExec* exec, GraphNode* node, bool enabled);
CUresult exec_node_enabled(GraphExec* exec, GraphNode* node, bool& enabled);

// ---- conditional nodes

ConditionalHandle* create_conditional(Graph* graph, Context* context, unsigned default_value, unsigned flags);
ConditionalHandle* find_conditional(CUgraphConditionalHandle handle);
inline CUgraphConditionalHandle to_handle(ConditionalHandle* h) {
  return CUgraphConditionalHandle(reinterpret_cast<uintptr_t>(h));
}
// cudaGraphSetConditional: the device side calls this once kernels can.
void set_conditional(ConditionalHandle* handle, unsigned value);

// ---- user objects

UserObject* create_user_object(void* ptr, CUhostFn destroy, unsigned refs);
UserObject* find_user_object(CUuserObject handle);
inline CUuserObject to_handle(UserObject* o) {
  return reinterpret_cast<CUuserObject>(o);
}
void retain_user_object(UserObject* object, unsigned count);
// Runs the destructor when the count reaches zero; INVALID_VALUE when fewer are held.
CUresult release_user_object(UserObject* object, unsigned count);
// A graph's references: `move` takes over the caller's instead of adding new ones.
void graph_retain_user_object(Graph* graph, UserObject* object, unsigned count, bool move);
CUresult graph_release_user_object(Graph* graph, UserObject* object, unsigned count);

// ---- stream capture

// Captures into a new graph, or into `graph` after `dependencies` (cuStreamBeginCaptureToGraph).
CUresult begin_capture(Stream* stream, CUstreamCaptureMode mode, Graph* graph = nullptr,
                       const std::vector<GraphNode*>& dependencies = {});
// The captured graph; CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (and no graph) when the
// capture was invalidated.
CUresult end_capture(Stream* stream, Graph** graph);
struct CaptureInfo {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  uint64_t id = 0;
  Graph* graph = nullptr;
  const std::vector<GraphNode*>* frontier = nullptr; // valid until the next capture call
  const CUgraphEdgeData* edge_data = nullptr;        // zeroed, one per frontier node
};
CaptureInfo capture_info(Stream* stream);
// flags: CU_STREAM_ADD_CAPTURE_DEPENDENCIES or CU_STREAM_SET_CAPTURE_DEPENDENCIES.
CUresult update_capture_dependencies(Stream* stream, const std::vector<GraphNode*>& nodes,
                                     unsigned flags);
CUstreamCaptureMode exchange_capture_mode(CUstreamCaptureMode mode);
bool is_capturing(Stream* stream);
// The legacy stream while a blocking stream of its context captures: unusable.
bool legacy_blocked_by_capture(Stream* stream);
// The event was last recorded in a capture in progress (CUDA_ERROR_CAPTURED_EVENT to
// query, synchronise or time it).
bool event_captured(Event* event);
// Adds a node made from `prototype` to the stream's capture. INVALIDATED when the
// capture was invalidated, ILLEGAL_STATE when the stream does not capture.
CUresult capture_node(Stream* stream, const GraphNode& prototype);

// Hooks for stream.cpp.
bool any_capture(); // cheap: is any capture in progress?
// Captures `work` when `stream` captures (true); invalidates captures that a use of the
// legacy stream would implicitly order against.
bool capture_submit(Stream* stream, Work& work);
// For synchronous work on `stream`: an error (and the capture invalidated) when it would
// break a capture in progress.
CUresult capture_check_sync(Stream* stream);
// For asynchronous work on `stream`: CUDA_ERROR_STREAM_CAPTURE_IMPLICIT (and the
// captures invalidated) for the legacy stream while a blocking stream of its context
// captures.
CUresult capture_check_async(Stream* stream);
// For calls CUDA deems unsafe during capture (device-wide synchronisation), by the
// calling thread's capture interaction mode.
CUresult capture_check_unsafe();
bool capture_record(Event* event, Stream* stream);
// A destroyed stream leaves its capture: a capture it began is abandoned.
void capture_forget_stream(Stream* stream);
// Returns true when the wait was handled by capture (result in `r`).
bool capture_wait(Stream* stream, Event* event, CUresult& r);

} // namespace mimic::runtime
