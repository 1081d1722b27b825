// bench_kernels: what the harness (main.cpp, problems.cpp) and the three platforms (CUDA
// under Mimic, OpenMP, OpenCL on PoCL) share. Also compiled by nvcc, so C++17.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bench {

enum class Kernel {
#define BENCH_KERNEL(name, summary) name,
#include "kernels.def"
};

constexpr const char* kKernelNames[] = {
#define BENCH_KERNEL(name, summary) #name,
#include "kernels.def"
};
constexpr size_t kKernelCount = sizeof kKernelNames / sizeof kKernelNames[0];

// Sizes and scalars of one problem; which fields a kernel reads is written in problems.cpp.
struct Params {
  uint64_t n = 0;
  uint64_t rows = 0, cols = 0;
  float alpha = 0, beta = 0;
};

enum class Role {
  Input,   // filled by the harness, read by the kernel
  Output,  // zeroed by the harness, written by the kernel, compared
  InOut,   // filled by the harness, updated in place, compared
  Scratch, // the kernel's working space: neither filled nor compared
};

enum class Compare {
  Exact, // bit for bit
  Float, // float32 elements: |x - ref| <= tolerance * (|ref| + rms(ref))
};

struct Buffer {
  std::string name;
  Role role = Role::Input;
  size_t bytes = 0;
  std::vector<unsigned char> host; // Input and InOut: the contents; empty otherwise
  Compare compare = Compare::Exact;
  double tolerance = 0;
};

// One kernel's inputs and outputs. Platforms receive the buffers in this order.
struct Problem {
  Kernel kernel{};
  Params params;
  std::vector<Buffer> buffers;
  size_t data_bytes() const {
    size_t sum = 0;
    for (const Buffer& b : buffers)
      sum += b.bytes;
    return sum;
  }
};

// One way of running the kernels. Errors are thrown as std::runtime_error with a message
// that names the platform and the call.
class Platform {
public:
  virtual ~Platform() = default;
  // Allocates the problem's buffers and copies the inputs in; not timed.
  virtual void load(const Problem& problem) = 0;
  // Runs the kernel once and waits until it has finished: this is what is timed.
  virtual void run(const Problem& problem) = 0;
  // Copies buffer `index` back into `out` (problem.buffers[index].bytes bytes).
  virtual void fetch(const Problem& problem, size_t index, void* out) = 0;
  // Releases what load allocated.
  virtual void unload() = 0;
};

// Each returns the platform or throws saying why it is unavailable.
std::unique_ptr<Platform> make_cuda_platform();
std::unique_ptr<Platform> make_openmp_platform(unsigned threads);
// `device` gets the OpenCL device's name and its compute units (PoCL: worker threads).
std::unique_ptr<Platform> make_opencl_platform(unsigned threads, std::string& device);

// The empty-kernel round trip: launches an empty kernel of `blocks` blocks of 32 threads
// and waits for it. cuda_empty_launch_prepare loads the module first.
void cuda_empty_launch(unsigned blocks);

} // namespace bench
