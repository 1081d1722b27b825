// Device-side heap: malloc/free and new/delete[] in kernels, per-thread blocks filled and
// summed, a block shared by pointer between two launches, the heap size set with
// cudaDeviceSetLimit, and a failed oversized malloc that returns null.
#include <vector>

#include "check.h"

struct Node {
  int value;
  Node* next;
};

__device__ int* kept[64];

__global__ void per_thread(int* sums, unsigned long long* nulls) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int count = 4 + t % 13;
  int* p = static_cast<int*>(malloc(count * sizeof(int)));
  if (!p) {
    sums[t] = -1;
    return;
  }
  for (int i = 0; i < count; ++i)
    p[i] = t * i;
  int s = 0;
  for (int i = 0; i < count; ++i)
    s += p[i];
  free(p);
  Node* head = nullptr; // a linked list through new/delete
  for (int i = 0; i < 5; ++i)
    head = new Node{t + i, head};
  while (head) {
    s += head->value;
    Node* next = head->next;
    delete head;
    head = next;
  }
  double* arr = new double[3]{0.5, 1.5, 2.0};
  s += int(arr[0] + arr[1] + arr[2]);
  delete[] arr;
  sums[t] = s;
  if (t == 0) *nulls = (unsigned long long)malloc(size_t(1) << 40); // larger than the heap: null
  if (t < 64) {
    kept[t] = static_cast<int*>(malloc(sizeof(int)));
    *kept[t] = t * 100;
  }
}

__global__ void read_kept(int* out) {
  int t = threadIdx.x;
  out[t] = *kept[t];
  free(kept[t]);
}

int main() {
  CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 16 << 20));
  size_t heap = 0;
  CHECK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
  EXPECT(heap >= (16 << 20));
  const int threads = 128, blocks = 4, n = threads * blocks;
  int *d_sums, *d_kept;
  unsigned long long* d_null;
  CHECK(cudaMalloc(&d_sums, n * sizeof(int)));
  CHECK(cudaMalloc(&d_kept, 64 * sizeof(int)));
  CHECK(cudaMalloc(&d_null, sizeof(unsigned long long)));
  per_thread<<<blocks, threads>>>(d_sums, d_null);
  CHECK_LAUNCH();
  read_kept<<<1, 64>>>(d_kept);
  CHECK_LAUNCH();
  std::vector<int> sums(n), want(n), kept_out(64), kept_want(64);
  unsigned long long null_ptr = 1;
  CHECK(cudaMemcpy(sums.data(), d_sums, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(kept_out.data(), d_kept, 64 * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(&null_ptr, d_null, sizeof null_ptr, cudaMemcpyDeviceToHost));
  for (int t = 0; t < n; ++t) {
    int count = 4 + t % 13;
    want[t] = t * count * (count - 1) / 2 + 5 * t + 10 + 4;
  }
  for (int t = 0; t < 64; ++t)
    kept_want[t] = t * 100;
  expect_equal("per-thread sums", sums.data(), want.data(), n);
  expect_equal("kept across launches", kept_out.data(), kept_want.data(), 64);
  expect_value("oversized malloc", null_ptr, 0ull);
  return report("device_malloc");
}
