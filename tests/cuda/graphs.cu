// CUDA graphs through the runtime API, without kernels: stream capture across two
// streams forked and joined by events, a graph built node by node with dependencies,
// repeated launches, executable graph updates, and the errors of synchronous calls made
// while a stream captures. Checks every result.
// variants: all
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <vector>

#include "check.h"

static void CUDART_CB count_up(void* counter) {
  ++*static_cast<int*>(counter);
}
static void CUDART_CB add_ten(void* counter) {
  *static_cast<int*>(counter) += 10;
}

static bool all_equal(const int* p, size_t n, int value) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != value) return false;
  return true;
}

// Capture: s1 copies the input to `a` and forks s2, which fills `b`; s1 copies a to c
// meanwhile; s2 joins back; s1 copies b and c to the host and counts.
static int captured_graph() {
  const size_t n = 4096, bytes = n * sizeof(int);
  int *in, *out_b, *out_c, *a, *b, *c;
  CHECK(cudaMallocHost(&in, bytes));
  CHECK(cudaMallocHost(&out_b, bytes));
  CHECK(cudaMallocHost(&out_c, bytes));
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreate(&s1)); // a blocking stream captures as well
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  int launches = 0, side = 0;

  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus status;
  CHECK(cudaStreamIsCapturing(s1, &status));
  EXPECT(status == cudaStreamCaptureStatusActive);
  CHECK(cudaStreamIsCapturing(s2, &status));
  EXPECT(status == cudaStreamCaptureStatusNone);
  CHECK(cudaMemcpyAsync(a, in, bytes, cudaMemcpyHostToDevice, s1));
  CHECK(cudaEventRecord(fork, s1));
  CHECK(cudaStreamWaitEvent(s2, fork, 0));
  CHECK(cudaStreamIsCapturing(s2, &status));
  EXPECT(status == cudaStreamCaptureStatusActive);
  // A captured record is no completion to query; the legacy stream is unusable while
  // a blocking stream captures.
  EXPECT(cudaEventQuery(fork) == cudaErrorCapturedEvent);
  EXPECT(cudaStreamIsCapturing(cudaStreamLegacy, &status) == cudaErrorStreamCaptureImplicit);
  cudaGetLastError();
  CHECK(cudaMemsetAsync(b, 0x11, bytes, s2));
  CHECK(cudaLaunchHostFunc(s2, count_up, &side));
  CHECK(cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice, s1));
  CHECK(cudaEventRecord(join, s2));
  CHECK(cudaStreamWaitEvent(s1, join, 0));
  CHECK(cudaMemcpyAsync(out_b, b, bytes, cudaMemcpyDeviceToHost, s1));
  CHECK(cudaMemcpyAsync(out_c, c, bytes, cudaMemcpyDeviceToHost, s1));
  CHECK(cudaLaunchHostFunc(s1, count_up, &launches));
  unsigned long long id = 0;
  cudaGraph_t capturing = nullptr;
  const cudaGraphNode_t* frontier = nullptr;
  size_t frontier_size = 0;
  CHECK(cudaStreamGetCaptureInfo(s1, &status, &id, &capturing, &frontier, nullptr, &frontier_size));
  EXPECT(status == cudaStreamCaptureStatusActive && capturing != nullptr && frontier_size == 1);
  cudaGraphNodeType last_type;
  CHECK(cudaGraphNodeGetType(frontier[0], &last_type));
  EXPECT(last_type == cudaGraphNodeTypeHost);
  cudaGraph_t graph;
  CHECK(cudaStreamEndCapture(s1, &graph));
  CHECK(cudaStreamIsCapturing(s2, &status));
  EXPECT(status == cudaStreamCaptureStatusNone);
  EXPECT(launches == 0 && side == 0); // captured, not run

  size_t count = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  EXPECT(count == 7);
  std::vector<cudaGraphNode_t> nodes(count);
  CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  int memcpys = 0, memsets = 0, hosts = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    CHECK(cudaGraphNodeGetType(node, &type));
    memcpys += type == cudaGraphNodeTypeMemcpy;
    memsets += type == cudaGraphNodeTypeMemset;
    hosts += type == cudaGraphNodeTypeHost;
  }
  EXPECT(memcpys == 4 && memsets == 1 && hosts == 2);
  CHECK(cudaGraphGetRootNodes(graph, nullptr, &count));
  EXPECT(count == 1);

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < n; ++i)
      in[i] = int(i) * 7 + round;
    std::memset(out_b, 0, bytes);
    std::memset(out_c, 0, bytes);
    CHECK(cudaGraphLaunch(exec, s1));
    CHECK(cudaStreamSynchronize(s1));
    bool ok = true;
    for (size_t i = 0; i < n; ++i)
      ok = ok && out_c[i] == int(i) * 7 + round;
    EXPECT(ok);
    EXPECT(all_equal(out_b, n, 0x11111111));
    EXPECT(launches == round + 1 && side == round + 1);
  }
  // Launches on another stream are ordered the same way.
  CHECK(cudaGraphLaunch(exec, s2));
  CHECK(cudaGraphLaunch(exec, s2));
  CHECK(cudaStreamSynchronize(s2));
  EXPECT(launches == 5 && side == 5);

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaEventDestroy(fork));
  CHECK(cudaEventDestroy(join));
  CHECK(cudaStreamDestroy(s1));
  CHECK(cudaStreamDestroy(s2));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK(cudaFreeHost(in));
  CHECK(cudaFreeHost(out_b));
  CHECK(cudaFreeHost(out_c));
  return 0;
}

