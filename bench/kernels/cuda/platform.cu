// The CUDA platform: device buffers, copies and the dispatch to each kernel's launcher.
#include <stdexcept>
#include <string>

#include "cuda_kernels.h"

namespace bench {
namespace cuda {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw std::runtime_error(std::string("cuda: ") + what + ": " + cudaGetErrorName(status) + ": " +
                           cudaGetErrorString(status));
}

namespace {

using Launcher = void (*)(void* const*, const Params&);

constexpr Launcher kLaunchers[] = {
#define BENCH_KERNEL(name, summary) run_##name,
#include "../kernels.def"
};
static_assert(sizeof kLaunchers / sizeof kLaunchers[0] == kKernelCount);

class CudaPlatform final : public Platform {
public:
  void load(const Problem& problem) override {
    for (const Buffer& b : problem.buffers) {
      void* d = nullptr;
      check(cudaMalloc(&d, b.bytes), ("cudaMalloc of " + b.name).c_str());
      buffers_.push_back(d);
      if (!b.host.empty())
        check(cudaMemcpy(d, b.host.data(), b.bytes, cudaMemcpyHostToDevice),
              "cudaMemcpy to device");
      else if (b.role == Role::Output)
        check(cudaMemset(d, 0, b.bytes), "cudaMemset");
    }
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the copies");
  }

  void run(const Problem& problem) override {
    kLaunchers[size_t(problem.kernel)](buffers_.data(), problem.params);
    check(cudaGetLastError(), "launch");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

  void fetch(const Problem& problem, size_t index, void* out) override {
    check(cudaMemcpy(out, buffers_.at(index), problem.buffers[index].bytes, cudaMemcpyDeviceToHost),
          "cudaMemcpy to host");
  }

  void unload() override {
    for (void* d : buffers_)
      cudaFree(d);
    buffers_.clear();
  }

  ~CudaPlatform() override { unload(); }

private:
  std::vector<void*> buffers_;
};

} // namespace
} // namespace cuda

std::unique_ptr<Platform> make_cuda_platform() {
  int devices = 0;
  cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0)
    throw std::runtime_error(std::string("cuda: no device (") + cudaGetErrorString(status) +
                             "); run bench_kernels under `mimic run`");
  cuda::check(cudaSetDevice(0), "cudaSetDevice");
  return std::make_unique<cuda::CudaPlatform>();
}

void cuda_empty_launch(unsigned blocks) {
  cuda::run_empty(blocks);
  cuda::check(cudaGetLastError(), "launch of the empty kernel");
  cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the empty kernel");
}

} // namespace bench
