// Graphs and stream capture in the runtime: order of execution, stale handles, capture
// across streams, the errors of synchronous work during capture, executable updates.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/context.h"
#include "runtime/device.h"
#include "runtime/graph.h"
#include "runtime/stream.h"

using namespace mimic::runtime;

namespace {

Context* primary() {
  Context* c = nullptr;
  EXPECT_EQ(retain_primary(devices().at(0), &c), CUDA_SUCCESS);
  return c;
}

// Appends to a shared log when run.
struct Log {
  std::mutex mutex;
  std::vector<int> items;
  Work append(int value) {
    return [this, value] {
      std::lock_guard lock(mutex);
      items.push_back(value);
      return CUDA_SUCCESS;
    };
  }
  std::vector<int> take() {
    std::lock_guard lock(mutex);
    return std::exchange(items, {});
  }
};

GraphNode work_node(Work work) {
  GraphNode n;
  n.type = CU_GRAPH_NODE_TYPE_HOST;
  n.work = std::move(work);
  return n;
}

Stream* new_stream(Context* c) {
  auto s = create_stream(c, CU_STREAM_NON_BLOCKING, 0);
  EXPECT_TRUE(s);
  return s.value();
}

} // namespace

TEST(Graph, LaunchRunsNodesAfterTheirDependencies) {
  Context* c = primary();
  Log log;
  Graph* g = create_graph();
  // Created last-first: the order of creation must not decide the order of execution.
  GraphNode* third = add_node(g, work_node(log.append(3)), {});
  GraphNode* second = add_node(g, work_node(log.append(2)), {});
  GraphNode* first = add_node(g, work_node(log.append(1)), {});
  ASSERT_TRUE(third && second && first);
  EXPECT_EQ(add_dependency(first, second), CUDA_SUCCESS);
  EXPECT_EQ(add_dependency(second, third), CUDA_SUCCESS);
  EXPECT_EQ(add_dependency(second, third), CUDA_ERROR_INVALID_VALUE); // already there
  auto exec = instantiate(g, 0);
  ASSERT_TRUE(exec);
  Stream* s = new_stream(c);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(launch_graph(exec.value(), s), CUDA_SUCCESS);
    EXPECT_EQ(s->synchronize(), CUDA_SUCCESS);
    EXPECT_EQ(log.take(), (std::vector<int>{1, 2, 3}));
  }
  // A cycle cannot be instantiated.
  EXPECT_EQ(add_dependency(third, first), CUDA_SUCCESS);
  auto cyclic = instantiate(g, 0);
  ASSERT_FALSE(cyclic);
  EXPECT_EQ(cyclic.error().code(), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(destroy_exec(exec.value()), CUDA_SUCCESS);
  EXPECT_EQ(destroy_graph(g), CUDA_SUCCESS);
  EXPECT_EQ(destroy_stream(s), CUDA_SUCCESS);
  release_primary(devices()[0]);
}

