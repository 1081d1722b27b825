// Dynamic shared memory above the default 48 KiB: refused until the kernel's
// cudaFuncAttributeMaxDynamicSharedMemorySize allows it, then usable in full.
// nvcc-flags: -arch=sm_86
#include <vector>

#include "check.h"

__global__ void fill_and_sum(unsigned* out, int words) {
  extern __shared__ unsigned big[];
  for (int i = threadIdx.x; i < words; i += blockDim.x)
    big[i] = i * 2654435761u;
  __syncthreads();
  unsigned acc = 0;
  for (int i = threadIdx.x; i < words; i += blockDim.x)
    acc += big[words - 1 - i] ^ big[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  int size = 0;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(size));
  if (threadIdx.x == 0) out[gridDim.x * blockDim.x + blockIdx.x] = size;
}

int main() {
  const size_t bytes = 80 * 1024;
  const int words = bytes / 4, threads = 256, blocks = 2;
  unsigned* d_out;
  CHECK(cudaMalloc(&d_out, (blocks * threads + blocks) * sizeof(unsigned)));
  fill_and_sum<<<blocks, threads, bytes>>>(d_out, words);
  cudaError_t refused = cudaGetLastError();
  EXPECT(refused == cudaErrorInvalidValue);
  CHECK(cudaFuncSetAttribute(fill_and_sum, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, fill_and_sum));
  EXPECT(attr.maxDynamicSharedSizeBytes == int(bytes));
  fill_and_sum<<<blocks, threads, bytes>>>(d_out, words);
  CHECK_LAUNCH();
  std::vector<unsigned> out(blocks * threads + blocks), want(blocks * threads + blocks);
  for (int b = 0; b < blocks; ++b) {
    for (int t = 0; t < threads; ++t) {
      unsigned acc = 0;
      for (int i = t; i < words; i += threads)
        acc += (unsigned(words - 1 - i) * 2654435761u) ^ (unsigned(i) * 2654435761u);
      want[b * threads + t] = acc;
    }
    want[blocks * threads + b] = bytes;
  }
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  expect_equal("sums", out.data(), want.data(), out.size());
  return report("shared_dynamic_large");
}
