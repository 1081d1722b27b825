#include "runtime/graph.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "runtime/handle.h"
#include "support/log.h"

namespace mimic::runtime {

namespace {

HandleRegistry<Graph>& graph_registry() {
  static auto* r = new HandleRegistry<Graph>;
  return *r;
}

HandleRegistry<GraphNode>& node_registry() {
  static auto* r = new HandleRegistry<GraphNode>;
  return *r;
}

HandleRegistry<GraphExec>& exec_registry() {
  static auto* r = new HandleRegistry<GraphExec>;
  return *r;
}

HandleRegistry<ConditionalHandle>& conditional_registry() {
  static auto* r = new HandleRegistry<ConditionalHandle>;
  return *r;
}

bool contains(const std::vector<GraphNode*>& v, const GraphNode* n) {
  return std::find(v.begin(), v.end(), n) != v.end();
}

HandleRegistry<UserObject>& user_object_registry() {
  static auto* r = new HandleRegistry<UserObject>;
  return *r;
}

// User object references, released when the last holder (an executable graph, a pending
// launch of it) lets go.
struct UserObjectRefs {
  std::unordered_map<UserObject*, unsigned> held;
  ~UserObjectRefs() {
    for (auto& [o, n] : held)
      release_user_object(o, n);
  }
};

void collect_user_objects(const Graph* g, std::unordered_map<UserObject*, unsigned>& out) {
  for (auto& [o, n] : g->user_objects)
    out[o] += n;
  for (const GraphNode* n : g->nodes)
    if (n->child) collect_user_objects(n->child, out);
}

// Releases what a graph that just left the registry holds: user objects, nodes, children.
void forget_graph_contents(Graph* g) {
  for (auto& [o, count] : g->user_objects)
    release_user_object(o, count);
  g->user_objects.clear();
  for (GraphNode* n : g->nodes) {
    node_registry().remove(n);
    if (n->child && graph_registry().remove(n->child)) forget_graph_contents(n->child);
    for (Graph* body : n->bodies)
      if (graph_registry().remove(body)) forget_graph_contents(body);
  }
}

void forget_graph(Graph* g) {
  if (graph_registry().remove(g)) forget_graph_contents(g);
}

// Each node's position in its graph's creation order.
std::unordered_map<const GraphNode*, size_t> positions(const Graph* g) {
  std::unordered_map<const GraphNode*, size_t> at;
  for (size_t i = 0; i < g->nodes.size(); ++i)
    at[g->nodes[i]] = i;
  return at;
}

// Kahn's algorithm, taking ready nodes in creation order; empty when there is a cycle.
std::vector<GraphNode*> topological_order(const Graph* g) {
  std::unordered_map<const GraphNode*, size_t> pending;
  std::unordered_map<const GraphNode*, std::vector<GraphNode*>> out;
  for (GraphNode* n : g->nodes) {
    pending[n] = n->dependencies.size();
    for (GraphNode* d : n->dependencies)
      out[d].push_back(n);
  }
  auto at = positions(g);
  std::set<size_t> ready;
  for (size_t i = 0; i < g->nodes.size(); ++i)
    if (pending[g->nodes[i]] == 0) ready.insert(i);
  std::vector<GraphNode*> order;
  while (!ready.empty()) {
    GraphNode* n = g->nodes[*ready.begin()];
    ready.erase(ready.begin());
    order.push_back(n);
    for (GraphNode* m : out[n])
      if (--pending[m] == 0) ready.insert(at.at(m));
  }
  if (order.size() != g->nodes.size()) return {};
  return order;
}

// The topology as text: each node's type, its dependencies by index, child graphs nested.
std::string signature(const Graph* g) {
  auto at = positions(g);
  std::string s;
  for (const GraphNode* n : g->nodes) {
    s += std::to_string(int(n->type)) + ":";
    for (const GraphNode* d : n->dependencies)
      s += std::to_string(at.at(d)) + ",";
    if (n->child) s += "(" + signature(n->child) + ")";
    s += ";";
  }
  return s;
}

Work event_record_work(Event* e) {
  return [e] {
    std::lock_guard lock(e->mutex);
    e->time = std::chrono::steady_clock::now();
    return CUDA_SUCCESS;
  };
}

GraphExec::Step step_of(GraphNode* n) {
  GraphExec::Step step{n, n->type, n->work, n->event};
  if (n->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD && n->event)
    step.work = event_record_work(n->event);
  return step;
}

bool flatten(const Graph* g, std::vector<GraphExec::Step>& steps);

CUresult run_steps(const std::vector<GraphExec::Step>& steps) {
  for (const GraphExec::Step& s : steps) {
    if (!s.work || !s.enabled) continue;
    if (CUresult r = s.work(); r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

// The work of a conditional node: its bodies, each flattened, run as its handle says.
Work conditional_work(ConditionalHandle* h, CUgraphConditionalNodeType type,
                      std::shared_ptr<const std::vector<std::vector<GraphExec::Step>>> bodies) {
  return [h, type, bodies]() -> CUresult {
    unsigned v = h->value.load();
    switch (type) {
    case CU_GRAPH_COND_TYPE_IF:
      if (v) return run_steps((*bodies)[0]);
      return bodies->size() > 1 ? run_steps((*bodies)[1]) : CUDA_SUCCESS;
    case CU_GRAPH_COND_TYPE_SWITCH:
      return v < bodies->size() ? run_steps((*bodies)[v]) : CUDA_SUCCESS;
    case CU_GRAPH_COND_TYPE_WHILE:
      while (h->value.load()) {
        uint64_t writes = h->writes.load();
        if (CUresult r = run_steps((*bodies)[0])) return r;
        if (h->writes.load() == writes && h->value.load()) {
          // Nothing set the condition: the loop would never end (on a GPU it hangs).
          warn_once("while-conditional", "a WHILE conditional node ran its body without its condition "
                                         "changing, so it would never end; kernels cannot set conditions "
                                         "(cudaGraphSetConditional) on Mimic yet");
          return CUDA_ERROR_NOT_SUPPORTED;
        }
      }
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
  };
}

bool flatten(const Graph* g, std::vector<GraphExec::Step>& steps) {
  std::vector<GraphNode*> order = topological_order(g);
  if (order.size() != g->nodes.size()) return false;
  for (GraphNode* n : order) {
    if (n->child) {
      if (!flatten(n->child, steps)) return false;
      continue;
    }
    if (n->type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
      auto bodies = std::make_shared<std::vector<std::vector<GraphExec::Step>>>(n->bodies.size());
      for (size_t i = 0; i < n->bodies.size(); ++i)
        if (!flatten(n->bodies[i], (*bodies)[i])) return false;
      GraphExec::Step step = step_of(n);
      step.work = conditional_work(n->condition, n->condition_type, std::move(bodies));
      steps.push_back(std::move(step));
      continue;
    }
    steps.push_back(step_of(n));
  }
  return true;
}

// What conditional bodies may hold (as CUDA): kernels, empty nodes, child graphs, memsets,
// memcopies and conditionals, at any depth. Empty when `g` is fine.
std::string check_conditionals(const Graph* g, bool in_body, std::vector<ConditionalHandle*>& handles) {
  for (const GraphNode* n : g->nodes) {
    if (in_body && n->type != CU_GRAPH_NODE_TYPE_KERNEL && n->type != CU_GRAPH_NODE_TYPE_EMPTY &&
        n->type != CU_GRAPH_NODE_TYPE_GRAPH && n->type != CU_GRAPH_NODE_TYPE_MEMSET &&
        n->type != CU_GRAPH_NODE_TYPE_MEMCPY && n->type != CU_GRAPH_NODE_TYPE_CONDITIONAL)
      return "a conditional node's body holds a node of type " + std::to_string(int(n->type)) +
             "; bodies may hold only kernel, empty, child graph, memset, memcpy and conditional nodes";
    if (n->child)
      if (std::string e = check_conditionals(n->child, in_body, handles); !e.empty()) return e;
    if (n->type != CU_GRAPH_NODE_TYPE_CONDITIONAL) continue;
    if (std::find(handles.begin(), handles.end(), n->condition) == handles.end())
      handles.push_back(n->condition);
    for (const Graph* body : n->bodies)
      if (std::string e = check_conditionals(body, true, handles); !e.empty()) return e;
  }
  return {};
}

} // namespace

Graph* find_graph(CUgraph handle) {
  return graph_registry().find(handle);
}
GraphNode* find_graph_node(CUgraphNode handle) {
  return node_registry().find(handle);
}
GraphExec* find_graph_exec(CUgraphExec handle) {
  return exec_registry().find(handle);
}

Graph* create_graph() {
  auto* g = new Graph;
  graph_registry().add(g);
  return g;
}

CUresult destroy_graph(Graph* g) {
  // Leaving the registry first makes a concurrent second destroy fail, not run twice.
  if (!graph_registry().remove(g)) return CUDA_ERROR_INVALID_HANDLE;
  forget_graph_contents(g);
  return CUDA_SUCCESS;
}

GraphNode* add_node(Graph* g, const GraphNode& prototype,
                    const std::vector<GraphNode*>& dependencies) {
  for (size_t i = 0; i < dependencies.size(); ++i) {
    GraphNode* d = dependencies[i];
    if (!d || d->graph != g || !node_registry().find(d)) return nullptr;
    if (std::find(dependencies.begin(), dependencies.begin() + i, d) != dependencies.begin() + i)
      return nullptr;
  }
  auto* n = new GraphNode(prototype);
  n->graph = g;
  n->dependencies = dependencies;
  g->nodes.push_back(n);
  node_registry().add(n);
  if (n->child) graph_registry().add(n->child);
  return n;
}

CUresult destroy_node(GraphNode* n) {
  Graph* g = n->graph;
  if (!node_registry().remove(n)) return CUDA_ERROR_INVALID_HANDLE;
  std::erase(g->nodes, n);
  for (GraphNode* m : g->nodes)
    std::erase(m->dependencies, n);
  if (n->child) forget_graph(n->child);
  for (Graph* body : n->bodies)
    forget_graph(body);
  return CUDA_SUCCESS;
}

CUresult add_dependency(GraphNode* from, GraphNode* to) {
  if (from == to || from->graph != to->graph || contains(to->dependencies, from))
    return CUDA_ERROR_INVALID_VALUE;
  to->dependencies.push_back(from);
  return CUDA_SUCCESS;
}

CUresult remove_dependency(GraphNode* from, GraphNode* to) {
  if (from->graph != to->graph || !contains(to->dependencies, from))
    return CUDA_ERROR_INVALID_VALUE;
  std::erase(to->dependencies, from);
  return CUDA_SUCCESS;
}

std::vector<GraphNode*> dependents(const GraphNode* n) {
  std::vector<GraphNode*> out;
  for (GraphNode* m : n->graph->nodes)
    if (contains(m->dependencies, n)) out.push_back(m);
  return out;
}

Graph* clone_graph(const Graph* g) {
  auto* c = new Graph;
  c->cloned_from = const_cast<Graph*>(g);
  std::unordered_map<const GraphNode*, GraphNode*> copy_of;
  for (GraphNode* n : g->nodes) {
    auto* m = new GraphNode(*n);
    m->graph = c;
    m->cloned_from = n;
    if (n->child) m->child = clone_graph(n->child);
    for (Graph*& body : m->bodies)
      body = clone_graph(body);
    copy_of[n] = m;
    c->nodes.push_back(m);
  }
  for (GraphNode* m : c->nodes)
    for (GraphNode*& d : m->dependencies)
      d = copy_of.at(d);
  for (GraphNode* m : c->nodes)
    node_registry().add(m);
  c->user_objects = g->user_objects;
  for (auto& [o, n] : c->user_objects)
    retain_user_object(o, n);
  graph_registry().add(c);
  return c;
}

ConditionalHandle* create_conditional(Graph* graph, Context* context, unsigned default_value, unsigned flags) {
  auto* h = new ConditionalHandle;
  h->graph = graph;
  h->context = context;
  h->default_value = default_value;
  h->flags = flags;
  h->value = default_value;
  conditional_registry().add(h);
  return h;
}

ConditionalHandle* find_conditional(CUgraphConditionalHandle handle) {
  return conditional_registry().find(reinterpret_cast<const void*>(uintptr_t(handle)));
}

void set_conditional(ConditionalHandle* h, unsigned value) {
  h->value = value;
  ++h->writes;
}

GraphNode* find_in_clone(const GraphNode* original, const Graph* clone) {
  for (GraphNode* n : clone->nodes)
    if (n->cloned_from == original) return n;
  return nullptr;
}

Result<GraphExec*> instantiate(Graph* g, unsigned long long flags) {
  auto exec = std::make_unique<GraphExec>();
  if (std::string e = check_conditionals(g, false, exec->conditionals); !e.empty())
    return Error(e, CUDA_ERROR_INVALID_VALUE);
  if (!flatten(g, exec->steps))
    return Error("the graph has a dependency cycle", CUDA_ERROR_INVALID_VALUE);
  exec->flags = flags;
  exec->top_level = g->nodes;
  exec->signature = signature(g);
  auto refs = std::make_shared<UserObjectRefs>();
  collect_user_objects(g, refs->held);
  for (auto& [o, n] : refs->held)
    retain_user_object(o, n);
  exec->user_object_refs = refs;
  GraphExec* e = exec.release();
  exec_registry().add(e);
  return e;
}

CUresult destroy_exec(GraphExec* e) {
  if (!exec_registry().remove(e)) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard lock(e->mutex);
  e->user_object_refs.reset();
  return CUDA_SUCCESS;
}

CUresult launch_graph(GraphExec* exec, Stream* stream) {
  std::vector<GraphExec::Step> steps;
  std::shared_ptr<void> refs; // user objects live until this launch has run
  std::vector<ConditionalHandle*> conditionals;
  {
    std::lock_guard lock(exec->mutex);
    steps = exec->steps;
    refs = exec->user_object_refs;
    conditionals = exec->conditionals;
  }
  // Event waits hold the whole launch until the records they name have run.
  std::vector<std::pair<Stream*, uint64_t>> after;
  std::vector<Event*> recorded;
  for (const GraphExec::Step& s : steps) {
    if (!s.event || !s.enabled) continue;
    if (s.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD) {
      recorded.push_back(s.event);
      continue;
    }
    std::lock_guard lock(s.event->mutex);
    if (s.event->stream && s.event->stream != stream &&
        std::find(recorded.begin(), recorded.end(), s.event) == recorded.end())
      after.emplace_back(s.event->stream, s.event->sequence);
  }
  auto run = [steps = std::move(steps), refs, conditionals = std::move(conditionals)] {
    for (ConditionalHandle* h : conditionals)
      if (h->flags & CU_GRAPH_COND_ASSIGN_DEFAULT) h->value = h->default_value;
    return run_steps(steps);
  };
  if (is_capturing(stream)) {
    // Launched into a capture: the whole launch is one node of the capturing graph.
    GraphNode node;
    node.type = CU_GRAPH_NODE_TYPE_GRAPH;
    node.context = stream->context;
    node.work = std::move(run);
    return capture_node(stream, node);
  }
  uint64_t sequence = submit(stream, std::move(run), std::move(after));
  if (sequence == 0) return CUDA_SUCCESS; // captured meanwhile
  // An event recorded by the graph completes with the launch.
  for (Event* e : recorded) {
    std::lock_guard lock(e->mutex);
    e->stream = stream;
    e->sequence = sequence;
  }
  return CUDA_SUCCESS;
}

CUresult update_exec(GraphExec* exec, Graph* g, CUgraphExecUpdateResult& result,
                     GraphNode*& error_node) {
  error_node = nullptr;
  result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  std::lock_guard lock(exec->mutex);
  if (g->nodes.size() != exec->top_level.size()) {
    result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (g->nodes[i]->type != exec->top_level[i]->type) {
      result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
      error_node = g->nodes[i];
      return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
  }
  if (signature(g) != exec->signature) {
    result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  std::vector<GraphExec::Step> steps;
  if (!flatten(g, steps) || steps.size() != exec->steps.size()) {
    result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  // Nodes keep the identity of the instantiated graph's nodes (for later SetParams).
  std::unordered_map<const GraphNode*, GraphNode*> old_of;
  for (size_t i = 0; i < g->nodes.size(); ++i)
    old_of[g->nodes[i]] = exec->top_level[i];
  for (size_t i = 0; i < steps.size(); ++i) {
    auto it = old_of.find(steps[i].origin);
    steps[i].origin = it != old_of.end() ? it->second : exec->steps[i].origin;
    steps[i].enabled = exec->steps[i].enabled; // an update keeps nodes disabled
  }
  exec->steps = std::move(steps);
  return CUDA_SUCCESS;
}

CUresult set_exec_node(GraphExec* exec, GraphNode* node, const GraphNode& prototype) {
  std::lock_guard lock(exec->mutex);
  for (GraphExec::Step& s : exec->steps) {
    if (s.origin != node) continue;
    if (s.type != prototype.type) return CUDA_ERROR_INVALID_VALUE;
    GraphNode copy = prototype;
    copy.type = s.type;
    bool enabled = s.enabled;
    s = step_of(&copy);
    s.origin = node;
    s.enabled = enabled;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

namespace {

void nodes_of(const Graph* g, std::set<const GraphNode*>& out) {
  for (const GraphNode* n : g->nodes) {
    out.insert(n);
    if (n->child) nodes_of(n->child, out);
  }
}

} // namespace

CUresult set_exec_child_graph(GraphExec* exec, GraphNode* node, Graph* child) {
  if (node->type != CU_GRAPH_NODE_TYPE_GRAPH || !node->child) return CUDA_ERROR_INVALID_VALUE;
  if (signature(child) != signature(node->child)) return CUDA_ERROR_INVALID_VALUE;
  std::vector<GraphExec::Step> fresh;
  if (!flatten(child, fresh)) return CUDA_ERROR_INVALID_VALUE;
  std::set<const GraphNode*> old;
  nodes_of(node->child, old);
  std::lock_guard lock(exec->mutex);
  if (std::find(exec->top_level.begin(), exec->top_level.end(), node) == exec->top_level.end())
    return CUDA_ERROR_INVALID_VALUE;
  // The child's steps are contiguous, in the same order as a flattening of `child`.
  size_t k = 0;
  for (GraphExec::Step& s : exec->steps) {
    if (!old.count(s.origin)) continue;
    if (k == fresh.size()) return CUDA_ERROR_INVALID_VALUE;
    GraphExec::Step& f = fresh[k++];
    s.type = f.type;
    s.work = f.work;
    s.event = f.event;
  }
  return k == fresh.size() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult set_exec_node_enabled(GraphExec* exec, GraphNode* node, bool enabled) {
  std::lock_guard lock(exec->mutex);
  for (GraphExec::Step& s : exec->steps) {
    if (s.origin != node) continue;
    s.enabled = enabled;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult exec_node_enabled(GraphExec* exec, GraphNode* node, bool& enabled) {
  std::lock_guard lock(exec->mutex);
  for (const GraphExec::Step& s : exec->steps) {
    if (s.origin != node) continue;
    enabled = s.enabled;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// ---- user objects

UserObject* create_user_object(void* ptr, CUhostFn destroy, unsigned refs) {
  auto* o = new UserObject;
  o->ptr = ptr;
  o->destroy = destroy;
  o->refs = refs;
  user_object_registry().add(o);
  return o;
}

UserObject* find_user_object(CUuserObject handle) {
  return user_object_registry().find(handle);
}

void retain_user_object(UserObject* o, unsigned count) {
  std::lock_guard lock(o->mutex);
  o->refs += count;
}

CUresult release_user_object(UserObject* o, unsigned count) {
  {
    std::lock_guard lock(o->mutex);
    if (count > o->refs) return CUDA_ERROR_INVALID_VALUE;
    o->refs -= count;
    if (o->refs > 0 || count == 0) return CUDA_SUCCESS;
  }
  user_object_registry().remove(o);
  if (o->destroy) o->destroy(o->ptr);
  return CUDA_SUCCESS;
}

void graph_retain_user_object(Graph* g, UserObject* o, unsigned count, bool move) {
  if (!move) retain_user_object(o, count);
  g->user_objects[o] += count;
}

CUresult graph_release_user_object(Graph* g, UserObject* o, unsigned count) {
  auto it = g->user_objects.find(o);
  if (it == g->user_objects.end() || it->second < count) return CUDA_ERROR_INVALID_VALUE;
  if ((it->second -= count) == 0) g->user_objects.erase(it);
  return release_user_object(o, count);
}

// ---- stream capture

namespace {

struct Capture {
  Graph* graph = nullptr;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  std::thread::id thread;
  uint64_t id = 0;
  bool invalidated = false;
  bool owns_graph = true; // false when capturing into the caller's graph
  Stream* origin = nullptr;
};

struct StreamCapture {
  Capture* capture = nullptr;
  std::vector<GraphNode*> frontier;
  std::vector<CUgraphEdgeData> edge_data;
};

struct EventCapture {
  Capture* capture = nullptr;
  std::vector<GraphNode*> nodes;
};

struct CaptureState {
  std::mutex mutex;
  std::atomic<int> active{0};
  uint64_t next_id = 1;
  std::vector<Capture*> captures;
  std::vector<Capture*> finished; // ended captures stay reachable: callers may still read them
  std::unordered_map<Stream*, StreamCapture> streams;
  std::unordered_map<Event*, EventCapture> events;
};

CaptureState& captures() {
  static auto* s = new CaptureState;
  return *s;
}

thread_local CUstreamCaptureMode tls_capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

bool is_blocking_stream(const Stream* s) {
  return s->role == Stream::Role::Created && !(s->flags & CU_STREAM_NON_BLOCKING);
}

// Called with the state locked.
StreamCapture* capture_of(CaptureState& st, Stream* s) {
  auto it = st.streams.find(s);
  return it == st.streams.end() ? nullptr : &it->second;
}

// Which captures forbid a potentially unsafe call from this thread. State locked.
std::vector<Capture*> forbidding(CaptureState& st) {
  std::vector<Capture*> out;
  if (tls_capture_mode == CU_STREAM_CAPTURE_MODE_RELAXED) return out;
  auto self = std::this_thread::get_id();
  for (Capture* c : st.captures) {
    bool own = c->thread == self && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED;
    bool global = c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
                  tls_capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
    if (own || global) out.push_back(c);
  }
  return out;
}

// Blocking streams of the legacy stream's context that capture (State locked).
std::vector<Capture*> implicitly_ordered(CaptureState& st, Stream* legacy) {
  std::vector<Capture*> out;
  for (auto& [s, sc] : st.streams)
    if (s->context == legacy->context && is_blocking_stream(s)) out.push_back(sc.capture);
  return out;
}

GraphNode* add_captured(StreamCapture& sc, const GraphNode& prototype) {
  GraphNode* n = add_node(sc.capture->graph, prototype, sc.frontier);
  if (n) sc.frontier = {n};
  return n;
}

void end(CaptureState& st, Capture* c) {
  std::erase_if(st.streams, [c](const auto& kv) { return kv.second.capture == c; });
  std::erase_if(st.events, [c](const auto& kv) { return kv.second.capture == c; });
  std::erase(st.captures, c);
  st.finished.push_back(c);
  st.active--;
}

// Every node in `nodes` is in `of` or an ancestor of one of them.
bool covered(const std::vector<GraphNode*>& nodes, const std::vector<GraphNode*>& of) {
  std::set<const GraphNode*> seen;
  std::vector<const GraphNode*> todo(of.begin(), of.end());
  while (!todo.empty()) {
    const GraphNode* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    for (const GraphNode* d : n->dependencies)
      todo.push_back(d);
  }
  return std::all_of(nodes.begin(), nodes.end(), [&](GraphNode* n) { return seen.count(n) != 0; });
}

} // namespace

CUresult begin_capture(Stream* s, CUstreamCaptureMode mode, Graph* graph,
                       const std::vector<GraphNode*>& dependencies) {
  if (s->role == Stream::Role::Legacy) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  if (capture_of(st, s)) return CUDA_ERROR_ILLEGAL_STATE;
  for (GraphNode* d : dependencies)
    if (!d || d->graph != graph || !node_registry().find(d)) return CUDA_ERROR_INVALID_VALUE;
  auto* c = new Capture;
  c->owns_graph = graph == nullptr;
  c->graph = graph ? graph : create_graph();
  c->mode = mode;
  c->thread = std::this_thread::get_id();
  c->id = st.next_id++;
  c->origin = s;
  st.captures.push_back(c);
  st.streams[s].capture = c;
  st.streams[s].frontier = dependencies;
  st.active++;
  return CUDA_SUCCESS;
}

CUresult end_capture(Stream* s, Graph** out) {
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  *out = nullptr;
  StreamCapture* sc = capture_of(st, s);
  if (!sc) return CUDA_ERROR_ILLEGAL_STATE;
  Capture* c = sc->capture;
  if (c->origin != s) return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
  if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && c->thread != std::this_thread::get_id())
    return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
  bool joined = true;
  for (auto& [other, osc] : st.streams)
    if (osc.capture == c && other != s && !covered(osc.frontier, sc->frontier)) joined = false;
  Graph* g = c->graph;
  bool invalidated = c->invalidated;
  end(st, c);
  if (!joined || invalidated) {
    if (c->owns_graph) destroy_graph(g);
    return joined ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
  }
  *out = g;
  return CUDA_SUCCESS;
}

CaptureInfo capture_info(Stream* s) {
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  CaptureInfo info;
  StreamCapture* sc = capture_of(st, s);
  if (!sc) return info;
  info.status = sc->capture->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                         : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  info.id = sc->capture->id;
  info.graph = sc->capture->graph;
  info.frontier = &sc->frontier;
  sc->edge_data.assign(sc->frontier.size(), CUgraphEdgeData{});
  info.edge_data = sc->edge_data.data();
  return info;
}

CUresult update_capture_dependencies(Stream* s, const std::vector<GraphNode*>& nodes,
                                     unsigned flags) {
  if (flags != CU_STREAM_ADD_CAPTURE_DEPENDENCIES && flags != CU_STREAM_SET_CAPTURE_DEPENDENCIES)
    return CUDA_ERROR_INVALID_VALUE;
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  StreamCapture* sc = capture_of(st, s);
  if (!sc) return CUDA_ERROR_ILLEGAL_STATE;
  if (sc->capture->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  for (GraphNode* n : nodes)
    if (!n || n->graph != sc->capture->graph || !node_registry().find(n))
      return CUDA_ERROR_INVALID_VALUE;
  if (flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES) sc->frontier.clear();
  for (GraphNode* n : nodes)
    if (!contains(sc->frontier, n)) sc->frontier.push_back(n);
  return CUDA_SUCCESS;
}

CUstreamCaptureMode exchange_capture_mode(CUstreamCaptureMode mode) {
  CUstreamCaptureMode old = tls_capture_mode;
  tls_capture_mode = mode;
  return old;
}

bool is_capturing(Stream* s) {
  if (!any_capture()) return false;
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  return capture_of(st, s) != nullptr;
}

bool legacy_blocked_by_capture(Stream* s) {
  if (!any_capture() || s->role != Stream::Role::Legacy) return false;
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  return !implicitly_ordered(st, s).empty();
}

bool event_captured(Event* e) {
  if (!any_capture()) return false;
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  return st.events.count(e) != 0;
}

CUresult capture_node(Stream* s, const GraphNode& prototype) {
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  StreamCapture* sc = capture_of(st, s);
  if (!sc) return CUDA_ERROR_ILLEGAL_STATE;
  if (sc->capture->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  add_captured(*sc, prototype);
  return CUDA_SUCCESS;
}

bool any_capture() {
  return captures().active.load() > 0;
}

bool capture_submit(Stream* s, Work& work) {
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  if (StreamCapture* sc = capture_of(st, s)) {
    if (!sc->capture->invalidated) {
      GraphNode prototype;
      prototype.type = CU_GRAPH_NODE_TYPE_HOST;
      prototype.context = s->context;
      prototype.work = std::move(work);
      add_captured(*sc, prototype);
    }
    return true;
  }
  if (s->role == Stream::Role::Legacy)
    for (Capture* c : implicitly_ordered(st, s))
      c->invalidated = true;
  return false;
}

CUresult capture_check_sync(Stream* s) {
  if (!any_capture()) return CUDA_SUCCESS;
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  if (StreamCapture* sc = capture_of(st, s)) {
    sc->capture->invalidated = true;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (s->role == Stream::Role::Legacy) {
    std::vector<Capture*> implicit = implicitly_ordered(st, s);
    for (Capture* c : implicit)
      c->invalidated = true;
    if (!implicit.empty()) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  }
  std::vector<Capture*> forbid = forbidding(st);
  for (Capture* c : forbid)
    c->invalidated = true;
  return forbid.empty() ? CUDA_SUCCESS : CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUresult capture_check_async(Stream* s) {
  if (!any_capture() || s->role != Stream::Role::Legacy) return CUDA_SUCCESS;
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  std::vector<Capture*> implicit = implicitly_ordered(st, s);
  for (Capture* c : implicit)
    c->invalidated = true;
  return implicit.empty() ? CUDA_SUCCESS : CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
}

CUresult capture_check_unsafe() {
  if (!any_capture()) return CUDA_SUCCESS;
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  std::vector<Capture*> forbid = forbidding(st);
  for (Capture* c : forbid)
    c->invalidated = true;
  return forbid.empty() ? CUDA_SUCCESS : CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

bool capture_record(Event* e, Stream* s) {
  if (!any_capture()) return false;
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  StreamCapture* sc = capture_of(st, s);
  if (!sc) {
    st.events.erase(e); // a record outside capture replaces a captured one
    return false;
  }
  st.events[e] = EventCapture{sc->capture, sc->frontier};
  return true;
}

void capture_forget_stream(Stream* s) {
  if (!any_capture()) return;
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  StreamCapture* sc = capture_of(st, s);
  if (!sc) return;
  Capture* c = sc->capture;
  c->invalidated = true;
  if (c->origin != s) {
    st.streams.erase(s);
    return;
  }
  Graph* g = c->graph;
  bool owned = c->owns_graph;
  end(st, c);
  if (owned) destroy_graph(g);
}

bool capture_wait(Stream* s, Event* e, CUresult& r) {
  r = CUDA_SUCCESS;
  if (!any_capture()) return false;
  CaptureState& st = captures();
  std::lock_guard lock(st.mutex);
  StreamCapture* sc = capture_of(st, s);
  auto it = st.events.find(e);
  if (it == st.events.end()) {
    // Work recorded outside the capture happened before the graph can run: nothing to
    // add. (A wait on a capturing stream must not block stream work either way.)
    return sc != nullptr;
  }
  EventCapture& ec = it->second;
  if (!sc) {
    // The stream joins the capture, after the event's nodes.
    StreamCapture& joined = st.streams[s];
    joined.capture = ec.capture;
    joined.frontier = ec.nodes;
    return true;
  }
  if (sc->capture != ec.capture) {
    sc->capture->invalidated = true;
    r = CUDA_ERROR_STREAM_CAPTURE_MERGE;
    return true;
  }
  for (GraphNode* n : ec.nodes)
    if (!contains(sc->frontier, n)) sc->frontier.push_back(n);
  return true;
}

} // namespace mimic::runtime
