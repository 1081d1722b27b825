// Named barriers with thread counts (bar.sync id, n / bar.arrive id, n), as
// warp-specialised kernels use them: warps 0-1 produce a tile into shared memory and
// bar.arrive, warps 2-3 bar.sync on the same barrier and consume it; the roles swap
// barriers every round, and __syncthreads (barrier 0) still covers the whole block.
// Also bar.red.popc / .and / .or (__syncthreads_count/_and/_or) over the same block.
#include <vector>

#include "check.h"

__device__ __forceinline__ void named_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(count) : "memory");
}

__global__ void pipeline(const int* in, int* out, int rounds) {
  __shared__ int tile[2][64];
  int t = threadIdx.x, warp = t / 32, lane = t % 32;
  bool producer = warp < 2;
  int acc = 0;
  for (int r = 0; r < rounds; ++r) {
    int buf = r % 2, full = 1 + buf, empty = 3 + buf;
    if (producer) {
      if (r >= 2)
        named_sync(empty, 128); // the consumers have read this buffer two rounds ago
      tile[buf][warp * 32 + lane] = in[r * 64 + warp * 32 + lane] * (r + 1);
      named_arrive(full, 128);
    } else {
      named_sync(full, 128);
      int i = (warp - 2) * 32 + lane;
      acc += tile[buf][(i + r) % 64];
      named_arrive(empty, 128);
    }
  }
  __syncthreads();
  int votes = __syncthreads_count(acc % 2 == 0);
  int all_small = __syncthreads_and(acc < 100000);
  int any_neg = __syncthreads_or(acc < 0);
  if (!producer)
    out[(warp - 2) * 32 + lane] = acc;
  if (t == 0) {
    out[64] = votes;
    out[65] = all_small;
    out[66] = any_neg;
  }
}

int main() {
  const int rounds = 6;
  std::vector<int> in(rounds * 64), out(67, -1), want(67);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = int(i * 13 % 29) - 14;
  int evens = 64; // the producers' acc is 0: even
  bool small = true, neg = false;
  for (int i = 0; i < 64; ++i) {
    int acc = 0;
    for (int r = 0; r < rounds; ++r)
      acc += in[r * 64 + (i + r) % 64] * (r + 1);
    want[i] = acc;
    evens += acc % 2 == 0;
    small = small && acc < 100000;
    neg = neg || acc < 0;
  }
  want[64] = evens;
  want[65] = small;
  want[66] = neg;
  int *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, in.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
  pipeline<<<1, 128>>>(d_in, d_out, rounds);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 67; ++i)
    EXPECT(out[i] == want[i]);
  printf("named_barriers: %s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
