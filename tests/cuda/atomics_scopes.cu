// Scoped atomics: _block forms on shared and global memory, _system forms on device memory,
// managed memory and mapped pinned host memory, checked after the kernel and (for host
// memory) read directly by the host.
// nvcc-flags: -arch=sm_90
#include <vector>

#include "check.h"

__global__ void scoped(int* global_block, unsigned* sys, unsigned long long* managed, int* host,
                       int* per_block) {
  __shared__ int s;
  if (threadIdx.x == 0) s = 0;
  __syncthreads();
  int t = threadIdx.x;
  atomicAdd_block(&s, t);
  atomicMax_block(&per_block[blockIdx.x], t * 3);
  atomicAdd_block(&global_block[blockIdx.x], 2);
  atomicAdd_system(sys, 1u);
  atomicOr_system(sys + 1, 1u << (t % 32));
  atomicExch_system(sys + 2, 77u);
  atomicAdd_system(managed, (unsigned long long)t << 32);
  atomicCAS_system(managed + 1, 0ull, 42ull);
  atomicAdd_system(host, 1);
  atomicMin_system(host + 1, -t);
  atomicInc_system(reinterpret_cast<unsigned*>(host + 2), 1000u);
  __syncthreads();
  if (t == 0) atomicAdd_system(host + 3, s);
}

int main() {
  const int blocks = 4, threads = 64;
  int *d_gb, *d_pb;
  unsigned* d_sys;
  unsigned long long* managed;
  int* host;
  CHECK(cudaMalloc(&d_gb, blocks * sizeof(int)));
  CHECK(cudaMalloc(&d_pb, blocks * sizeof(int)));
  CHECK(cudaMalloc(&d_sys, 3 * sizeof(unsigned)));
  CHECK(cudaMallocManaged(&managed, 2 * sizeof(unsigned long long)));
  CHECK(cudaHostAlloc(&host, 4 * sizeof(int), cudaHostAllocMapped));
  int* d_host;
  CHECK(cudaHostGetDevicePointer(&d_host, host, 0));
  CHECK(cudaMemset(d_gb, 0, blocks * sizeof(int)));
  CHECK(cudaMemset(d_pb, 0, blocks * sizeof(int)));
  CHECK(cudaMemset(d_sys, 0, 3 * sizeof(unsigned)));
  managed[0] = managed[1] = 0;
  host[0] = host[1] = host[2] = host[3] = 0;
  scoped<<<blocks, threads>>>(d_gb, d_sys, managed, d_host, d_pb);
  CHECK_LAUNCH();
  int gb[blocks], pb[blocks];
  unsigned sys[3];
  CHECK(cudaMemcpy(gb, d_gb, sizeof gb, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(pb, d_pb, sizeof pb, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sys, d_sys, sizeof sys, cudaMemcpyDeviceToHost));
  const int total = blocks * threads;
  for (int b = 0; b < blocks; ++b) {
    expect_value("global _block add", gb[b], 2 * threads);
    expect_value("global _block max", pb[b], 3 * (threads - 1));
  }
  expect_value("system add", sys[0], unsigned(total));
  expect_value("system or", sys[1], ~0u);
  expect_value("system exch", sys[2], 77u);
  expect_value("managed add", managed[0],
               (unsigned long long)blocks * (threads * (threads - 1) / 2) << 32);
  expect_value("managed cas", managed[1], 42ull);
  expect_value("host add", host[0], total);
  expect_value("host min", host[1], -(threads - 1));
  expect_value("host inc", host[2], total);
  expect_value("shared _block sums", host[3], blocks * threads * (threads - 1) / 2);
  return report("atomics_scopes");
}