// memset(d, value) -> memcpy(host <- d) -> host(count); an empty node after both
// the memset and a second host node.
static int build_graph(cudaGraph_t* out, int* d, int* host, size_t n, int value, int* counter,
                       cudaGraphNode_t* memset_node, cudaGraphNode_t* host_node) {
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaMemsetParams ms = {};
  ms.dst = d;
  ms.value = unsigned(value);
  ms.elementSize = 4;
  ms.width = n;
  ms.height = 1;
  CHECK(cudaGraphAddMemsetNode(memset_node, g, nullptr, 0, &ms));
  cudaGraphNode_t copy;
  CHECK(cudaGraphAddMemcpyNode1D(&copy, g, memset_node, 1, host, d, n * sizeof(int),
                                 cudaMemcpyDeviceToHost));
  cudaHostNodeParams hp = {count_up, counter};
  CHECK(cudaGraphAddHostNode(host_node, g, nullptr, 0, &hp));
  CHECK(cudaGraphAddDependencies(g, &copy, host_node, nullptr, 1));
  cudaGraphNode_t other, empty;
  CHECK(cudaGraphAddHostNode(&other, g, nullptr, 0, &hp));
  cudaGraphNode_t before_empty[] = {*memset_node, other};
  CHECK(cudaGraphAddEmptyNode(&empty, g, before_empty, 2));
  *out = g;
  return 0;
}

