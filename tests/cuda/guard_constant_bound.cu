// A block-stride loop up to a constant (`for (k = threadIdx.x; k < 300; k += blockDim.x)`)
// comes from nvcc with its guard written as the other test of the same bound
// (`setp.gt.u32 %r, 299` before the loop, `setp.lt.u32 %r, 300` at its end). The CPU
// backend takes that guard as the loop's own test (codegen/thread_interchange.cpp,
// same_test), so that the interchanged rounds are counted from it with no state per
// thread. Threads whose start is past the bound (blocks of 512) must not run the body;
// blocks of 128 run three rounds, the last one partly. Unsigned and signed bounds.
// MIMIC_QUICK_TIER=0: every launch runs the optimised code, which has the rounds.
// mimic-env: MIMIC_INTERCHANGE=explain MIMIC_QUICK_TIER=0
// expect-stderr: : made, counted from its guard, the row's starts from its first
#include <vector>

#include "check.h"

constexpr unsigned kTile = 300;

__global__ void add_offsets(unsigned* out, const unsigned* offsets, unsigned long long n) {
  unsigned offset = offsets[blockIdx.x];
  unsigned long long base = (unsigned long long)blockIdx.x * kTile;
  for (unsigned k = threadIdx.x; k < kTile; k += blockDim.x)
    if (base + k < n) out[base + k] += offset;
}

__global__ void signed_bound(int* out) {
  for (int k = threadIdx.x; k < int(kTile); k += blockDim.x)
    out[blockIdx.x * kTile + k] += k * 3 + int(threadIdx.x);
}

int main() {
  constexpr unsigned kBlocks = 37;
  const unsigned long long n = kBlocks * kTile - 123; // the last tile in part
  for (unsigned threads : {512u, 128u, 96u}) {
    unsigned *out, *offsets;
    int* signed_out;
    CHECK(cudaMallocManaged(&out, kBlocks * kTile * sizeof(unsigned)));
    CHECK(cudaMallocManaged(&offsets, kBlocks * sizeof(unsigned)));
    CHECK(cudaMallocManaged(&signed_out, kBlocks * kTile * sizeof(int)));
    std::vector<unsigned> want(kBlocks * kTile);
    std::vector<int> want_signed(kBlocks * kTile);
    for (unsigned i = 0; i < kBlocks * kTile; ++i) {
      out[i] = i * 7u;
      signed_out[i] = -int(i);
      unsigned b = i / kTile, k = i % kTile;
      want[i] = i * 7u + (i < n ? 1000u * b + 1 : 0u);
      want_signed[i] = -int(i) + int(k) * 3 + int(k % threads);
    }
    for (unsigned b = 0; b < kBlocks; ++b)
      offsets[b] = 1000u * b + 1;
    add_offsets<<<kBlocks, threads>>>(out, offsets, n);
    signed_bound<<<kBlocks, threads>>>(signed_out);
    CHECK_LAUNCH();
    fprintf(stderr, "blocks of %u threads\n", threads);
    expect_equal("add_offsets", out, want.data(), kBlocks * kTile);
    expect_equal("signed_bound", signed_out, want_signed.data(), kBlocks * kTile);
    CHECK(cudaFree(out));
    CHECK(cudaFree(offsets));
    CHECK(cudaFree(signed_out));
  }
  return report("guard_constant_bound");
}
