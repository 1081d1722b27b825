// Conditional graph nodes (IF, IF/ELSE, WHILE, SWITCH) driven by the default value of
// their handle; kernels cannot set conditions yet (cudaGraphSetConditional).
#include <cstdint>
#include <vector>

#include "libcuda_loader.h"

namespace {

class Conditional : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, 0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuStreamCreate)(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuMemAlloc)(&words, 4 * 16), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuGraphCreate)(&graph, 0), CUDA_SUCCESS);
  }
  void TearDown() override {
    CU(cuGraphDestroy)(graph);
    CU(cuMemFree)(words);
    CU(cuStreamDestroy)(stream);
    CU(cuDevicePrimaryCtxRelease)(0);
  }

  // Adds to `body` a fill of word `index` with `value`.
  void fill(CUgraph body, unsigned index, unsigned value) {
    CUDA_MEMSET_NODE_PARAMS m{};
    m.dst = words + 4 * index;
    m.value = value;
    m.elementSize = 4;
    m.width = 1;
    m.height = 1;
    CUgraphNode n;
    ASSERT_EQ(CU(cuGraphAddMemsetNode)(&n, body, nullptr, 0, &m, ctx), CUDA_SUCCESS);
  }

  CUresult add_conditional(CUgraphConditionalHandle h, CUgraphConditionalNodeType type,
                           unsigned size, CUgraph* bodies, CUgraphNode* out = nullptr) {
    CUgraphNodeParams p{};
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = h;
    p.conditional.type = type;
    p.conditional.size = size;
    p.conditional.phGraph_out = bodies;
    p.conditional.ctx = ctx;
    CUgraphNode node;
    return CU(cuGraphAddNode)(out ? out : &node, graph, nullptr, nullptr, 0, &p);
  }

  // Instantiates and launches the graph after zeroing the words; returns them.
  std::vector<uint32_t> run() {
    std::vector<uint32_t> out(16, 0xdead);
    EXPECT_EQ(CU(cuMemsetD32)(words, 0, 16), CUDA_SUCCESS);
    CUgraphExec exec;
    EXPECT_EQ(CU(cuGraphInstantiate)(&exec, graph, 0), CUDA_SUCCESS);
    EXPECT_EQ(CU(cuGraphLaunch)(exec, stream), CUDA_SUCCESS);
    EXPECT_EQ(CU(cuStreamSynchronize)(stream), CUDA_SUCCESS);
    EXPECT_EQ(CU(cuGraphExecDestroy)(exec), CUDA_SUCCESS);
    EXPECT_EQ(CU(cuMemcpyDtoH)(out.data(), words, 64), CUDA_SUCCESS);
    return out;
  }

  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  CUdeviceptr words = 0;
  CUgraph graph = nullptr;
};

