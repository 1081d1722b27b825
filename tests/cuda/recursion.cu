// Recursive device functions: Fibonacci, mutual recursion, Ackermann, and a recursive
// quicksort of a per-thread array (recursion over local memory), with the stack size set
// through cudaDeviceSetLimit.
// variants: debug
#include <algorithm>
#include <vector>

#include "check.h"

__device__ int fib(int n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__device__ bool is_odd(unsigned n);
__device__ bool is_even(unsigned n) {
  return n == 0 ? true : is_odd(n - 1);
}
__device__ bool is_odd(unsigned n) {
  return n == 0 ? false : is_even(n - 1);
}

__device__ int ackermann(int m, int n) {
  if (m == 0) return n + 1;
  if (n == 0) return ackermann(m - 1, 1);
  return ackermann(m - 1, ackermann(m, n - 1));
}

__device__ void quicksort(int* a, int lo, int hi) {
  if (lo >= hi) return;
  int pivot = a[(lo + hi) / 2], i = lo, j = hi;
  while (i <= j) {
    while (a[i] < pivot)
      ++i;
    while (a[j] > pivot)
      --j;
    if (i <= j) {
      int t = a[i];
      a[i++] = a[j];
      a[j--] = t;
    }
  }
  quicksort(a, lo, j);
  quicksort(a, i, hi);
}

constexpr int kLen = 24;

__global__ void recurse(int* out, int* sorted) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t * 3] = fib(t % 16);
  out[t * 3 + 1] = is_even(unsigned(t * 7 % 50)) + 2 * is_odd(unsigned(t));
  out[t * 3 + 2] = ackermann(t % 3, t % 4);
  int a[kLen];
  for (int i = 0; i < kLen; ++i)
    a[i] = (t * 31 + i * 17) % 23 - i % 5;
  quicksort(a, 0, kLen - 1);
  for (int i = 0; i < kLen; ++i)
    sorted[t * kLen + i] = a[i];
}

static int host_fib(int n) {
  return n < 2 ? n : host_fib(n - 1) + host_fib(n - 2);
}
static int host_ack(int m, int n) {
  return m == 0 ? n + 1 : n == 0 ? host_ack(m - 1, 1) : host_ack(m - 1, host_ack(m, n - 1));
}

int main() {
  CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 16 * 1024));
  const int n = 64;
  int *d_out, *d_sorted;
  CHECK(cudaMalloc(&d_out, n * 3 * sizeof(int)));
  CHECK(cudaMalloc(&d_sorted, n * kLen * sizeof(int)));
  recurse<<<2, n / 2>>>(d_out, d_sorted);
  CHECK_LAUNCH();
  std::vector<int> out(n * 3), want(n * 3), sorted(n * kLen), swant(n * kLen);
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sorted.data(), d_sorted, sorted.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < n; ++t) {
    want[t * 3] = host_fib(t % 16);
    want[t * 3 + 1] = (t * 7 % 2 == 0) + 2 * (t % 2 == 1);
    want[t * 3 + 2] = host_ack(t % 3, t % 4);
    for (int i = 0; i < kLen; ++i)
      swant[t * kLen + i] = (t * 31 + i * 17) % 23 - i % 5;
    std::sort(swant.begin() + t * kLen, swant.begin() + (t + 1) * kLen);
  }
  expect_equal("fib, parity, ackermann", out.data(), want.data(), out.size());
  expect_equal("quicksorted", sorted.data(), swant.data(), sorted.size());
  return report("recursion");
}