static int explicit_graph() {
  const size_t n = 1000;
  int *d, *host;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  CHECK(cudaMallocHost(&host, n * sizeof(int)));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  int counter = 0;
  cudaGraph_t g;
  cudaGraphNode_t memset_node, host_node;
  if (build_graph(&g, d, host, n, 42, &counter, &memset_node, &host_node)) return 1;

  size_t count = 0;
  CHECK(cudaGraphGetNodes(g, nullptr, &count));
  EXPECT(count == 5);
  CHECK(cudaGraphGetRootNodes(g, nullptr, &count));
  EXPECT(count == 2);
  CHECK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &count));
  EXPECT(count == 4);
  cudaMemsetParams got = {};
  CHECK(cudaGraphMemsetNodeGetParams(memset_node, &got));
  EXPECT(got.value == 42 && got.width == n && got.elementSize == 4);
  cudaHostNodeParams hp = {};
  CHECK(cudaGraphHostNodeGetParams(host_node, &hp));
  EXPECT(hp.fn == count_up && hp.userData == &counter);

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, g, 0));
  for (int round = 0; round < 2; ++round) {
    std::memset(host, 0, n * sizeof(int));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    EXPECT(all_equal(host, n, 42));
  }
  EXPECT(counter == 4); // two host nodes, two launches

  // A clone knows its original's nodes.
  cudaGraph_t clone;
  CHECK(cudaGraphClone(&clone, g));
  cudaGraphNode_t cloned_memset;
  CHECK(cudaGraphNodeFindInClone(&cloned_memset, memset_node, clone));
  CHECK(cudaGraphMemsetNodeGetParams(cloned_memset, &got));
  EXPECT(got.value == 42);

  // Same topology, new parameters: the update takes them.
  cudaGraph_t g2;
  cudaGraphNode_t memset2, host2;
  int counter2 = 0;
  if (build_graph(&g2, d, host, n, 7, &counter2, &memset2, &host2)) return 1;
  cudaGraphExecUpdateResultInfo info;
  CHECK(cudaGraphExecUpdate(exec, g2, &info));
  EXPECT(info.result == cudaGraphExecUpdateSuccess);
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(all_equal(host, n, 7));
  EXPECT(counter == 4 && counter2 == 2);

  // Node parameters of the executable graph alone.
  cudaHostNodeParams ten = {add_ten, &counter};
  CHECK(cudaGraphExecHostNodeSetParams(exec, host_node, &ten));
  cudaMemsetParams ms = {};
  ms.dst = d;
  ms.value = 9;
  ms.elementSize = 4;
  ms.width = n;
  ms.height = 1;
  CHECK(cudaGraphExecMemsetNodeSetParams(exec, memset_node, &ms));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(all_equal(host, n, 9));
  EXPECT(counter == 14 && counter2 == 3);
  CHECK(cudaGraphMemsetNodeGetParams(memset_node, &got));
  EXPECT(got.value == 42); // the graph itself is unchanged

  // A different topology cannot be taken.
  cudaGraphNode_t extra;
  CHECK(cudaGraphAddEmptyNode(&extra, g2, nullptr, 0));
  cudaError_t err = cudaGraphExecUpdate(exec, g2, &info);
  EXPECT(err == cudaErrorGraphExecUpdateFailure);
  EXPECT(info.result == cudaGraphExecUpdateErrorTopologyChanged);
  cudaGetLastError();

  // A child graph runs inside its parent.
  cudaGraph_t parent;
  CHECK(cudaGraphCreate(&parent, 0));
  cudaGraphNode_t child_node;
  CHECK(cudaGraphAddChildGraphNode(&child_node, parent, nullptr, 0, clone));
  cudaGraphExec_t parent_exec;
  CHECK(cudaGraphInstantiate(&parent_exec, parent, 0));
  std::memset(host, 0, n * sizeof(int));
  CHECK(cudaGraphLaunch(parent_exec, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(all_equal(host, n, 42));
  EXPECT(counter == 16);

  CHECK(cudaGraphExecDestroy(parent_exec));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(parent));
  CHECK(cudaGraphDestroy(clone));
  CHECK(cudaGraphDestroy(g2));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(d));
  CHECK(cudaFreeHost(host));
  return 0;
}

