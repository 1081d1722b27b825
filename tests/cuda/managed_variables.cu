// __managed__ variables: initialised statically, changed by the host before a launch, by
// kernels during it, and read by the host afterwards without copies.
#include <vector>

#include "check.h"

__managed__ int counter = 5;
__managed__ float table[64];

__global__ void update(int* out) {
  int i = threadIdx.x;
  out[i] = int(table[i]) * 3;
  if (i == 0) counter += 10;
}

int main() {
  CHECK(cudaFree(nullptr)); // the runtime is up and the variables are mapped
  for (int k = 0; k < 64; ++k)
    table[k] = k * 1.0f;
  expect_value("initial counter", counter, 5);
  int* out;
  CHECK(cudaMalloc(&out, 64 * sizeof(int)));
  for (int round = 0; round < 2; ++round) {
    update<<<1, 64>>>(out);
    CHECK_LAUNCH();
  }
  std::vector<int> got(64), want(64);
  CHECK(cudaMemcpy(got.data(), out, 64 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int k = 0; k < 64; ++k)
    want[k] = 3 * k;
  expect_equal("table read by the kernel", got.data(), want.data(), 64);
  expect_value("counter", counter, 25);
  return report("managed_variables");
}
