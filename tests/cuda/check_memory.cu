// MIMIC_CHECK=memory: accesses that stay inside mapped memory but outside every allocation
// (one element past the end of a global array, past a block's shared array) end the
// launch with cudaErrorIllegalAddress, and Mimic names kernel, PTX line, block and thread.
// In-bounds accesses to global, shared, local (via generic pointers) and device-heap
// memory pass.
// mimic-env: MIMIC_CHECK=memory
// expect-stderr: MIMIC_CHECK: kernel '_Z10one_beyondPii', PTX line
#include <cstdio>

#include "check.h"

__global__ void in_bounds(int* a, int n) {
  __shared__ int s[64];
  int local[8];
  int i = threadIdx.x;
  s[i] = i;
  for (int k = 0; k < 8; ++k)
    local[k] = k * i;
  int* heap = (int*)malloc(4 * sizeof(int));
  heap[i % 4] = i;
  __syncthreads();
  int* p = &local[i % 8]; // a generic pointer to local memory
  a[i] = s[(i + 1) % 64] + *p + heap[i % 4] - i;
  free(heap);
}

__global__ void one_beyond(int* a, int n) { a[threadIdx.x] = int(threadIdx.x); }

int main() {
  int* d;
  CHECK(cudaMalloc(&d, 64 * sizeof(int)));
  in_bounds<<<1, 64>>>(d, 64);
  CHECK(cudaDeviceSynchronize());
  int h[64];
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 64; ++i)
    EXPECT(h[i] == (i + 1) % 64 + (i % 8) * i);
  one_beyond<<<1, 65>>>(d, 64); // thread 64 writes d[64]
  cudaError_t e = cudaDeviceSynchronize();
  EXPECT(e == cudaErrorIllegalAddress);
  printf("check_memory: %s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
