// The CUDA runtime's memory, stream and event API without kernels: device queries,
// allocation kinds, every copy direction, fills, pointer attributes, stream ordering
// across streams with events, host callbacks, timing. Checks every result.
// variants: all
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.h"

static void CUDART_CB mark(void* flag) { *static_cast<int*>(flag) = 1; }

int main() {
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  EXPECT(count >= 1);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  EXPECT(prop.warpSize == 32);
  EXPECT(prop.maxThreadsPerBlock == 1024);
  EXPECT(prop.totalGlobalMem > 0);
  EXPECT(prop.unifiedAddressing == 1);
  int major = 0;
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  EXPECT(major == prop.major);
  printf("device 0: %s, compute capability %d.%d, %d multiprocessors\n", prop.name, prop.major, prop.minor,
         prop.multiProcessorCount);

  const size_t n = 1 << 20;
  std::vector<int> host(n), back(n);
  for (size_t i = 0; i < n; ++i)
    host[i] = int(i * 3);
  int *a, *b;
  CHECK(cudaMalloc(&a, n * sizeof(int)));
  CHECK(cudaMalloc(&b, n * sizeof(int)));
  CHECK(cudaMemcpy(a, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(b, a, n * sizeof(int), cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpy(back.data(), b, n * sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT(back == host);

  CHECK(cudaMemset(a, 0x5a, n * sizeof(int)));
  CHECK(cudaMemcpy(back.data(), a, sizeof(int) * 4, cudaMemcpyDefault));
  EXPECT(back[0] == 0x5a5a5a5a && back[3] == 0x5a5a5a5a);

  size_t free_bytes = 0, total_bytes = 0;
  CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  EXPECT(total_bytes > 0 && free_bytes <= total_bytes);

  cudaPointerAttributes attr;
  CHECK(cudaPointerGetAttributes(&attr, a + 10));
  EXPECT(attr.type == cudaMemoryTypeDevice);
  EXPECT(attr.device == 0);
  int on_stack = 0;
  CHECK(cudaPointerGetAttributes(&attr, &on_stack));
  EXPECT(attr.type == cudaMemoryTypeUnregistered);

  // Pinned memory, two streams ordered through an event, a host callback, timing.
  int* pinned;
  CHECK(cudaMallocHost(&pinned, n * sizeof(int)));
  for (size_t i = 0; i < n; ++i)
    pinned[i] = int(i) ^ 0x1234;
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreate(&s1));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t start, copied, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&copied));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, s1));
  CHECK(cudaMemcpyAsync(a, pinned, n * sizeof(int), cudaMemcpyHostToDevice, s1));
  CHECK(cudaEventRecord(copied, s1));
  CHECK(cudaStreamWaitEvent(s2, copied, 0));
  CHECK(cudaMemcpyAsync(b, a, n * sizeof(int), cudaMemcpyDeviceToDevice, s2));
  int callback_ran = 0;
  CHECK(cudaLaunchHostFunc(s2, mark, &callback_ran));
  CHECK(cudaEventRecord(stop, s2));
  CHECK(cudaEventSynchronize(stop));
  EXPECT(callback_ran == 1);
  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, start, copied));
  EXPECT(ms >= 0);
  CHECK(cudaMemcpy(back.data(), b, n * sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT(std::memcmp(back.data(), pinned, n * sizeof(int)) == 0);
  EXPECT(cudaStreamQuery(s2) == cudaSuccess);

  // Registered host memory and managed memory.
  std::vector<int> registered(1024, 7);
  CHECK(cudaHostRegister(registered.data(), registered.size() * sizeof(int), cudaHostRegisterDefault));
  CHECK(cudaMemcpyAsync(a, registered.data(), 1024 * sizeof(int), cudaMemcpyHostToDevice, s1));
  CHECK(cudaStreamSynchronize(s1));
  CHECK(cudaHostUnregister(registered.data()));
  int* managed;
  CHECK(cudaMallocManaged(&managed, 64 * sizeof(int)));
  managed[5] = 42;
  CHECK(cudaMemcpy(back.data(), managed, 64 * sizeof(int), cudaMemcpyDefault));
  EXPECT(back[5] == 42);
  CHECK(cudaPointerGetAttributes(&attr, managed));
  EXPECT(attr.type == cudaMemoryTypeManaged);

  // Misuse is reported, not fatal.
  EXPECT(cudaFree(a + 1) != cudaSuccess);
  EXPECT(cudaMemcpy(reinterpret_cast<void*>(0x10), host.data(), 16, cudaMemcpyHostToDevice) != cudaSuccess);
  cudaGetLastError();

  CHECK(cudaStreamDestroy(s1));
  CHECK(cudaStreamDestroy(s2));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(copied));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFree(managed));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaDeviceSynchronize());
  printf("memory_streams: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
