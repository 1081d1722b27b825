// Threads that write several consecutive items each, under bound checks (scan's tiles):
// LLVM vectorises them as one scatter per item, which Mimic joins into one masked store of
// the run (codegen/interleaved_scatter.h). Sizes leave a partial last block, whose bound
// checks switch lanes off inside the run; three items of four leave gaps and stay
// scatters. Blocks that write their own rows get write prefetches of the next block's row
// (codegen/block_prefetch.h): the last block's reaches past the end of the output.
#include <cstdint>
#include <vector>

#include "check.h"

template <unsigned Items, unsigned Used>
__global__ void items(const unsigned* __restrict__ in, unsigned* __restrict__ out, size_t n) {
  size_t base = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) * Items;
  unsigned v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (unsigned k = 0; k < Used; ++k)
    if (base + k < n) out[base + k] = v * 7u + k;
}

// 32-bit indices, each item's extended on its own: the scatters stay, and must still be right.
__global__ void items_int(const int* __restrict__ in, int* __restrict__ out, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 2;
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  if (base < n) out[base] = v;
  if (base + 1 < n) out[base + 1] = -v;
}

__global__ void rows(const float* __restrict__ in, float* __restrict__ out, unsigned cols) {
  const float* x = in + size_t(blockIdx.x) * cols;
  float* y = out + size_t(blockIdx.x) * cols;
  for (unsigned c = threadIdx.x; c < cols; c += blockDim.x)
    y[c] = x[c] * 2.0f + float(blockIdx.x);
}

// Runs launch(device in, device out) with `out` as the output's first contents; false when
// a CUDA call failed. `out` holds the output afterwards.
template <typename In, typename Out, typename Launch>
static bool run_on_device(const std::vector<In>& in, std::vector<Out>& out, Launch launch) {
  In* d_in = nullptr;
  Out* d_out = nullptr;
  auto ok = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return e == cudaSuccess;
  };
  bool good = ok(cudaMalloc(&d_in, in.size() * sizeof(In)), "cudaMalloc") &&
              ok(cudaMalloc(&d_out, out.size() * sizeof(Out)), "cudaMalloc") &&
              ok(cudaMemcpy(d_in, in.data(), in.size() * sizeof(In), cudaMemcpyHostToDevice), "cudaMemcpy") &&
              ok(cudaMemcpy(d_out, out.data(), out.size() * sizeof(Out), cudaMemcpyHostToDevice), "cudaMemcpy");
  if (good) {
    launch(d_in, d_out);
    good = ok(cudaGetLastError(), "launch") && ok(cudaDeviceSynchronize(), "kernel") &&
           ok(cudaMemcpy(out.data(), d_out, out.size() * sizeof(Out), cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
  cudaFree(d_in);
  cudaFree(d_out);
  return good;
}

template <unsigned Items, unsigned Used> static bool run_items(size_t n, unsigned block) {
  const size_t threads = (n + Items - 1) / Items;
  const unsigned blocks = unsigned((threads + block - 1) / block);
  std::vector<unsigned> in(size_t(blocks) * block), out(n + 64, 0xdeadbeefu), expect(n + 64, 0xdeadbeefu);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = unsigned(i * 2654435761u);
  for (size_t t = 0; t < in.size(); ++t)
    for (unsigned k = 0; k < Used; ++k)
      if (t * Items + k < n)
        expect[t * Items + k] = in[t] * 7u + k;
  if (!run_on_device(in, out, [&](unsigned* d_in, unsigned* d_out) { items<Items, Used><<<blocks, block>>>(d_in, d_out, n); }))
    return false;
  expect_equal("items", out.data(), expect.data(), out.size());
  return true;
}

int main() {
  if (!run_items<4, 4>(4 * 256 * 37 - 5, 256) || !run_items<4, 4>(1000, 96) || !run_items<4, 3>(4 * 256 * 9 - 2, 256) ||
      !run_items<2, 2>(2 * 128 * 5 + 1, 128) || !run_items<8, 8>(8 * 64 * 3 - 9, 64))
    return 1;

  { // 32-bit indices
    const int n = 2 * 256 * 11 - 3, threads = (n + 1) / 2, blocks = (threads + 255) / 256;
    std::vector<int> in(size_t(blocks) * 256), out(n + 16, 12345), expect(n + 16, 12345);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = int(i) * 3 - 1000;
    for (int t = 0; t < int(in.size()); ++t) {
      if (2 * t < n) expect[2 * t] = in[t];
      if (2 * t + 1 < n) expect[2 * t + 1] = -in[t];
    }
    if (!run_on_device(in, out, [&](int* d_in, int* d_out) { items_int<<<blocks, 256>>>(d_in, d_out, n); }))
      return 1;
    expect_equal("items_int", out.data(), expect.data(), out.size());
  }

  { // rows of 3000 floats (a page and more apart), the grid's last row at the allocation's end
    const unsigned cols = 3000, count = 41;
    std::vector<float> in(size_t(cols) * count), out(in.size()), expect(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = float(i % 1000) * 0.25f;
    for (unsigned r = 0; r < count; ++r)
      for (unsigned c = 0; c < cols; ++c)
        expect[size_t(r) * cols + c] = in[size_t(r) * cols + c] * 2.0f + float(r);
    if (!run_on_device(in, out, [&](float* d_in, float* d_out) { rows<<<count, 128>>>(d_in, d_out, cols); }))
      return 1;
    expect_equal("rows", out.data(), expect.data(), out.size());
  }
  return report("items_per_thread");
}