TEST_F(Conditional, IfElseAndSwitchFollowTheDefaultValue) {
  CUgraphConditionalHandle yes, no, pick;
  ASSERT_EQ(CU(cuGraphConditionalHandleCreate)(&yes, graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS);
  ASSERT_EQ(CU(cuGraphConditionalHandleCreate)(&no, graph, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS);
  ASSERT_EQ(CU(cuGraphConditionalHandleCreate)(&pick, graph, ctx, 2, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS);
  CUgraph if_yes[1], if_no[2], cases[3];
  ASSERT_EQ(add_conditional(yes, CU_GRAPH_COND_TYPE_IF, 1, if_yes), CUDA_SUCCESS);
  ASSERT_EQ(add_conditional(no, CU_GRAPH_COND_TYPE_IF, 2, if_no), CUDA_SUCCESS);
  ASSERT_EQ(add_conditional(pick, CU_GRAPH_COND_TYPE_SWITCH, 3, cases), CUDA_SUCCESS);
  fill(if_yes[0], 0, 10);
  fill(if_no[0], 1, 20); // then: not taken
  fill(if_no[1], 2, 30); // else
  for (unsigned i = 0; i < 3; ++i)
    fill(cases[i], 3 + i, 40 + i);
  std::vector<uint32_t> out = run();
  EXPECT_EQ(out[0], 10u);
  EXPECT_EQ(out[1], 0u);
  EXPECT_EQ(out[2], 30u);
  EXPECT_EQ(out[3], 0u);
  EXPECT_EQ(out[4], 0u);
  EXPECT_EQ(out[5], 42u);
  // A clone carries the bodies and the conditions.
  CUgraph clone;
  ASSERT_EQ(CU(cuGraphClone)(&clone, graph), CUDA_SUCCESS);
  std::swap(clone, graph);
  EXPECT_EQ(run(), out);
  std::swap(clone, graph);
  EXPECT_EQ(CU(cuGraphDestroy)(clone), CUDA_SUCCESS);
  CUgraphNodeType type;
  size_t count = 0;
  ASSERT_EQ(CU(cuGraphGetNodes)(graph, nullptr, &count), CUDA_SUCCESS);
  std::vector<CUgraphNode> nodes(count);
  ASSERT_EQ(CU(cuGraphGetNodes)(graph, nodes.data(), &count), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuGraphNodeGetType)(nodes[0], &type), CUDA_SUCCESS);
  EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_CONDITIONAL);
}

TEST_F(Conditional, SwitchOutOfRangeAndNestedBodies) {
  CUgraphConditionalHandle outer, inner;
  ASSERT_EQ(CU(cuGraphConditionalHandleCreate)(&outer, graph, ctx, 7, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS);
  ASSERT_EQ(CU(cuGraphConditionalHandleCreate)(&inner, graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS);
  CUgraph cases[2];
  ASSERT_EQ(add_conditional(outer, CU_GRAPH_COND_TYPE_SWITCH, 2, cases), CUDA_SUCCESS);
  fill(cases[0], 0, 1);
  fill(cases[1], 1, 2);
  // An IF inside a body of another IF.
  CUgraphConditionalHandle always;
  ASSERT_EQ(
      CU(cuGraphConditionalHandleCreate)(&always, graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
      CUDA_SUCCESS);
  CUgraph then[1];
  ASSERT_EQ(add_conditional(always, CU_GRAPH_COND_TYPE_IF, 1, then), CUDA_SUCCESS);
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional = {inner, CU_GRAPH_COND_TYPE_IF, 1, nullptr, ctx};
  CUgraph nested[1];
  p.conditional.phGraph_out = nested;
  CUgraphNode n;
  ASSERT_EQ(CU(cuGraphAddNode)(&n, then[0], nullptr, nullptr, 0, &p), CUDA_SUCCESS);
  fill(nested[0], 5, 55);
  std::vector<uint32_t> out = run();
  EXPECT_EQ(out[0], 0u); // value 7 matches no case
  EXPECT_EQ(out[1], 0u);
  EXPECT_EQ(out[5], 55u);
}

TEST_F(Conditional, WhileLoops) {
  CUgraphConditionalHandle never;
  ASSERT_EQ(CU(cuGraphConditionalHandleCreate)(&never, graph, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT),
            CUDA_SUCCESS);
  CUgraph body[1];
  ASSERT_EQ(add_conditional(never, CU_GRAPH_COND_TYPE_WHILE, 1, body), CUDA_SUCCESS);
  fill(body[0], 0, 9);
  EXPECT_EQ(run()[0], 0u);
  // A loop whose condition nothing can change would never end: the launch fails instead.
  CUgraph forever_graph;
  ASSERT_EQ(CU(cuGraphCreate)(&forever_graph, 0), CUDA_SUCCESS);
  std::swap(forever_graph, graph);
  CUgraphConditionalHandle forever;
  ASSERT_EQ(
      CU(cuGraphConditionalHandleCreate)(&forever, graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT),
      CUDA_SUCCESS);
  ASSERT_EQ(add_conditional(forever, CU_GRAPH_COND_TYPE_WHILE, 1, body), CUDA_SUCCESS);
  fill(body[0], 0, 9);
  CUgraphExec exec;
  ASSERT_EQ(CU(cuGraphInstantiate)(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuGraphLaunch)(exec, stream), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuStreamSynchronize)(stream), CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(CU(cuGraphExecDestroy)(exec), CUDA_SUCCESS);
  std::swap(forever_graph, graph);
  EXPECT_EQ(CU(cuGraphDestroy)(forever_graph), CUDA_SUCCESS);
}

TEST_F(Conditional, Misuse) {
  CUgraphConditionalHandle h;
  EXPECT_EQ(CU(cuGraphConditionalHandleCreate)(nullptr, graph, ctx, 0, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuGraphConditionalHandleCreate)(&h, graph, ctx, 0, 0x10), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuGraphConditionalHandleCreate)(&h, nullptr, ctx, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CUgraph gone;
  ASSERT_EQ(CU(cuGraphCreate)(&gone, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuGraphDestroy)(gone), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuGraphConditionalHandleCreate)(&h, gone, ctx, 0, 0), CUDA_ERROR_INVALID_HANDLE);
  ASSERT_EQ(CU(cuGraphConditionalHandleCreate)(&h, graph, ctx, 1, 0), CUDA_SUCCESS);
  CUgraph bodies[4];
  EXPECT_EQ(add_conditional(h, CU_GRAPH_COND_TYPE_IF, 3, bodies), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(add_conditional(h, CU_GRAPH_COND_TYPE_IF, 0, bodies), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(add_conditional(h, CU_GRAPH_COND_TYPE_WHILE, 2, bodies), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(add_conditional(h, CU_GRAPH_COND_TYPE_SWITCH, 0, bodies), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(add_conditional(h, CUgraphConditionalNodeType(9), 1, bodies), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(add_conditional(h, CU_GRAPH_COND_TYPE_IF, 1, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(add_conditional(0x1234, CU_GRAPH_COND_TYPE_IF, 1, bodies), CUDA_ERROR_INVALID_VALUE);
  // Bodies hold kernels, copies, fills, empty nodes, child graphs and conditionals only.
  CUgraphNode node;
  ASSERT_EQ(add_conditional(h, CU_GRAPH_COND_TYPE_IF, 1, bodies, &node), CUDA_SUCCESS);
  CUDA_HOST_NODE_PARAMS host{[](void*) {}, nullptr};
  CUgraphNode host_node;
  ASSERT_EQ(CU(cuGraphAddHostNode)(&host_node, bodies[0], nullptr, 0, &host), CUDA_SUCCESS);
  CUgraphExec exec;
  EXPECT_EQ(CU(cuGraphInstantiate)(&exec, graph, 0), CUDA_ERROR_INVALID_VALUE);
  // Conditional parameters cannot be changed after the fact.
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  EXPECT_EQ(CU(cuGraphNodeSetParams)(node, &p), CUDA_ERROR_NOT_SUPPORTED);
  // The bodies go with their node.
  ASSERT_EQ(CU(cuGraphDestroyNode)(node), CUDA_SUCCESS);
  CUgraphNode more;
  EXPECT_EQ(CU(cuGraphAddEmptyNode)(&more, bodies[0], nullptr, 0), CUDA_ERROR_INVALID_HANDLE);
}

} // namespace
