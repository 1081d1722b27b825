// Runs of shuffles with arithmetic between them, which the CPU backend evaluates a warp at
// a time (codegen/warp_chain.cpp): every shuffle mode with segment widths, a partial last
// warp (blocks of 48 threads), shfl's predicate used by the arithmetic, a chain inside a
// loop carrying its result to the next iteration, float sums in the butterfly's order,
// a chain over a member mask of 20 lanes after the other lanes have exited, arithmetic
// between shuffles that the threads also compute themselves, inputs that are copies of
// others, and %tid.x read by the chain in rows that are not a whole number of warps.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "check.h"

constexpr int kBlock = 48, kBlocks = 5, kN = kBlock * kBlocks;

__global__ void modes(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  v += __shfl_down_sync(0xffffffffu, v, 1, 8);
  v ^= __shfl_up_sync(0xffffffffu, v, 2, 16);
  v += 3 * __shfl_xor_sync(0xffffffffu, v, 4);
  v = max(v, __shfl_sync(0xffffffffu, v, 5, 16));
  v -= __shfl_down_sync(0xffffffffu, v, 3, 16);
  out[i] = v;
}

// shfl's predicate (whether the source lane was in range) feeds the arithmetic.
__global__ void predicate(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i], w, ok;
  asm("{\n\t.reg .pred p;\n\t.reg .b32 t;\n\t"
      "shfl.sync.down.b32 t|p, %2, 3, 31, -1;\n\t"
      "selp.b32 %1, 100, 7, p;\n\t"
      "add.s32 t, t, %1;\n\t"
      "shfl.sync.bfly.b32 %0, t, 1, 31, -1;\n\t}"
      : "=r"(w), "=r"(ok)
      : "r"(v));
  out[i] = w * 1000 + ok;
}

// The chain's result goes round the loop into the next chain.
__global__ void looped(const int* in, int* out, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
#pragma unroll 1
  for (int k = 0; k < rounds; ++k) {
    v += __shfl_xor_sync(0xffffffffu, v, 8);
    v += __shfl_xor_sync(0xffffffffu, v, 2);
    v = v * 3 + k;
  }
  out[i] = v;
}

__global__ void float_sum(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = in[i];
  for (int m = 8; m > 0; m /= 2)
    s += __shfl_xor_sync(0xffffffffu, s, m);
  out[i] = s;
}

// Lanes 20 and up have gone; lanes 0-19 exchange within groups of four.
__global__ void partial_mask(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x % 32 >= 20) return;
  int v = in[i];
  v += __shfl_xor_sync(0x000fffffu, v, 1);
  v *= __shfl_xor_sync(0x000fffffu, v, 2);
  out[i] = v;
}

// Arithmetic between the shuffles that reads nothing they compute is the thread's own too;
// one that reads its own destination (`add c, c, 5`) must not run ahead of the chain,
// whose published input c would then be changed.
__global__ void own_arithmetic(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i], c = i, w;
  asm("{\n\t.reg .b32 t;\n\t"
      "shfl.sync.down.b32 t, %2, 1, 31, -1;\n\t"
      "add.s32 %1, %1, 5;\n\t"
      "and.b32 %1, %1, 1023;\n\t"
      "add.s32 t, t, %1;\n\t"
      "shfl.sync.bfly.b32 %0, t, 2, 31, -1;\n\t}"
      : "=r"(w), "+r"(c)
      : "r"(v));
  out[i] = w * 4096 + c;
}

// Inputs that are bit copies of other inputs share their lane array (t of g); a copy whose
// source changed after it (w) is published apart.
__global__ void copies(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i], r;
  asm("{\n\t.reg .b32 g, w, t, u, x;\n\t"
      "mov.b32 g, %1;\n\t"
      "mov.b32 w, g;\n\t"
      "add.s32 g, g, 1000;\n\t"
      "mov.b32 t, g;\n\t"
      "shfl.sync.down.b32 u, t, 1, 31, -1;\n\t"
      "shfl.sync.down.b32 x, w, 2, 31, -1;\n\t"
      "add.s32 u, u, g;\n\t"
      "add.s32 %0, u, x;\n\t}"
      : "=r"(r)
      : "r"(v));
  out[i] = r;
}

