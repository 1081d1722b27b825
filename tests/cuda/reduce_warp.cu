// Sum, max and histogram with warp shuffles, shared memory, barriers and atomics.
// variants: all
#include <cstdio>
#include <vector>

__device__ int warp_sum(int v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void reduce(const int* in, int n, long long* sum, int* max_out, unsigned* hist) {
  __shared__ int partial[32];
  __shared__ unsigned local_hist[16];
  if (threadIdx.x < 16)
    local_hist[threadIdx.x] = 0;
  __syncthreads();
  int v = 0, m = INT_MIN;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    v += in[i];
    m = max(m, in[i]);
    atomicAdd(&local_hist[in[i] & 15], 1u);
  }
  v = warp_sum(v);
  for (int offset = 16; offset > 0; offset /= 2)
    m = max(m, __shfl_xor_sync(0xffffffffu, m, offset));
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0)
    partial[warp] = v;
  if (lane == 0)
    atomicMax(max_out, m);
  __syncthreads();
  if (warp == 0) {
    int w = lane < blockDim.x / 32 ? partial[lane] : 0;
    w = warp_sum(w);
    if (lane == 0)
      atomicAdd((unsigned long long*)sum, (unsigned long long)(long long)w);
  }
  if (threadIdx.x < 16)
    atomicAdd(&hist[threadIdx.x], local_hist[threadIdx.x]);
  unsigned ballot = __ballot_sync(0xffffffffu, v > 0);
  if (lane == 0 && __popc(ballot) > 32)
    __trap();
}

int main() {
  const int n = 1 << 18;
  std::vector<int> h(n);
  long long expect_sum = 0;
  int expect_max = INT_MIN;
  unsigned expect_hist[16] = {};
  for (int i = 0; i < n; ++i) {
    h[i] = (i * 7919) % 1000 - 300;
    expect_sum += h[i];
    expect_max = h[i] > expect_max ? h[i] : expect_max;
    expect_hist[h[i] & 15]++;
  }
  int* d_in;
  long long* d_sum;
  int* d_max;
  unsigned* d_hist;
  cudaMalloc(&d_in, n * sizeof(int));
  cudaMalloc(&d_sum, sizeof(long long));
  cudaMalloc(&d_max, sizeof(int));
  cudaMalloc(&d_hist, 16 * sizeof(unsigned));
  cudaMemcpy(d_in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(d_sum, 0, sizeof(long long));
  int init_max = INT_MIN;
  cudaMemcpy(d_max, &init_max, sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(d_hist, 0, 16 * sizeof(unsigned));
  reduce<<<64, 256>>>(d_in, n, d_sum, d_max, d_hist);
  long long sum = 0;
  int mx = 0;
  unsigned hist[16];
  cudaMemcpy(&sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost);
  cudaMemcpy(&mx, d_max, sizeof mx, cudaMemcpyDeviceToHost);
  cudaMemcpy(hist, d_hist, sizeof hist, cudaMemcpyDeviceToHost);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    fprintf(stderr, "reduce_warp: %s\n", cudaGetErrorString(err));
    return 1;
  }
  bool ok = sum == expect_sum && mx == expect_max;
  for (int i = 0; i < 16; ++i)
    ok &= hist[i] == expect_hist[i];
  printf("reduce_warp: sum %lld (expect %lld), max %d (expect %d): %s\n", sum, expect_sum, mx, expect_max,
         ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
