// Kernels in CUDA graphs: launches captured from streams, kernel nodes added explicitly,
// kernel node parameters changed in the graph and in the executable graph. Checks every
// result.
// variants: all
#include <cstdio>
#include <vector>

#include "check.h"

__global__ void axpy(float a, const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

static bool all_near(const float* p, int n, float value) {
  for (int i = 0; i < n; ++i)
    if (p[i] != value) return false;
  return true;
}

int main() {
  const int n = 1000;
  const size_t bytes = n * sizeof(float);
  float *x, *y, *host;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  CHECK(cudaMallocHost(&host, bytes));
  std::vector<float> ones(n, 1.0f);
  CHECK(cudaMemcpy(x, ones.data(), bytes, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // Captured: y = 0; y += 2x; y += 3x; copy out.
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemsetAsync(y, 0, bytes, s));
  axpy<<<4, 128, 0, s>>>(2.0f, x, y, n);
  CHECK(cudaGetLastError());
  axpy<<<4, 128, 0, s>>>(3.0f, x, y, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(host, y, bytes, cudaMemcpyDeviceToHost, s));
  cudaGraph_t graph;
  CHECK(cudaStreamEndCapture(s, &graph));
  size_t count = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  EXPECT(count == 4);
  std::vector<cudaGraphNode_t> nodes(count);
  CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  cudaGraphNode_t second_kernel = nullptr;
  int kernels = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    CHECK(cudaGraphNodeGetType(node, &type));
    if (type == cudaGraphNodeTypeKernel && ++kernels == 2) second_kernel = node;
  }
  EXPECT(kernels == 2);
  cudaKernelNodeParams kp = {};
  CHECK(cudaGraphKernelNodeGetParams(second_kernel, &kp));
  EXPECT(kp.gridDim.x == 4 && kp.blockDim.x == 128);
  EXPECT(*static_cast<float*>(kp.kernelParams[0]) == 3.0f);

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int round = 0; round < 3; ++round) {
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    EXPECT(all_near(host, n, 5.0f));
  }

  // The executable graph's copy of the second launch: a = 10.
  float ten = 10.0f;
  int size = n;
  void* args[] = {&ten, &x, &y, &size};
  kp.kernelParams = args;
  CHECK(cudaGraphExecKernelNodeSetParams(exec, second_kernel, &kp));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(all_near(host, n, 12.0f));

  // An explicit kernel node after a memset node.
  cudaGraph_t g2;
  CHECK(cudaGraphCreate(&g2, 0));
  cudaMemsetParams ms = {};
  ms.dst = y;
  ms.value = 0;
  ms.elementSize = 4;
  ms.width = n;
  ms.height = 1;
  cudaGraphNode_t fill, kernel;
  CHECK(cudaGraphAddMemsetNode(&fill, g2, nullptr, 0, &ms));
  float seven = 7.0f;
  void* args7[] = {&seven, &x, &y, &size};
  cudaKernelNodeParams k7 = {};
  k7.func = (void*)axpy;
  k7.gridDim = dim3(2);
  k7.blockDim = dim3(64);
  k7.kernelParams = args7;
  CHECK(cudaGraphAddKernelNode(&kernel, g2, &fill, 1, &k7));
  cudaGraphExec_t exec2;
  CHECK(cudaGraphInstantiate(&exec2, g2, 0));
  CHECK(cudaGraphLaunch(exec2, s));
  CHECK(cudaMemcpyAsync(host, y, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(all_near(host, n, 7.0f));

  CHECK(cudaGraphExecDestroy(exec2));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(g2));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFreeHost(host));
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("graphs_kernels: all checks passed\n");
  return 0;
}