// %tid.x read by the chain's arithmetic (scan's `lane >= offset` tests): each lane's from
// its thread index, here for rows that are not a whole number of warps (24 and 40 wide).
__global__ void tid_in_chain(const int* in, int* out) {
  int i = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  int v = in[i];
  unsigned tx = threadIdx.x;
  for (unsigned o = 1; o < 32; o *= 2) {
    int up = __shfl_up_sync(0xffffffffu, v, o);
    v += tx >= o ? up : 0;
  }
  out[i] = v;
}

// The host's shuffle: PTX's source lane for mode 0 up, 1 down, 2 bfly, 3 idx, with CUDA's
// c for `width`; a lane whose source is out of its segment, or past the block (a partial
// last warp), keeps its own value.
static std::vector<int64_t> shuffle(const std::vector<int64_t>& v, int mode, int b, int width) {
  std::vector<int64_t> r(v.size());
  int c = ((32 - width) << 8) | (mode == 0 ? 0 : 31);
  for (size_t t = 0; t < v.size(); ++t) {
    int lane = int(t % kBlock % 32), base = int(t - lane);
    int segmask = (c >> 8) & 31, min_lane = lane & segmask, max_lane = min_lane | ((c & 31) & ~segmask);
    int j;
    bool in_range;
    switch (mode) {
    case 0: j = lane - b; in_range = j >= max_lane; break;
    case 1: j = lane + b; in_range = j <= max_lane; break;
    case 2: j = lane ^ b; in_range = j <= max_lane; break;
    default: j = min_lane | (b & ~segmask); in_range = j <= max_lane; break;
    }
    bool exists = int(t % kBlock) - lane + j < kBlock;
    r[t] = in_range && exists ? v[size_t(base + j)] : v[t];
  }
  return r;
}

