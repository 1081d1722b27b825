// A kernel chain captured from two streams that fork and join through events (with a host
// node in one branch), instantiated once and launched several times; each launch builds on
// the previous one's output. Then a kernel node's arguments are changed in the executable
// graph.
// variants: all
#include <vector>

#include "check.h"

__global__ void scale_add(float* x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}

__global__ void combine(float* out, const float* x, const float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}

static void CUDART_CB count_launch(void* p) {
  ++*static_cast<int*>(p);
}

int main() {
  const int n = 2000, threads = 128, blocks = (n + threads - 1) / threads;
  float *x, *y, *out;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemset(x, 0, n * sizeof(float)));
  CHECK(cudaMemset(y, 0, n * sizeof(float)));
  cudaStream_t main_s, side;
  CHECK(cudaStreamCreateWithFlags(&main_s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  int launches = 0;

  CHECK(cudaStreamBeginCapture(main_s, cudaStreamCaptureModeGlobal));
  CHECK(cudaEventRecord(fork, main_s));
  CHECK(cudaStreamWaitEvent(side, fork, 0));
  scale_add<<<blocks, threads, 0, main_s>>>(x, 2.0f, 1.0f, n); // x = 2x + 1
  scale_add<<<blocks, threads, 0, main_s>>>(x, 1.0f, 1.0f, n); // x = x + 1
  scale_add<<<blocks, threads, 0, side>>>(y, 1.0f, 3.0f, n);   // y = y + 3
  CHECK(cudaLaunchHostFunc(side, count_launch, &launches));
  CHECK(cudaEventRecord(join, side));
  CHECK(cudaStreamWaitEvent(main_s, join, 0));
  combine<<<blocks, threads, 0, main_s>>>(out, x, y, n);
  cudaGraph_t graph;
  CHECK(cudaStreamEndCapture(main_s, &graph));
  size_t nodes = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT(nodes == 5);
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));

  float xs = 0, ys = 0;
  std::vector<float> host(n), want(n);
  for (int launch = 0; launch < 3; ++launch) {
    CHECK(cudaGraphLaunch(exec, main_s));
    xs = 2 * xs + 2, ys += 3;
  }
  CHECK(cudaStreamSynchronize(main_s));
  CHECK(cudaMemcpy(host.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    want[i] = xs + ys;
  expect_equal("after 3 launches", host.data(), want.data(), n);
  EXPECT(launches == 3);

  // Point the combine node at (y, y) in the executable graph only.
  cudaGraphNode_t list[8];
  size_t count = 8;
  CHECK(cudaGraphGetNodes(graph, list, &count));
  bool updated = false;
  for (size_t k = 0; k < count; ++k) {
    cudaGraphNodeType type;
    CHECK(cudaGraphNodeGetType(list[k], &type));
    if (type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams p;
    CHECK(cudaGraphKernelNodeGetParams(list[k], &p));
    if (p.func != (void*)combine) continue;
    void* args[] = {&out, &y, &y, (void*)&n};
    p.kernelParams = args;
    CHECK(cudaGraphExecKernelNodeSetParams(exec, list[k], &p));
    updated = true;
  }
  EXPECT(updated);
  CHECK(cudaGraphLaunch(exec, main_s));
  xs = 2 * xs + 2, ys += 3;
  CHECK(cudaStreamSynchronize(main_s));
  CHECK(cudaMemcpy(host.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    want[i] = ys + ys;
  expect_equal("after the update", host.data(), want.data(), n);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return report("graph_capture");
}