TEST(Graph, StaleAndForeignHandlesAreNotFound) {
  Graph* g = create_graph();
  Graph* other = create_graph();
  GraphNode* n = add_node(g, GraphNode{}, {});
  ASSERT_NE(n, nullptr);
  // A dependency must be a live node of the same graph.
  EXPECT_EQ(add_node(other, GraphNode{}, {n}), nullptr);
  EXPECT_EQ(add_node(g, GraphNode{}, {n, n}), nullptr);
  auto exec = instantiate(g, 0);
  ASSERT_TRUE(exec);
  EXPECT_EQ(find_graph(to_handle(g)), g);
  EXPECT_EQ(find_graph_node(to_handle(n)), n);
  EXPECT_EQ(destroy_graph(g), CUDA_SUCCESS);
  EXPECT_EQ(destroy_graph(g), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(find_graph(to_handle(g)), nullptr);
  EXPECT_EQ(find_graph_node(to_handle(n)), nullptr);
  EXPECT_EQ(find_graph(reinterpret_cast<CUgraph>(&other)), nullptr);
  // The executable graph outlives its graph.
  EXPECT_EQ(find_graph_exec(to_handle(exec.value())), exec.value());
  EXPECT_EQ(destroy_exec(exec.value()), CUDA_SUCCESS);
  EXPECT_EQ(destroy_exec(exec.value()), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(find_graph_exec(to_handle(exec.value())), nullptr);
  EXPECT_EQ(destroy_graph(other), CUDA_SUCCESS);
}

TEST(Graph, ChildGraphsAndClonesRunTheirNodes) {
  Context* c = primary();
  Log log;
  Graph* child = create_graph();
  GraphNode* a = add_node(child, work_node(log.append(10)), {});
  add_node(child, work_node(log.append(11)), {a});
  Graph* parent = create_graph();
  GraphNode before = work_node(log.append(1));
  GraphNode* b = add_node(parent, before, {});
  GraphNode nested;
  nested.type = CU_GRAPH_NODE_TYPE_GRAPH;
  nested.child = clone_graph(child);
  GraphNode* n = add_node(parent, nested, {b});
  add_node(parent, work_node(log.append(2)), {n});
  Graph* copy = clone_graph(parent);
  EXPECT_EQ(find_in_clone(b, copy)->cloned_from, b);
  auto exec = instantiate(copy, 0);
  ASSERT_TRUE(exec);
  Stream* s = new_stream(c);
  EXPECT_EQ(launch_graph(exec.value(), s), CUDA_SUCCESS);
  EXPECT_EQ(s->synchronize(), CUDA_SUCCESS);
  EXPECT_EQ(log.take(), (std::vector<int>{1, 10, 11, 2}));
  destroy_exec(exec.value());
  destroy_graph(copy);
  destroy_graph(parent);
  destroy_graph(child);
  destroy_stream(s);
  release_primary(devices()[0]);
}

TEST(Graph, CaptureTurnsStreamWorkIntoNodes) {
  Context* c = primary();
  Log log;
  Stream* s = new_stream(c);
  EXPECT_EQ(begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);
  EXPECT_TRUE(is_capturing(s));
  EXPECT_EQ(submit(s, log.append(1)), 0u);
  EXPECT_EQ(submit(s, log.append(2)), 0u);
  CaptureInfo info = capture_info(s);
  EXPECT_EQ(info.status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  ASSERT_EQ(info.frontier->size(), 1u);
  Graph* g = nullptr;
  EXPECT_EQ(end_capture(s, &g), CUDA_SUCCESS);
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(is_capturing(s));
  EXPECT_TRUE(log.take().empty()); // nothing ran
  ASSERT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[1]->dependencies, std::vector<GraphNode*>{g->nodes[0]});
  auto exec = instantiate(g, 0);
  ASSERT_TRUE(exec);
  EXPECT_EQ(launch_graph(exec.value(), s), CUDA_SUCCESS);
  EXPECT_EQ(s->synchronize(), CUDA_SUCCESS);
  EXPECT_EQ(log.take(), (std::vector<int>{1, 2}));
  // The legacy stream cannot capture.
  EXPECT_EQ(begin_capture(resolve_stream(nullptr, c, false), CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  destroy_exec(exec.value());
  destroy_graph(g);
  destroy_stream(s);
  release_primary(devices()[0]);
}

TEST(Graph, EventsForkAndJoinCapturingStreams) {
  Context* c = primary();
  Log log;
  Stream* s1 = new_stream(c);
  Stream* s2 = new_stream(c);
  auto fork = create_event(c, 0);
  auto join = create_event(c, 0);
  ASSERT_TRUE(fork && join);
  ASSERT_EQ(begin_capture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  submit(s1, log.append(1));
  record_event(fork.value(), s1);
  EXPECT_EQ(wait_event(s2, fork.value()), CUDA_SUCCESS);
  EXPECT_TRUE(is_capturing(s2));
  submit(s2, log.append(2));
  submit(s1, log.append(3));
  // Only the stream that began the capture ends it.
  Graph* not_ended = nullptr;
  EXPECT_EQ(end_capture(s2, &not_ended), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
  Stream* s3 = new_stream(c);
  record_event(join.value(), s2);
  EXPECT_EQ(wait_event(s1, join.value()), CUDA_SUCCESS);
  submit(s1, log.append(4));
  Graph* g = nullptr;
  ASSERT_EQ(end_capture(s1, &g), CUDA_SUCCESS);
  EXPECT_FALSE(is_capturing(s2));
  ASSERT_EQ(g->nodes.size(), 4u);
  GraphNode* last = g->nodes[3];
  EXPECT_EQ(last->dependencies.size(), 2u); // after 3 (s1) and 2 (s2)
  auto exec = instantiate(g, 0);
  ASSERT_TRUE(exec);
  EXPECT_EQ(launch_graph(exec.value(), s3), CUDA_SUCCESS);
  EXPECT_EQ(s3->synchronize(), CUDA_SUCCESS);
  std::vector<int> ran = log.take();
  ASSERT_EQ(ran.size(), 4u);
  EXPECT_EQ(ran.front(), 1);
  EXPECT_EQ(ran.back(), 4);

  // A forked stream that never rejoins leaves the capture unjoined.
  ASSERT_EQ(begin_capture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  record_event(fork.value(), s1);
  wait_event(s2, fork.value());
  submit(s2, log.append(5));
  Graph* unjoined = nullptr;
  EXPECT_EQ(end_capture(s1, &unjoined), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
  EXPECT_EQ(unjoined, nullptr);
  EXPECT_FALSE(is_capturing(s2));
  EXPECT_TRUE(log.take().empty());

  destroy_exec(exec.value());
  destroy_graph(g);
  for (Stream* s : {s1, s2, s3})
    destroy_stream(s);
  destroy_event(fork.value());
  destroy_event(join.value());
  release_primary(devices()[0]);
}

TEST(Graph, SynchronousWorkDuringCaptureFailsAndInvalidates) {
  Context* c = primary();
  Stream* s = new_stream(c);
  Stream* other = new_stream(c);
  bool ran = false;
  Work mark = [&] {
    ran = true;
    return CUDA_SUCCESS;
  };
  ASSERT_EQ(begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(submit_and_wait(s, mark), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(capture_info(s).status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  Graph* g = nullptr;
  EXPECT_EQ(end_capture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(g, nullptr);

  // Global mode forbids synchronous work on other streams too, unless the thread relaxes.
  ASSERT_EQ(begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(exchange_capture_mode(CU_STREAM_CAPTURE_MODE_RELAXED), CU_STREAM_CAPTURE_MODE_GLOBAL);
  EXPECT_EQ(submit_and_wait(other, mark), CUDA_SUCCESS);
  EXPECT_EQ(exchange_capture_mode(CU_STREAM_CAPTURE_MODE_GLOBAL), CU_STREAM_CAPTURE_MODE_RELAXED);
  EXPECT_EQ(capture_info(s).status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  EXPECT_EQ(submit_and_wait(other, mark), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(end_capture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

  // A thread-local capture does not concern other threads.
  ASSERT_EQ(begin_capture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  CUresult elsewhere = CUDA_ERROR_UNKNOWN;
  std::thread([&] { elsewhere = submit_and_wait(other, [] { return CUDA_SUCCESS; }); }).join();
  EXPECT_EQ(elsewhere, CUDA_SUCCESS);
  EXPECT_EQ(end_capture(s, &g), CUDA_SUCCESS);
  ASSERT_NE(g, nullptr);
  destroy_graph(g);

  // After all that the stream runs work again.
  ran = false;
  EXPECT_EQ(submit_and_wait(s, mark), CUDA_SUCCESS);
  EXPECT_TRUE(ran);
  destroy_stream(s);
  destroy_stream(other);
  release_primary(devices()[0]);
}

TEST(Graph, ExecUpdateNeedsTheSameTopology) {
  Context* c = primary();
  Log log;
  auto build = [&](int base) {
    Graph* g = create_graph();
    GraphNode* a = add_node(g, work_node(log.append(base)), {});
    add_node(g, work_node(log.append(base + 1)), {a});
    return g;
  };
  Graph* g1 = build(10);
  Graph* g2 = build(20);
  auto exec = instantiate(g1, 0);
  ASSERT_TRUE(exec);
  CUgraphExecUpdateResult result;
  GraphNode* error_node = nullptr;
  EXPECT_EQ(update_exec(exec.value(), g2, result, error_node), CUDA_SUCCESS);
  EXPECT_EQ(result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  Stream* s = new_stream(c);
  launch_graph(exec.value(), s);
  s->synchronize();
  EXPECT_EQ(log.take(), (std::vector<int>{20, 21}));
  // Node parameters set on the executable graph alone, by the instantiated graph's node.
  EXPECT_EQ(set_exec_node(exec.value(), g1->nodes[1], work_node(log.append(99))), CUDA_SUCCESS);
  EXPECT_EQ(set_exec_node(exec.value(), g2->nodes[1], work_node(log.append(98))),
            CUDA_ERROR_INVALID_VALUE);
  launch_graph(exec.value(), s);
  s->synchronize();
  EXPECT_EQ(log.take(), (std::vector<int>{20, 99}));
  // One more edge: another topology.
  add_node(g2, GraphNode{}, {g2->nodes[0]});
  EXPECT_EQ(update_exec(exec.value(), g2, result, error_node),
            CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
  destroy_exec(exec.value());
  destroy_graph(g1);
  destroy_graph(g2);
  destroy_stream(s);
  release_primary(devices()[0]);
}

TEST(Graph, UserObjectsLiveWhileAGraphOrLaunchHoldsThem) {
  static int destroyed = 0;
  destroyed = 0;
  UserObject* o = create_user_object(
      &destroyed, [](void* p) { ++*static_cast<int*>(p); }, 1);
  Graph* g = create_graph();
  graph_retain_user_object(g, o, 1, /*move=*/true); // takes over the caller's reference
  EXPECT_EQ(graph_release_user_object(g, o, 2), CUDA_ERROR_INVALID_VALUE);
  add_node(g, GraphNode{}, {});
  Graph* copy = clone_graph(g);
  auto exec = instantiate(g, 0);
  ASSERT_TRUE(exec);
  EXPECT_EQ(destroy_graph(g), CUDA_SUCCESS);
  EXPECT_EQ(destroy_graph(copy), CUDA_SUCCESS);
  EXPECT_EQ(destroyed, 0); // the executable graph still holds it
  EXPECT_EQ(find_user_object(to_handle(o)), o);
  EXPECT_EQ(destroy_exec(exec.value()), CUDA_SUCCESS);
  EXPECT_EQ(destroyed, 1);
  EXPECT_EQ(find_user_object(to_handle(o)), nullptr);
}

TEST(Graph, DisabledNodesDoNothing) {
  Context* c = primary();
  Log log;
  Graph* g = create_graph();
  GraphNode* a = add_node(g, work_node(log.append(1)), {});
  add_node(g, work_node(log.append(2)), {a});
  auto exec = instantiate(g, 0);
  ASSERT_TRUE(exec);
  EXPECT_EQ(set_exec_node_enabled(exec.value(), a, false), CUDA_SUCCESS);
  bool enabled = true;
  EXPECT_EQ(exec_node_enabled(exec.value(), a, enabled), CUDA_SUCCESS);
  EXPECT_FALSE(enabled);
  Stream* s = new_stream(c);
  launch_graph(exec.value(), s);
  s->synchronize();
  EXPECT_EQ(log.take(), (std::vector<int>{2}));
  EXPECT_EQ(set_exec_node_enabled(exec.value(), a, true), CUDA_SUCCESS);
  launch_graph(exec.value(), s);
  s->synchronize();
  EXPECT_EQ(log.take(), (std::vector<int>{1, 2}));
  destroy_exec(exec.value());
  destroy_graph(g);
  destroy_stream(s);
  release_primary(devices()[0]);
}

TEST(Graph, ChildGraphOfAnExecutableGraphCanBeReplaced) {
  Context* c = primary();
  Log log;
  auto child_of = [&](int base) {
    Graph* g = create_graph();
    GraphNode* a = add_node(g, work_node(log.append(base)), {});
    add_node(g, work_node(log.append(base + 1)), {a});
    return g;
  };
  Graph* first = child_of(10);
  Graph* parent = create_graph();
  GraphNode nested;
  nested.type = CU_GRAPH_NODE_TYPE_GRAPH;
  nested.child = clone_graph(first);
  GraphNode* n = add_node(parent, nested, {});
  add_node(parent, work_node(log.append(1)), {n});
  auto exec = instantiate(parent, 0);
  ASSERT_TRUE(exec);
  Graph* second = child_of(20);
  EXPECT_EQ(set_exec_child_graph(exec.value(), n, second), CUDA_SUCCESS);
  Graph* other_shape = create_graph();
  add_node(other_shape, GraphNode{}, {});
  EXPECT_EQ(set_exec_child_graph(exec.value(), n, other_shape), CUDA_ERROR_INVALID_VALUE);
  Stream* s = new_stream(c);
  launch_graph(exec.value(), s);
  s->synchronize();
  EXPECT_EQ(log.take(), (std::vector<int>{20, 21, 1}));
  destroy_exec(exec.value());
  for (Graph* g : {first, parent, second, other_shape})
    destroy_graph(g);
  destroy_stream(s);
  release_primary(devices()[0]);
}

TEST(Graph, LaunchIntoACaptureAndStreamsDestroyedWhileCapturing) {
  Context* c = primary();
  Log log;
  Graph* inner = create_graph();
  add_node(inner, work_node(log.append(1)), {});
  auto inner_exec = instantiate(inner, 0);
  ASSERT_TRUE(inner_exec);
  Stream* s = new_stream(c);
  ASSERT_EQ(begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(launch_graph(inner_exec.value(), s), CUDA_SUCCESS);
  submit(s, log.append(2));
  Graph* outer = nullptr;
  ASSERT_EQ(end_capture(s, &outer), CUDA_SUCCESS);
  ASSERT_EQ(outer->nodes.size(), 2u);
  EXPECT_EQ(outer->nodes[0]->type, CU_GRAPH_NODE_TYPE_GRAPH);
  EXPECT_TRUE(log.take().empty());
  auto outer_exec = instantiate(outer, 0);
  ASSERT_TRUE(outer_exec);
  launch_graph(outer_exec.value(), s);
  s->synchronize();
  EXPECT_EQ(log.take(), (std::vector<int>{1, 2}));

  // A capturing stream that is destroyed abandons its capture.
  Stream* doomed = new_stream(c);
  ASSERT_EQ(begin_capture(doomed, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(destroy_stream(doomed), CUDA_SUCCESS);
  EXPECT_FALSE(any_capture());
  EXPECT_EQ(submit_and_wait(s, log.append(3)), CUDA_SUCCESS);
  EXPECT_EQ(log.take(), (std::vector<int>{3}));

  destroy_exec(outer_exec.value());
  destroy_exec(inner_exec.value());
  destroy_graph(outer);
  destroy_graph(inner);
  destroy_stream(s);
  release_primary(devices()[0]);
}

TEST(Graph, LargeCapturedGraphsInstantiateAndRun) {
  Context* c = primary();
  Stream* s = new_stream(c);
  std::atomic<int> ran{0};
  constexpr int kNodes = 20000;
  ASSERT_EQ(begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  for (int i = 0; i < kNodes; ++i)
    submit(s, [&ran] {
      ++ran;
      return CUDA_SUCCESS;
    });
  Graph* g = nullptr;
  ASSERT_EQ(end_capture(s, &g), CUDA_SUCCESS);
  auto exec = instantiate(g, 0);
  ASSERT_TRUE(exec);
  EXPECT_EQ(launch_graph(exec.value(), s), CUDA_SUCCESS);
  EXPECT_EQ(s->synchronize(), CUDA_SUCCESS);
  EXPECT_EQ(ran.load(), kNodes);
  destroy_exec(exec.value());
  destroy_graph(g);
  destroy_stream(s);
  release_primary(devices()[0]);
}
