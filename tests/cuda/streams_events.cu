// Several streams with kernels ordered across them by events (cudaStreamWaitEvent), host
// callbacks (cudaLaunchHostFunc, cudaStreamAddCallback) that run in stream order, event
// queries and timing, and stream priorities.
// variants: all
#include <vector>

#include "check.h"

__global__ void add_scaled(int* dst, const int* src, int scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] += scale * src[i];
}

__global__ void fill(int* dst, int value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = value + i % 5;
}

struct Log {
  int order[8];
  int next;
};

static void CUDART_CB host_step(void* p) {
  Log* log = static_cast<Log*>(p);
  log->order[log->next] = log->next;
  log->next++;
}

static void CUDART_CB callback(cudaStream_t, cudaError_t status, void* p) {
  Log* log = static_cast<Log*>(p);
  log->order[log->next++] = status == cudaSuccess ? 100 : -1;
}

int main() {
  const int n = 4096, threads = 256, blocks = n / threads;
  int lo = 0, hi = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  cudaStream_t s[3];
  CHECK(cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithPriority(&s[1], cudaStreamNonBlocking, hi));
  CHECK(cudaStreamCreate(&s[2]));
  int prio = 0;
  CHECK(cudaStreamGetPriority(s[1], &prio));
  EXPECT(prio == hi);
  int *a, *b, *c;
  CHECK(cudaMalloc(&a, n * sizeof(int)));
  CHECK(cudaMalloc(&b, n * sizeof(int)));
  CHECK(cudaMalloc(&c, n * sizeof(int)));
  cudaEvent_t a_ready, b_ready, start, stop;
  CHECK(cudaEventCreateWithFlags(&a_ready, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&b_ready, cudaEventDisableTiming));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  Log log{};
  CHECK(cudaEventRecord(start, s[0]));
  fill<<<blocks, threads, 0, s[0]>>>(a, 10, n);
  CHECK(cudaEventRecord(a_ready, s[0]));
  fill<<<blocks, threads, 0, s[1]>>>(b, 1000, n);
  CHECK(cudaEventRecord(b_ready, s[1]));
  // c = 0; c += 2a (after a); c += 3b (after b); then host steps in order on s[2].
  CHECK(cudaMemsetAsync(c, 0, n * sizeof(int), s[2]));
  CHECK(cudaStreamWaitEvent(s[2], a_ready, 0));
  add_scaled<<<blocks, threads, 0, s[2]>>>(c, a, 2, n);
  CHECK(cudaLaunchHostFunc(s[2], host_step, &log));
  CHECK(cudaStreamWaitEvent(s[2], b_ready, 0));
  add_scaled<<<blocks, threads, 0, s[2]>>>(c, b, 3, n);
  CHECK(cudaLaunchHostFunc(s[2], host_step, &log));
  CHECK(cudaStreamAddCallback(s[2], callback, &log, 0));
  CHECK(cudaEventRecord(stop, s[2]));
  // b must not change before c has read it: the next fill waits for s[2].
  CHECK(cudaStreamWaitEvent(s[1], stop, 0));
  fill<<<blocks, threads, 0, s[1]>>>(b, -7, n);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(s[1]));
  EXPECT(cudaEventQuery(stop) == cudaSuccess);
  EXPECT(cudaStreamQuery(s[2]) == cudaSuccess);
  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  EXPECT(ms >= 0);
  EXPECT(cudaEventElapsedTime(&ms, a_ready, stop) == cudaErrorInvalidResourceHandle);
  std::vector<int> hc(n), hb(n), want(n), wantb(n);
  CHECK(cudaMemcpy(hc.data(), c, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hb.data(), b, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    want[i] = 2 * (10 + i % 5) + 3 * (1000 + i % 5), wantb[i] = -7 + i % 5;
  expect_equal("c", hc.data(), want.data(), n);
  expect_equal("b refilled", hb.data(), wantb.data(), n);
  int want_log[3] = {0, 1, 100};
  EXPECT(log.next == 3);
  expect_equal("host function order", log.order, want_log, 3);
  for (auto st : s)
    CHECK(cudaStreamDestroy(st));
  for (auto e : {a_ready, b_ready, start, stop})
    CHECK(cudaEventDestroy(e));
  return report("streams_events");
}
