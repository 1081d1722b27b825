// The harness side of bench_kernels (built by the project's compiler, not by nvcc).
#pragma once

#include <string>

#include "bench.h"

namespace bench {

struct Sizes {
  enum class Scale { tiny, quick, full };
  size_t working_set = 0;    // bytes of data for the memory-bound kernels
  Scale scale = Scale::full; // the sizes of the compute-bound ones
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
// against a persistent native thread pool of `threads` threads (the caller and
// threads - 1 workers, spinning briefly before they sleep, as CPU runtimes do) running the
// same empty blocks; medians of `iterations` round trips each.
LaunchTimes measure_launch(unsigned threads, unsigned iterations);

} // namespace bench