static int capture_errors() {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* d;
  CHECK(cudaMalloc(&d, 256));
  int host[64] = {};

  // Synchronising a capturing stream is not allowed and ends the capture's validity.
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemsetAsync(d, 0, 256, s));
  EXPECT(cudaStreamSynchronize(s) == cudaErrorStreamCaptureUnsupported);
  cudaStreamCaptureStatus status;
  CHECK(cudaStreamIsCapturing(s, &status));
  EXPECT(status == cudaStreamCaptureStatusInvalidated);
  cudaGraph_t graph = nullptr;
  EXPECT(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
  EXPECT(graph == nullptr);
  cudaGetLastError();

  // A synchronous copy elsewhere during a global-mode capture is not allowed either.
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  EXPECT(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost) ==
         cudaErrorStreamCaptureUnsupported);
  EXPECT(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
  cudaGetLastError();

  // Work on the legacy stream would wait for a capturing blocking stream.
  cudaStream_t blocking;
  CHECK(cudaStreamCreate(&blocking));
  CHECK(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeRelaxed));
  EXPECT(cudaMemsetAsync(d, 0, 256, cudaStreamLegacy) == cudaErrorStreamCaptureImplicit);
  EXPECT(cudaStreamEndCapture(blocking, &graph) == cudaErrorStreamCaptureInvalidated);
  cudaGetLastError();
  CHECK(cudaStreamDestroy(blocking));

  // Ending a capture that was never begun.
  EXPECT(cudaStreamEndCapture(s, &graph) != cudaSuccess);
  cudaGetLastError();

  // The thread's capture interaction mode.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  EXPECT(mode == cudaStreamCaptureModeGlobal);
  CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  EXPECT(mode == cudaStreamCaptureModeRelaxed);

  // After all this the stream works normally.
  CHECK(cudaMemsetAsync(d, 0x22, 256, s));
  CHECK(cudaMemcpyAsync(host, d, sizeof host, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(all_equal(host, 64, 0x22222222));
  CHECK(cudaFree(d));
  CHECK(cudaStreamDestroy(s));
  return 0;
}

// Newer entry points: a node from generic parameters, capture into an existing graph,
// disabling a node of an executable graph.
static int generic_nodes() {
  const size_t n = 256, bytes = n * sizeof(int);
  int *d, *host;
  CHECK(cudaMalloc(&d, bytes));
  CHECK(cudaMallocHost(&host, bytes));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphNodeParams p = {};
  p.type = cudaGraphNodeTypeMemset;
  p.memset.dst = d;
  p.memset.value = 5;
  p.memset.elementSize = 4;
  p.memset.width = n;
  p.memset.height = 1;
  cudaGraphNode_t fill;
  CHECK(cudaGraphAddNode(&fill, g, nullptr, nullptr, 0, &p));
  CHECK(cudaStreamBeginCaptureToGraph(s, g, &fill, nullptr, 1, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemcpyAsync(host, d, bytes, cudaMemcpyDeviceToHost, s));
  cudaGraph_t same = nullptr;
  CHECK(cudaStreamEndCapture(s, &same));
  EXPECT(same == g);
  size_t count = 0;
  CHECK(cudaGraphGetNodes(g, nullptr, &count));
  EXPECT(count == 2);
  CHECK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &count));
  EXPECT(count == 1);

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, g, 0));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(all_equal(host, n, 5));
  CHECK(cudaMemset(d, 0, bytes));
  CHECK(cudaGraphNodeSetEnabled(exec, fill, 0));
  unsigned enabled = 1;
  CHECK(cudaGraphNodeGetEnabled(exec, fill, &enabled));
  EXPECT(enabled == 0);
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(all_equal(host, n, 0));
  CHECK(cudaGraphNodeSetEnabled(exec, fill, 1));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(all_equal(host, n, 5));

  // A pitched copy node: 4 rows of 3 ints out of rows of 8.
  int* pitched;
  size_t pitch;
  CHECK(cudaMallocPitch(&pitched, &pitch, 8 * sizeof(int), 4));
  CHECK(cudaMemset2D(pitched, pitch, 0x01, 8 * sizeof(int), 4));
  cudaMemcpy3DParms m = {};
  m.srcPtr = make_cudaPitchedPtr(pitched, pitch, 8, 4);
  m.dstPtr = make_cudaPitchedPtr(host, 3 * sizeof(int), 3, 4);
  m.extent = make_cudaExtent(3 * sizeof(int), 4, 1);
  m.kind = cudaMemcpyDeviceToHost;
  cudaGraph_t g3;
  CHECK(cudaGraphCreate(&g3, 0));
  cudaGraphNode_t copy;
  CHECK(cudaGraphAddMemcpyNode(&copy, g3, nullptr, 0, &m));
  cudaGraphExec_t exec3;
  CHECK(cudaGraphInstantiate(&exec3, g3, 0));
  std::memset(host, 0, bytes);
  CHECK(cudaGraphLaunch(exec3, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(all_equal(host, 12, 0x01010101));
  EXPECT(host[12] == 0);

  CHECK(cudaGraphExecDestroy(exec3));
  CHECK(cudaGraphDestroy(g3));
  CHECK(cudaFree(pitched));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(d));
  CHECK(cudaFreeHost(host));
  return 0;
}

static void CUDART_CB destroyed(void* flag) {
  *static_cast<volatile int*>(flag) = 1;
}

