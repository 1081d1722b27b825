// Loops each thread runs on its own whose latch keeps a thread while its index compares
// below a bound the same in every thread (`for (c = start; c < bound; c += step)`) run
// counted rounds on the CPU backend (codegen/thread_interchange.cpp, Plan::Counted): a
// thread is inside while the latch's test of the round before holds, computed again from
// its start, with no state stored. That is exact only while the values tested do not wrap
// around; rows where they could run the state-mode rounds instead. Here: starts read from
// memory and computed from the thread index (the loop's guard as the test of round 0),
// do-while loops (every thread runs once), signed and <= tests, and rows whose values
// wrap around after a thread left, or while it is inside, which counting alone would get
// wrong. Also a loop unrolled by two, whose index steps by a chain of two adds, and starts
// a thread apart, whose lowest and highest come from the row's first thread (unless they
// wrap around within the row).
// MIMIC_QUICK_TIER=0: every launch runs the optimised code, which has the rounds.
// mimic-env: MIMIC_INTERCHANGE=explain MIMIC_QUICK_TIER=0
// expect-stderr: : made, counted from its guard, the row's starts from its first
#include <cstdint>
#include <string>
#include <vector>

#include "check.h"

constexpr int kTable = 1024;

// Starts read from memory: the guard is not the loop's test of a start every thread has.
__global__ void walk_loaded(const unsigned* starts, unsigned bound, unsigned step, const int* table, int* count,
                            int* sum) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = 0, s = 0;
  for (unsigned c = starts[t]; c < bound; c += step) {
    ++n;
    s += table[c % kTable];
  }
  count[t] = n;
  sum[t] = s;
}

// Starts from the thread index: the guard is the test of round 0.
__global__ void walk_indexed(unsigned base, unsigned spread, unsigned bound, unsigned step, const int* table,
                             int* count, int* sum) {
  int n = 0, s = 0;
  for (unsigned c = base + threadIdx.x * spread; c < bound; c += step) {
    ++n;
    s += table[c % kTable];
  }
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  count[t] = n;
  sum[t] = s;
}

// Starts rising by one from thread to thread, from a base: the row's lowest and highest
// start are its first and last thread's, unless they wrap around within the row.
__global__ void walk_row(unsigned base, unsigned bound, unsigned step, const int* table, int* count, int* sum) {
  int n = 0, s = 0;
  for (unsigned c = base + threadIdx.x; c < bound; c += step) {
    ++n;
    s += table[c % kTable];
  }
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  count[t] = n;
  sum[t] = s;
}

// Every thread runs the body once, whatever its start.
__global__ void walk_do(const unsigned* starts, unsigned bound, unsigned step, const int* table, int* count,
                        int* sum) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = 0, s = 0;
  unsigned c = starts[t];
  do {
    ++n;
    s += table[c % kTable];
    c += step;
  } while (c < bound);
  count[t] = n;
  sum[t] = s;
}

// A loop unrolled by two: the index steps twice a trip, its first sum also indexing the
// second item (the step is a chain of two adds).
__global__ void walk_two_steps(const unsigned* starts, unsigned bound, unsigned step, const int* table, int* count,
                               int* sum) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = 0, s = 0;
  for (unsigned c = starts[t]; c < bound;) {
    unsigned d = c + step;
    ++n;
    s += table[c % kTable] + 3 * table[d % kTable];
    c = d + step;
  }
  count[t] = n;
  sum[t] = s;
}

// A signed index up to and including the bound.
__global__ void walk_signed(const int* starts, int bound, int step, const int* table, int* count, int* sum) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = 0, s = 0;
  for (int c = starts[t]; c <= bound; c += step) {
    ++n;
    s += table[(c + 4 * kTable) % kTable];
  }
  count[t] = n;
  sum[t] = s;
}

namespace {

constexpr int kBlocks = 4, kThreads = 128, kTotal = kBlocks * kThreads;

struct Device {
  unsigned* starts;
  int* table;
  int* count;
  int* sum;
};

// The device's counts and sums against the host's; 1 when the launch failed.
int compare(const char* what, const Device& d, const std::vector<int>& want_count, const std::vector<int>& want_sum) {
  std::vector<int> count(kTotal), sum(kTotal);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(count.data(), d.count, kTotal * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(sum.data(), d.sum, kTotal * sizeof(int), cudaMemcpyDeviceToHost));
  expect_equal((std::string(what) + ": counts").c_str(), count.data(), want_count.data(), kTotal);
  expect_equal((std::string(what) + ": sums").c_str(), sum.data(), want_sum.data(), kTotal);
  return 0;
}

} // namespace