int main() {
  std::vector<int> in(kN), out(kN);
  for (int i = 0; i < kN; ++i)
    in[i] = (i * 7919) % 1009 - 300;
  int *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, kN * sizeof(int)));
  CHECK(cudaMalloc(&d_out, kN * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), kN * sizeof(int), cudaMemcpyHostToDevice));
  auto run_int = [&](const char* what, const std::vector<int64_t>& want) {
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, kN * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<int> w(want.begin(), want.end());
    return expect_equal(what, out.data(), w.data(), kN);
  };
  std::vector<int64_t> v(in.begin(), in.end());

  { // modes
    std::vector<int64_t> x = v, s;
    s = shuffle(x, 1, 1, 8);
    for (int i = 0; i < kN; ++i) x[i] = int32_t(x[i] + s[i]);
    s = shuffle(x, 0, 2, 16);
    for (int i = 0; i < kN; ++i) x[i] = int32_t(x[i] ^ s[i]);
    s = shuffle(x, 2, 4, 32);
    for (int i = 0; i < kN; ++i) x[i] = int32_t(x[i] + 3 * s[i]);
    s = shuffle(x, 3, 5, 16);
    for (int i = 0; i < kN; ++i) x[i] = std::max(x[i], s[i]);
    s = shuffle(x, 1, 3, 16);
    for (int i = 0; i < kN; ++i) x[i] = int32_t(x[i] - s[i]);
    modes<<<kBlocks, kBlock>>>(d_in, d_out);
    run_int("every mode", x);
  }
  { // predicate
    std::vector<int64_t> s = shuffle(v, 1, 3, 32), t(kN), ok(kN);
    for (int i = 0; i < kN; ++i) {
      bool p = i % kBlock % 32 + 3 <= 31; // in range of the warp, whether or not the lane exists
      ok[i] = p ? 100 : 7;
      t[i] = int32_t(s[i] + ok[i]);
    }
    std::vector<int64_t> w = shuffle(t, 2, 1, 32), want(kN);
    for (int i = 0; i < kN; ++i)
      want[i] = int32_t(w[i] * 1000 + ok[i]);
    predicate<<<kBlocks, kBlock>>>(d_in, d_out);
    run_int("shfl predicate", want);
  }
  { // looped
    std::vector<int64_t> x = v, s;
    for (int k = 0; k < 4; ++k) {
      s = shuffle(x, 2, 8, 32);
      for (int i = 0; i < kN; ++i) x[i] = int32_t(x[i] + s[i]);
      s = shuffle(x, 2, 2, 32);
      for (int i = 0; i < kN; ++i) x[i] = int32_t(uint32_t(int32_t(x[i] + s[i])) * 3u + uint32_t(k));
    }
    looped<<<kBlocks, kBlock>>>(d_in, d_out, 4);
    run_int("chain in a loop", x);
  }
  { // own arithmetic, one instruction reading its destination
    std::vector<int64_t> s = shuffle(v, 1, 1, 32), c(kN), t(kN), want(kN);
    for (int i = 0; i < kN; ++i) {
      c[i] = (i + 5) & 1023;
      t[i] = int32_t(s[i] + c[i]);
    }
    std::vector<int64_t> w = shuffle(t, 2, 2, 32);
    for (int i = 0; i < kN; ++i)
      want[i] = int32_t(uint32_t(w[i]) * 4096u + uint32_t(c[i]));
    own_arithmetic<<<kBlocks, kBlock>>>(d_in, d_out);
    run_int("own arithmetic", want);
  }
  { // copies of inputs
    std::vector<int64_t> g(kN), want(kN);
    for (int i = 0; i < kN; ++i) g[i] = v[i] + 1000;
    std::vector<int64_t> u = shuffle(g, 1, 1, 32), x = shuffle(v, 1, 2, 32);
    for (int i = 0; i < kN; ++i) want[i] = int32_t(u[i] + g[i] + x[i]);
    copies<<<kBlocks, kBlock>>>(d_in, d_out);
    run_int("copies of inputs", want);
  }
  for (dim3 shape : {dim3(24, 4), dim3(40, 2)}) { // tid.x in the chain
    const int threads = int(shape.x * shape.y), blocks = kN / threads;
    std::vector<int64_t> x(v.begin(), v.begin() + blocks * threads), want(kN, 0);
    for (unsigned o = 1; o < 32; o *= 2) {
      std::vector<int64_t> next = x;
      for (int i = 0; i < blocks * threads; ++i) {
        int in_block = i % threads, lane = in_block % 32, tx = in_block % int(shape.x);
        int64_t up = lane >= int(o) ? x[size_t(i - int(o))] : x[size_t(i)];
        next[size_t(i)] = int32_t(x[size_t(i)] + (tx >= int(o) ? up : 0));
      }
      x = next;
    }
    std::copy(x.begin(), x.end(), want.begin());
    CHECK(cudaMemset(d_out, 0, kN * sizeof(int)));
    tid_in_chain<<<blocks, shape>>>(d_in, d_out);
    run_int(shape.x == 24 ? "tid.x in the chain, rows of 24" : "tid.x in the chain, rows of 40", want);
  }
  { // partial mask: lanes 20-31 of each warp write nothing
    CHECK(cudaMemset(d_out, 0, kN * sizeof(int)));
    std::vector<int64_t> x = v, s, want(kN, 0);
    s = shuffle(x, 2, 1, 32);
    for (int i = 0; i < kN; ++i) x[i] = int32_t(x[i] + s[i]);
    s = shuffle(x, 2, 2, 32);
    for (int i = 0; i < kN; ++i)
      if (i % kBlock % 32 < 20) want[i] = int32_t(uint32_t(x[i]) * uint32_t(s[i]));
    partial_mask<<<kBlocks, kBlock>>>(d_in, d_out);
    run_int("20 lanes of 32", want);
  }
  { // float sums, in the butterfly's order
    std::vector<float> f(kN), got(kN), want(kN);
    for (int i = 0; i < kN; ++i)
      f[i] = float((i * 37) % 23) * 0.37f - 3.0f;
    std::vector<float> x = f;
    for (int m = 8; m > 0; m /= 2) {
      std::vector<float> next(kN);
      for (int i = 0; i < kN; ++i) {
        int lane = i % kBlock % 32, base = i - lane;
        next[i] = x[i] + x[size_t(base + (lane ^ m))];
      }
      x = next;
    }
    float *d_f, *d_g;
    CHECK(cudaMalloc(&d_f, kN * sizeof(float)));
    CHECK(cudaMalloc(&d_g, kN * sizeof(float)));
    CHECK(cudaMemcpy(d_f, f.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
    float_sum<<<kBlocks, kBlock>>>(d_f, d_g);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(got.data(), d_g, kN * sizeof(float), cudaMemcpyDeviceToHost));
    expect_equal("float butterfly", got.data(), x.data(), kN);
  }
  return report("warp_chain");
}
