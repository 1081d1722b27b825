// cuda::barrier (mbarrier on sm_80+): arrive_and_wait as a block barrier, split arrive /
// wait with tokens where each thread does independent work between them, and a
// producer/consumer hand-off through shared memory in several phases.
// variants: debug
// nvcc-flags: -arch=sm_80
#include <cuda/barrier>
#include <vector>

#include "check.h"

using block_barrier = cuda::barrier<cuda::thread_scope_block>;

__global__ void phases(const int* in, int* out, int rounds) {
  __shared__ block_barrier bar;
  __shared__ int stage[256];
  if (threadIdx.x == 0)
    init(&bar, blockDim.x);
  __syncthreads();
  int acc = 0;
  for (int r = 0; r < rounds; ++r) {
    stage[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x] * (r + 1);
    bar.arrive_and_wait(); // everyone's stage is written
    acc += stage[(threadIdx.x + 1 + r) % blockDim.x];
    auto token = bar.arrive(); // done reading this round's stage
    acc += r;                  // independent work before waiting
    bar.wait(std::move(token));
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

int main() {
  const int blocks = 4, threads = 128, rounds = 5, n = blocks * threads;
  std::vector<int> in(n), out(n, -1), want(n);
  for (int i = 0; i < n; ++i)
    in[i] = (i * 37) % 101 - 50;
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) {
      int acc = 0;
      for (int r = 0; r < rounds; ++r)
        acc += in[b * threads + (t + 1 + r) % threads] * (r + 1) + r;
      want[b * threads + t] = acc;
    }
  int *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, n * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  phases<<<blocks, threads>>>(d_in, d_out, rounds);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    EXPECT(out[i] == want[i]);
  printf("mbarrier_pipeline: %s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