int main() {
  std::vector<int> table(kTable);
  for (int i = 0; i < kTable; ++i)
    table[i] = (i * 7919) % 1009 - 500;
  Device d{};
  CHECK(cudaMalloc(&d.starts, kTotal * sizeof(unsigned)));
  CHECK(cudaMalloc(&d.table, kTable * sizeof(int)));
  CHECK(cudaMalloc(&d.count, kTotal * sizeof(int)));
  CHECK(cudaMalloc(&d.sum, kTotal * sizeof(int)));
  CHECK(cudaMemcpy(d.table, table.data(), kTable * sizeof(int), cudaMemcpyHostToDevice));
  std::vector<int> want_count(kTotal), want_sum(kTotal);
  auto walk = [&](int t, uint32_t c, uint32_t bound, uint32_t step, bool once) {
    int n = 0, s = 0;
    if (once || c < bound)
      do {
        ++n;
        s += table[c % kTable];
        c += step;
      } while (c < bound);
    want_count[t] = n;
    want_sum[t] = s;
  };
  const uint32_t unit = 1u << 28;
  std::vector<uint32_t> starts(kTotal);
  // The starts of walk_loaded and walk_do; 1 when the copy failed.
  auto set_starts = [&](auto start_of) -> int {
    for (int t = 0; t < kTotal; ++t)
      starts[t] = start_of(t);
    CHECK(cudaMemcpy(d.starts, starts.data(), kTotal * sizeof(uint32_t), cudaMemcpyHostToDevice));
    return 0;
  };
  // walk_loaded and walk_do from `starts`, walk_indexed from base + threadIdx.x * spread;
  // 1 when a launch failed.
  auto walks = [&](const std::string& what, uint32_t bound, uint32_t step, uint32_t base, uint32_t spread) {
    walk_loaded<<<kBlocks, kThreads>>>(d.starts, bound, step, d.table, d.count, d.sum);
    for (int t = 0; t < kTotal; ++t)
      walk(t, starts[t], bound, step, false);
    if (compare(("walk_loaded" + what).c_str(), d, want_count, want_sum))
      return 1;
    walk_do<<<kBlocks, kThreads>>>(d.starts, bound, step, d.table, d.count, d.sum);
    for (int t = 0; t < kTotal; ++t)
      walk(t, starts[t], bound, step, true);
    if (compare(("walk_do" + what).c_str(), d, want_count, want_sum))
      return 1;
    walk_two_steps<<<kBlocks, kThreads>>>(d.starts, bound, step, d.table, d.count, d.sum);
    for (int t = 0; t < kTotal; ++t) {
      int n = 0, s = 0;
      for (uint32_t c = starts[t]; c < bound;) {
        uint32_t next = c + step;
        ++n;
        s += table[c % kTable] + 3 * table[next % kTable];
        c = next + step;
      }
      want_count[t] = n;
      want_sum[t] = s;
    }
    if (compare(("walk_two_steps" + what).c_str(), d, want_count, want_sum))
      return 1;
    walk_indexed<<<kBlocks, kThreads>>>(base, spread, bound, step, d.table, d.count, d.sum);
    for (int t = 0; t < kTotal; ++t)
      walk(t, base + uint32_t(t % kThreads) * spread, bound, step, false);
    return compare(("walk_indexed" + what).c_str(), d, want_count, want_sum);
  };

  // Ordinary rows: trip counts from 0 to 40 by thread, some threads never enter.
  if (set_starts([](int t) { return uint32_t(t % 7 == 3 ? 6000 : (t * 37) % 5100); }) ||
      walks("", 5000, 123, 100, 41))
    return 1;

  // Thread 0 of each row runs 4 rounds (0, 3, 6, 9 units of 2^28, then 12 = the bound);
  // the others start near the bound and leave after one (walk_indexed: thread 127 starts
  // just below it). In round 2 a thread that left would test 2^32 + 2 units or so:
  // wrapped around, below the bound again.
  {
    const uint32_t bound = 12 * unit, step = 3 * unit;
    if (set_starts([&](int t) { return t % kThreads == 0 ? 0u : bound - 1 - uint32_t(t); }) ||
        walks(", wrapping after leaving", bound, step, 0, (bound - 1) / (kThreads - 1)))
      return 1;
  }

  // Values that wrap around while the thread is inside: from 14 units by 3 below a bound
  // of 15, the walk goes 14, 1, 4, ..., 13, 0, 3, ..., 12 and leaves at 15: 12 iterations.
  {
    const uint32_t bound = 15 * unit, step = 3 * unit;
    if (set_starts([&](int t) { return t % 2 ? 14 * unit + uint32_t(t) : uint32_t(t) * 1000; }))
      return 1;
    walk_loaded<<<kBlocks, kThreads>>>(d.starts, bound, step, d.table, d.count, d.sum);
    for (int t = 0; t < kTotal; ++t)
      walk(t, starts[t], bound, step, false);
    if (compare("walk_loaded, wrapping inside", d, want_count, want_sum))
      return 1;
  }

  // Starts a thread apart (walk_row), known from the row's first: ordinary rows, and rows
  // whose starts wrap around (threads 0-63 start at 2^32 - 64 and up, past the bound;
  // threads 64-127 at 0 and up, inside): the first thread's start is not the lowest.
  for (uint32_t base : {100u, 0xffffffc0u}) {
    const uint32_t bound = 5000, step = 123;
    walk_row<<<kBlocks, kThreads>>>(base, bound, step, d.table, d.count, d.sum);
    for (int t = 0; t < kTotal; ++t)
      walk(t, base + uint32_t(t % kThreads), bound, step, false);
    if (compare(base == 100 ? "walk_row" : "walk_row, wrapping across the row", d, want_count, want_sum))
      return 1;
  }

  // Signed, up to and including the bound, from negative starts.
  {
    const int bound = 700, step = 37;
    std::vector<int> signed_starts(kTotal);
    for (int t = 0; t < kTotal; ++t)
      signed_starts[t] = (t * 53) % 2000 - 1200;
    CHECK(cudaMemcpy(d.starts, signed_starts.data(), kTotal * sizeof(int), cudaMemcpyHostToDevice));
    walk_signed<<<kBlocks, kThreads>>>(reinterpret_cast<const int*>(d.starts), bound, step, d.table, d.count, d.sum);
    for (int t = 0; t < kTotal; ++t) {
      int n = 0, s = 0;
      for (int c = signed_starts[t]; c <= bound; c += step) {
        ++n;
        s += table[(c + 4 * kTable) % kTable];
      }
      want_count[t] = n;
      want_sum[t] = s;
    }
    if (compare("walk_signed", d, want_count, want_sum))
      return 1;
  }

  return report("counted_rounds");
}
