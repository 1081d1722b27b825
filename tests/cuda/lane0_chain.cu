// Warp reductions whose result only `lane == 0` reads: the CPU backend's warp chain then
// writes back lane 0's value alone where rows are whole warps (codegen/warp_chain.cpp,
// MIMIC_LANE0_CHAINS). Checked against the host in blocks whose rows are whole warps and
// in blocks of rows of 8, 16 (where `threadIdx.x & 31` is 0 for lanes 0, 8, 16, 24 or
// 0, 16, whose partial sums must come out right too), for a result read by lane 0 and
// then by every thread, and for one read by thread 0 of each row (`threadIdx.x == 0`).
#include <vector>

#include "check.h"

constexpr unsigned kFull = 0xffffffffu;

__device__ unsigned linear_thread() {
  return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

__device__ int down_sum(int v) {
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_down_sync(kFull, v, o);
  return v;
}

// Each lane's down-sum, stored where threadIdx.x % 32 is 0.
__global__ void lane0_sums(const int* in, int* out) {
  const unsigned base = blockIdx.x * blockDim.x * blockDim.y * blockDim.z, t = linear_thread();
  int v = down_sum(in[base + t]);
  if ((threadIdx.x & 31) == 0) out[base + t] = v;
}

// The same, then stored by every thread as well.
__global__ void lane0_then_all(const int* in, int* first, int* every) {
  const unsigned base = blockIdx.x * blockDim.x * blockDim.y * blockDim.z, t = linear_thread();
  int v = down_sum(in[base + t]);
  if ((threadIdx.x & 31) == 0) first[base + t] = v;
  every[base + t] = v;
}

// A butterfly sum, which every lane gets, stored by thread 0 of the block alone.
__global__ void thread0_sum(const int* in, int* out) {
  const unsigned base = blockIdx.x * blockDim.x * blockDim.y * blockDim.z, t = linear_thread();
  int v = in[base + t];
  for (int m = 16; m > 0; m /= 2)
    v += __shfl_xor_sync(kFull, v, m);
  if (threadIdx.x == 0) out[base + t] = v;
}

// The host's down-sum of each lane of each warp (a source lane past the warp gives the
// lane its own value).
std::vector<int> down_sums(const std::vector<int>& in) {
  std::vector<int> out(in.size());
  for (size_t w = 0; w < in.size(); w += 32) {
    int v[32];
    for (int i = 0; i < 32; ++i) v[i] = in[w + i];
    for (int o = 16; o > 0; o /= 2) {
      int next[32];
      for (int i = 0; i < 32; ++i) next[i] = v[i] + (i + o < 32 ? v[i + o] : v[i]);
      for (int i = 0; i < 32; ++i) v[i] = next[i];
    }
    for (int i = 0; i < 32; ++i) out[w + i] = v[i];
  }
  return out;
}

int main() {
  const dim3 shapes[] = {dim3(256), dim3(96), dim3(32, 2), dim3(16, 4), dim3(8, 8), dim3(16, 2, 2)};
  const unsigned blocks = 3;
  unsigned seed = 1;
  for (const dim3& shape : shapes) {
    const unsigned per_block = shape.x * shape.y * shape.z, n = blocks * per_block;
    // Data of its own for each shape: a lane whose sum was not written back must not find
    // the right value left over from the launch before.
    std::vector<int> in(n);
    for (unsigned i = 0; i < n; ++i) in[i] = int(((i + 977 * seed) * 2654435761u) >> 20) - 2048;
    ++seed;
    const std::vector<int> sums = down_sums(in);
    std::vector<int> want(n, -1), want_every(sums);
    for (unsigned i = 0; i < n; ++i)
      if ((i % per_block) % shape.x % 32 == 0) want[i] = sums[i];
    int *din, *dfirst, *devery;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dfirst, n * sizeof(int)));
    CHECK(cudaMalloc(&devery, n * sizeof(int)));
    CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<int> got(n);
    char what[64];
    // Thread 0 of each row (threadIdx.x == 0) stores its warp's butterfly sum.
    std::vector<int> want_thread0(n, -1);
    for (unsigned i = 0; i < n; i += per_block)
      for (unsigned r = 0; r < per_block; r += shape.x) {
        int sum = 0;
        for (unsigned l = 0; l < 32; ++l) sum += in[i + (r / 32 * 32) + l];
        want_thread0[i + r] = sum;
      }
    for (int kernel = 0; kernel < 3; ++kernel) {
      CHECK(cudaMemset(dfirst, 0xff, n * sizeof(int)));
      if (kernel == 0)
        lane0_sums<<<blocks, shape>>>(din, dfirst);
      else if (kernel == 1)
        lane0_then_all<<<blocks, shape>>>(din, dfirst, devery);
      else
        thread0_sum<<<blocks, shape>>>(din, dfirst);
      CHECK_LAUNCH();
      CHECK(cudaMemcpy(got.data(), dfirst, n * sizeof(int), cudaMemcpyDeviceToHost));
      const char* names[] = {"lane0_sums", "lane0_then_all", "thread0_sum"};
      snprintf(what, sizeof what, "%s %ux%ux%u", names[kernel], shape.x, shape.y, shape.z);
      expect_equal(what, got.data(), kernel == 2 ? want_thread0.data() : want.data(), n);
      if (kernel == 1) {
        CHECK(cudaMemcpy(got.data(), devery, n * sizeof(int), cudaMemcpyDeviceToHost));
        snprintf(what, sizeof what, "every thread's %ux%ux%u", shape.x, shape.y, shape.z);
        expect_equal(what, got.data(), want_every.data(), n);
      }
    }
    CHECK(cudaFree(din));
    CHECK(cudaFree(dfirst));
    CHECK(cudaFree(devery));
  }
  return report("lane0_chain");
}
