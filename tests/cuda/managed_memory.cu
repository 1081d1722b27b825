// Managed memory from cudaMallocManaged: written by the host, updated by kernels in place,
// read back by the host after synchronising, with no explicit copies; its pointer
// attributes say managed.
#include <vector>

#include "check.h"

__global__ void update(int* data, const float* table, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * 2 + int(table[i % 64]);
}

int main() {
  const int n = 1000;
  int* data;
  float* table;
  CHECK(cudaMallocManaged(&data, n * sizeof(int)));
  CHECK(cudaMallocManaged(&table, 64 * sizeof(float), cudaMemAttachGlobal));
  for (int i = 0; i < n; ++i)
    data[i] = i - 300;
  for (int k = 0; k < 64; ++k)
    table[k] = k * 1.0f;
  cudaPointerAttributes attr;
  CHECK(cudaPointerGetAttributes(&attr, data));
  EXPECT(attr.type == cudaMemoryTypeManaged);
  EXPECT(attr.hostPointer == data && attr.devicePointer == data);
  for (int round = 0; round < 2; ++round) {
    update<<<(n + 255) / 256, 256>>>(data, table, n);
    CHECK_LAUNCH();
  }
  std::vector<int> want(n);
  for (int i = 0; i < n; ++i)
    want[i] = ((i - 300) * 2 + i % 64) * 2 + i % 64;
  expect_equal("managed data", data, want.data(), n);
  CHECK(cudaFree(data));
  CHECK(cudaFree(table));
  return report("managed_memory");
}
