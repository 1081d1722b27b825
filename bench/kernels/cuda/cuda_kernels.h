// The CUDA side of bench_kernels: one file per kernel, each a separate module (so each
// kernel's first launch includes the JIT of its own module only), and platform.cu.
#pragma once

#include <cuda_runtime.h>

#include "../bench.h"

namespace bench::cuda {

// Throws std::runtime_error naming `what` when `status` is an error.
void check(cudaError_t status, const char* what);

// Launches one problem's kernel(s) on the legacy default stream; `buffers` are device
// pointers in the problem's order. Returns without waiting.
#define BENCH_KERNEL(name, summary) void run_##name(void* const* buffers, const Params& p);
#include "../kernels.def"

void run_empty(unsigned blocks);

constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

} // namespace bench::cuda
