// The harness side of bench_kernels (built by the project's compiler, not by nvcc).
#pragma once

#include <string>

#include "bench.h"

namespace bench {

struct Sizes {
  size_t working_set = 0; // bytes of data for the memory-bound kernels
  bool quick = false;     // small compute-bound problems too
};

// The kernel's inputs (deterministic), its outputs and scratch, and its parameters.
Problem make_problem(Kernel kernel, const Sizes& sizes);

// Compares buffer `index` of `got` against `want` as the problem says; returns an empty
// string when they agree, otherwise what differs.
std::string compare_buffer(const Problem& problem, size_t index,
                           const std::vector<unsigned char>& got,
                           const std::vector<unsigned char>& want);

struct LaunchTimes {
  double mimic_us = 0, native_us = 0, first_launch_ms = 0;
};

// The round trip of an empty kernel of `threads` blocks (launch + cudaDeviceSynchronize)
// against a persistent native thread pool dispatching the same empty blocks to `threads`
// workers and waiting for them; medians of `iterations` round trips each.
LaunchTimes measure_launch(unsigned threads, unsigned iterations);

} // namespace bench
