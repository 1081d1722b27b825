// A cooperative launch (cudaLaunchCooperativeKernel) whose blocks meet at grid.sync():
// each phase reads what other blocks wrote in the phase before. The grid is sized from the
// occupancy calculator so all blocks are resident.
// nvcc-flags: -arch=sm_80
#include <algorithm>
#include <cooperative_groups.h>
#include <vector>

#include "check.h"

namespace cg = cooperative_groups;

__global__ void phases(int* data, int* partial, int* result, int n) {
  cg::grid_group grid = cg::this_grid();
  int i = grid.thread_rank(), stride = grid.size();
  for (int k = i; k < n; k += stride) // phase 1: fill
    data[k] = k % 17;
  grid.sync();
  int sum = 0; // phase 2: each thread sums a window that crosses other blocks' elements
  for (int k = i; k < n; k += stride)
    sum += data[(k + n / 2) % n];
  atomicAdd(&partial[blockIdx.x], sum);
  grid.sync();
  if (i == 0) { // phase 3: one thread combines every block's partial sum
    int total = 0;
    for (unsigned b = 0; b < gridDim.x; ++b)
      total += partial[b];
    *result = total;
  }
  grid.sync();
  for (int k = i; k < n; k += stride) // phase 4: everyone sees the combined value
    data[k] = *result - data[k];
}

int main() {
  int dev = 0, supported = 0, sms = 0, per_sm = 0;
  CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, dev));
  EXPECT(supported == 1);
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int threads = 128;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, phases, threads, 0));
  int blocks = std::min(8, sms * per_sm);
  EXPECT(blocks >= 2);
  const int n = 10000;
  int *d_data, *d_partial, *d_result;
  CHECK(cudaMalloc(&d_data, n * sizeof(int)));
  CHECK(cudaMalloc(&d_partial, blocks * sizeof(int)));
  CHECK(cudaMalloc(&d_result, sizeof(int)));
  CHECK(cudaMemset(d_partial, 0, blocks * sizeof(int)));
  int nn = n;
  void* args[] = {&d_data, &d_partial, &d_result, &nn};
  CHECK(cudaLaunchCooperativeKernel((void*)phases, blocks, threads, args, 0, nullptr));
  CHECK_LAUNCH();
  std::vector<int> data(n), want(n);
  int total = 0;
  for (int k = 0; k < n; ++k)
    total += k % 17;
  for (int k = 0; k < n; ++k)
    want[k] = total - k % 17;
  int result = 0;
  CHECK(cudaMemcpy(&result, d_result, sizeof result, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(data.data(), d_data, n * sizeof(int), cudaMemcpyDeviceToHost));
  expect_value("grid total", result, total);
  expect_equal("phase 4", data.data(), want.data(), n);
  return report("cg_grid_sync");
}
