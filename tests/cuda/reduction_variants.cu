// The classic reduction kernels over the same data: interleaved addressing, sequential
// addressing, first add during load with an unrolled last warp (volatile shared memory,
// __syncwarp), warp shuffles, and one atomicAdd per thread; every variant gives the exact sum.
#include <vector>

#include "check.h"

constexpr int B = 256;

__global__ void interleaved(const int* in, long long* out, int n) {
  __shared__ int s[B];
  int t = threadIdx.x, i = blockIdx.x * B + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int stride = 1; stride < B; stride *= 2) {
    if (t % (2 * stride) == 0) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) atomicAdd((unsigned long long*)out, (unsigned long long)(long long)s[0]);
}

__global__ void sequential(const int* in, long long* out, int n) {
  __shared__ int s[B];
  int t = threadIdx.x, i = blockIdx.x * B + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int stride = B / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) atomicAdd((unsigned long long*)out, (unsigned long long)(long long)s[0]);
}

__global__ void unrolled(const int* in, long long* out, int n) {
  __shared__ int s[B];
  int t = threadIdx.x, i = blockIdx.x * 2 * B + t;
  s[t] = (i < n ? in[i] : 0) + (i + B < n ? in[i + B] : 0);
  __syncthreads();
  for (int stride = B / 2; stride > 32; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t < 32) {
    volatile int* v = s;
    for (int stride = 32; stride > 0; stride >>= 1) {
      if (t < stride) v[t] += v[t + stride];
      __syncwarp();
    }
  }
  if (t == 0) atomicAdd((unsigned long long*)out, (unsigned long long)(long long)s[0]);
}

__global__ void shuffled(const int* in, long long* out, int n) {
  long long v = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    v += in[i];
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffffu, v, off);
  if (threadIdx.x % 32 == 0) atomicAdd((unsigned long long*)out, (unsigned long long)v);
}

__global__ void atomic_each(const int* in, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd((unsigned long long*)out, (unsigned long long)(long long)in[i]);
}

int main() {
  const int n = 200003;
  std::vector<int> in(n);
  long long want = 0;
  for (int i = 0; i < n; ++i)
    in[i] = (i * 2654435761u) % 20001 - 10000, want += in[i];
  int* d_in;
  long long* d_out;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, 5 * sizeof(long long)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_out, 0, 5 * sizeof(long long)));
  int blocks = (n + B - 1) / B;
  interleaved<<<blocks, B>>>(d_in, d_out, n);
  sequential<<<blocks, B>>>(d_in, d_out + 1, n);
  unrolled<<<(n + 2 * B - 1) / (2 * B), B>>>(d_in, d_out + 2, n);
  shuffled<<<64, B>>>(d_in, d_out + 3, n);
  atomic_each<<<blocks, B>>>(d_in, d_out + 4, n);
  CHECK_LAUNCH();
  long long got[5], wants[5] = {want, want, want, want, want};
  CHECK(cudaMemcpy(got, d_out, sizeof got, cudaMemcpyDeviceToHost));
  expect_equal("sums (interleaved, sequential, unrolled, shuffled, atomic)", got, wants, 5);
  return report("reduction_variants");
}
