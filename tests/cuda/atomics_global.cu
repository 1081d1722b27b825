// Global-memory atomics from many blocks at once: add (int, unsigned long long, float),
// min/max, exch, CAS loops, inc/dec with wrap-around, and their results checked exactly.
// variants: all
#include <cstdio>
#include <vector>

__global__ void atomics(const int* in, int n, int* hist, unsigned long long* total, float* fsum, int* mn,
                        int* mx, unsigned* wrap_inc, unsigned* wrap_dec, int* cas_count, int* last) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  int v = in[i];
  atomicAdd(&hist[v & 15], 1);
  atomicAdd(total, (unsigned long long)v);
  atomicAdd(fsum, 0.5f);
  atomicMin(mn, v);
  atomicMax(mx, v);
  atomicInc(wrap_inc, 9u);  // counts 0..9 then wraps
  atomicDec(wrap_dec, 9u);
  int old = *cas_count, assumed;
  do {
    assumed = old;
    old = atomicCAS(cas_count, assumed, assumed + 2);
  } while (old != assumed);
  atomicExch(last, 7);
}

int main() {
  const int n = 100000;
  std::vector<int> h(n);
  int expect_hist[16] = {};
  unsigned long long expect_total = 0;
  int expect_min = 1 << 30, expect_max = -(1 << 30);
  for (int i = 0; i < n; ++i) {
    h[i] = (i * 7919) % 100003 - 5000;
    expect_hist[h[i] & 15]++;
    expect_total += (unsigned long long)h[i];
    expect_min = h[i] < expect_min ? h[i] : expect_min;
    expect_max = h[i] > expect_max ? h[i] : expect_max;
  }
  int *d_in, *d_hist, *d_min, *d_max, *d_cas, *d_last;
  unsigned long long* d_total;
  float* d_fsum;
  unsigned *d_inc, *d_dec;
  cudaMalloc(&d_in, n * sizeof(int));
  cudaMalloc(&d_hist, 16 * sizeof(int));
  cudaMalloc(&d_total, sizeof(unsigned long long));
  cudaMalloc(&d_fsum, sizeof(float));
  cudaMalloc(&d_min, sizeof(int));
  cudaMalloc(&d_max, sizeof(int));
  cudaMalloc(&d_inc, sizeof(unsigned));
  cudaMalloc(&d_dec, sizeof(unsigned));
  cudaMalloc(&d_cas, sizeof(int));
  cudaMalloc(&d_last, sizeof(int));
  cudaMemcpy(d_in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(d_hist, 0, 16 * sizeof(int));
  cudaMemset(d_total, 0, sizeof(unsigned long long));
  cudaMemset(d_fsum, 0, sizeof(float));
  int big = 1 << 30, small = -(1 << 30);
  cudaMemcpy(d_min, &big, sizeof big, cudaMemcpyHostToDevice);
  cudaMemcpy(d_max, &small, sizeof small, cudaMemcpyHostToDevice);
  cudaMemset(d_inc, 0, sizeof(unsigned));
  cudaMemset(d_dec, 0, sizeof(unsigned));
  cudaMemset(d_cas, 0, sizeof(int));
  cudaMemset(d_last, 0, sizeof(int));
  atomics<<<(n + 255) / 256, 256>>>(d_in, n, d_hist, d_total, d_fsum, d_min, d_max, d_inc, d_dec, d_cas, d_last);
  int hist[16], mn, mx, cas, last;
  unsigned long long total;
  float fsum;
  unsigned inc, dec;
  cudaMemcpy(hist, d_hist, sizeof hist, cudaMemcpyDeviceToHost);
  cudaMemcpy(&total, d_total, sizeof total, cudaMemcpyDeviceToHost);
  cudaMemcpy(&fsum, d_fsum, sizeof fsum, cudaMemcpyDeviceToHost);
  cudaMemcpy(&mn, d_min, sizeof mn, cudaMemcpyDeviceToHost);
  cudaMemcpy(&mx, d_max, sizeof mx, cudaMemcpyDeviceToHost);
  cudaMemcpy(&inc, d_inc, sizeof inc, cudaMemcpyDeviceToHost);
  cudaMemcpy(&dec, d_dec, sizeof dec, cudaMemcpyDeviceToHost);
  cudaMemcpy(&cas, d_cas, sizeof cas, cudaMemcpyDeviceToHost);
  cudaMemcpy(&last, d_last, sizeof last, cudaMemcpyDeviceToHost);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    fprintf(stderr, "atomics_global: %s\n", cudaGetErrorString(err));
    return 1;
  }
  bool ok = total == expect_total && mn == expect_min && mx == expect_max && cas == 2 * n && last == 7;
  for (int k = 0; k < 16; ++k)
    ok &= hist[k] == expect_hist[k];
  ok &= fsum == 0.5f * n;          // exact: sums of 0.5 stay integers/halves below 2^24
  ok &= inc == unsigned(n % 10);   // wraps at 9 -> 0 every 10 increments
  // dec from 0 wraps to 9, then counts down: after n steps it holds (10 - n % 10) % 10
  ok &= dec == unsigned((10 - n % 10) % 10);
  printf("atomics_global: total %llu/%llu min %d/%d max %d/%d cas %d inc %u dec %u fsum %.1f: %s\n", total,
         expect_total, mn, expect_min, mx, expect_max, cas, inc, dec, fsum, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
