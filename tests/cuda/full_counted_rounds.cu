// Counted rounds of a guarded loop (`for (c = start; c < bound; c += step)` whose guard is
// the same test) run a copy without the per-thread test in rounds where every thread of
// the row is inside, chosen by the largest start, and know from the smallest start whether
// another round follows (codegen/thread_interchange.cpp, full counted rounds). 64-bit
// indices (grid-stride loops over size_t) are counted this way too. The rounds must switch
// back to the tested copy when threads leave: trip counts that differ within a row, a last
// round only some threads reach, rows where no round is full, signed tests up to and
// including the bound, and 64-bit values so near the top of their range that counting
// would wrap (those rows run the state-mode rounds). MIMIC_QUICK_TIER=0: every launch runs
// the optimised code, which has the rounds (the quick code has none).
// mimic-env: MIMIC_INTERCHANGE=explain MIMIC_QUICK_TIER=0
// expect-stderr: : made, counted from its guard
#include <cstdint>
#include <string>
#include <vector>

#include "check.h"

constexpr int kTable = 1024;

__global__ void walk32(unsigned base, unsigned spread, unsigned bound, unsigned step, const int* table, int* count,
                       int* sum) {
  int n = 0, s = 0;
  for (unsigned c = base + threadIdx.x * spread; c < bound; c += step) {
    ++n;
    s += table[c % kTable];
  }
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  count[t] = n;
  sum[t] = s;
}

__global__ void walk_signed(int base, int spread, int bound, int step, const int* table, int* count, int* sum) {
  int n = 0, s = 0;
  for (int c = base + int(threadIdx.x) * spread; c <= bound; c += step) {
    ++n;
    s += table[(c + 4 * kTable) % kTable];
  }
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  count[t] = n;
  sum[t] = s;
}

// A grid-stride loop over a 64-bit index, from `base` on.
__global__ void walk64(uint64_t base, uint64_t bound, const int* table, int* count, int* sum) {
  int n = 0, s = 0;
  for (uint64_t i = base + uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < bound;
       i += uint64_t(gridDim.x) * blockDim.x) {
    ++n;
    s += table[i % kTable];
  }
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  count[t] = n;
  sum[t] = s;
}

namespace {

constexpr int kBlocks = 4, kThreads = 128, kTotal = kBlocks * kThreads;

struct Results {
  int* count;
  int* sum;
};

// The device's counts and sums against the host's walk of each thread (`walk(t, n, s)`);
// 1 when a launch or copy failed.
template <typename Walk>
int compare(const std::string& what, const Results& d, Walk walk) {
  std::vector<int> count(kTotal), sum(kTotal), want_count(kTotal), want_sum(kTotal);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(count.data(), d.count, kTotal * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sum.data(), d.sum, kTotal * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < kTotal; ++t)
    walk(t, want_count[t], want_sum[t]);
  expect_equal((what + ": counts").c_str(), count.data(), want_count.data(), kTotal);
  expect_equal((what + ": sums").c_str(), sum.data(), want_sum.data(), kTotal);
  return 0;
}

} // namespace

int main() {
  std::vector<int> table(kTable);
  for (int i = 0; i < kTable; ++i)
    table[i] = (i * 7919) % 1009 - 500;
  int* d_table;
  Results d{};
  CHECK(cudaMalloc(&d_table, kTable * sizeof(int)));
  CHECK(cudaMalloc(&d.count, kTotal * sizeof(int)));
  CHECK(cudaMalloc(&d.sum, kTotal * sizeof(int)));
  CHECK(cudaMemcpy(d_table, table.data(), kTable * sizeof(int), cudaMemcpyHostToDevice));

  struct Case32 {
    const char* name;
    unsigned base, spread, bound, step;
  };
  const Case32 cases32[] = {
      {"full rounds, then a partial one", 0, 1, 1000, 128}, // rounds 0-6 full, round 7 partial
      {"every round full", 0, 1, 1024, 128},                // 8 full rounds
      {"full rounds from a base", 5000, 3, 9000, 384},      // starts spread over 384
      {"no round full", 100, 41, 5000, 123},                // trip counts 0 to 40
      {"one round, full", 7, 1, 7 + 128, 128},              // each thread once
      {"no thread enters", 3000, 1, 3000, 1},
  };
  for (const Case32& k : cases32) {
    walk32<<<kBlocks, kThreads>>>(k.base, k.spread, k.bound, k.step, d_table, d.count, d.sum);
    if (compare(std::string("walk32, ") + k.name, d, [&](int t, int& n, int& s) {
          n = s = 0;
          for (uint32_t c = k.base + uint32_t(t % kThreads) * k.spread; c < k.bound; c += k.step) {
            ++n;
            s += table[c % kTable];
          }
        }))
      return 1;
  }

  // Signed, up to and including the bound, from negative starts.
  walk_signed<<<kBlocks, kThreads>>>(-2000, 3, 700, 384, d_table, d.count, d.sum);
  if (compare("walk_signed", d, [&](int t, int& n, int& s) {
        n = s = 0;
        for (int c = -2000 + (t % kThreads) * 3; c <= 700; c += 384) {
          ++n;
          s += table[(c + 4 * kTable) % kTable];
        }
      }))
    return 1;

  struct Case64 {
    const char* name;
    uint64_t base, bound;
  };
  const uint64_t grid = uint64_t(kTotal);
  const Case64 cases64[] = {
      {"a whole number of rounds", 0, 40 * grid},
      {"a partial last round", 0, 40 * grid + 77},
      {"fewer items than threads", 0, grid / 2 + 3},
      {"near 2^63", (uint64_t(1) << 63) - 5 * grid, (uint64_t(1) << 63) + 7 * grid + 100},
      // The largest start plus the step would wrap around (no thread's index does: the
      // threads that enter go once): the state-mode rounds run.
      {"at the top of the range", ~uint64_t(0) - 599, ~uint64_t(0) - 519},
  };
  for (const Case64& k : cases64) {
    walk64<<<kBlocks, kThreads>>>(k.base, k.bound, d_table, d.count, d.sum);
    if (compare(std::string("walk64, ") + k.name, d, [&](int t, int& n, int& s) {
          n = s = 0;
          for (uint64_t i = k.base + uint64_t(t); i < k.bound; i += grid) {
            ++n;
            s += table[i % kTable];
          }
        }))
      return 1;
  }
  return report("full_counted_rounds");
}