// A user object lives as long as a graph or an executable graph holds it.
static int user_objects() {
  static volatile int gone = 0;
  cudaUserObject_t object;
  CHECK(cudaUserObjectCreate(&object, (void*)&gone, destroyed, 1, cudaUserObjectNoDestructorSync));
  cudaGraph_t g;
  CHECK(cudaGraphCreate(&g, 0));
  CHECK(cudaGraphRetainUserObject(g, object, 1, cudaGraphUserObjectMove));
  cudaGraphNode_t empty;
  CHECK(cudaGraphAddEmptyNode(&empty, g, nullptr, 0));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, g, 0));
  CHECK(cudaGraphDestroy(g));
  EXPECT(gone == 0); // the executable graph holds a reference
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaGraphExecDestroy(exec));
  // CUDA may run the destructor a little later, on a thread of its own.
  for (int i = 0; i < 100 && !gone; ++i) {
    CHECK(cudaDeviceSynchronize());
    usleep(10000);
  }
  EXPECT(gone == 1);
  CHECK(cudaStreamDestroy(s));
  return 0;
}

// Stream-ordered allocation inside a capture becomes allocation and free nodes.
static int captured_allocation() {
  const size_t n = 512, bytes = n * sizeof(int);
  int* host;
  CHECK(cudaMallocHost(&host, bytes));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  int* scratch = nullptr;
  CHECK(cudaMallocAsync((void**)&scratch, bytes, s));
  EXPECT(scratch != nullptr);
  CHECK(cudaMemsetAsync(scratch, 0x33, bytes, s));
  CHECK(cudaMemcpyAsync(host, scratch, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaFreeAsync(scratch, s));
  cudaGraph_t g;
  CHECK(cudaStreamEndCapture(s, &g));
  size_t count = 0;
  CHECK(cudaGraphGetNodes(g, nullptr, &count));
  EXPECT(count == 4);
  std::vector<cudaGraphNode_t> nodes(count);
  CHECK(cudaGraphGetNodes(g, nodes.data(), &count));
  int allocs = 0, frees = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    CHECK(cudaGraphNodeGetType(node, &type));
    allocs += type == cudaGraphNodeTypeMemAlloc;
    frees += type == cudaGraphNodeTypeMemFree;
  }
  EXPECT(allocs == 1 && frees == 1);
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, g, 0));
  for (int round = 0; round < 2; ++round) {
    std::memset(host, 0, bytes);
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    EXPECT(all_equal(host, n, 0x33333333));
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFreeHost(host));
  return 0;
}

// Pitched fills and copies on a capturing stream become memset and memcpy nodes.
static int captured_pitched() {
  int* host;
  CHECK(cudaMallocHost(&host, 4 * 3 * sizeof(int)));
  int* d;
  size_t pitch;
  CHECK(cudaMallocPitch(&d, &pitch, 8 * sizeof(int), 4));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemset2DAsync(d, pitch, 0x44, 8 * sizeof(int), 4, s));
  CHECK(cudaMemcpy2DAsync(host, 3 * sizeof(int), d, pitch, 3 * sizeof(int), 4,
                          cudaMemcpyDeviceToHost, s));
  cudaGraph_t g;
  CHECK(cudaStreamEndCapture(s, &g));
  size_t count = 2;
  cudaGraphNode_t nodes[2];
  CHECK(cudaGraphGetNodes(g, nodes, &count));
  EXPECT(count == 2);
  cudaGraphNodeType first, second;
  CHECK(cudaGraphNodeGetType(nodes[0], &first));
  CHECK(cudaGraphNodeGetType(nodes[1], &second));
  EXPECT(first == cudaGraphNodeTypeMemset && second == cudaGraphNodeTypeMemcpy);
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, g, 0));
  std::memset(host, 0, 4 * 3 * sizeof(int));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(all_equal(host, 12, 0x44444444));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(d));
  CHECK(cudaFreeHost(host));
  return 0;
}

int main() {
  if (captured_graph() || explicit_graph() || capture_errors() || generic_nodes() ||
      user_objects() || captured_allocation() || captured_pitched())
    return 1;
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("graphs: all checks passed\n");
  return 0;
}
