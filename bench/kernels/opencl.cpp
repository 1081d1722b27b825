// The OpenCL platform: kernels.cl (embedded at build time) on PoCL's CPU device. Only the
// platform whose name contains "Portable Computing Language" is used, so the column means
// PoCL and nothing else.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench.h"

namespace bench {
namespace {

const char kSource[] =
#include "kernels_cl.inc"
    ;

void check(cl_int status, const std::string& what) {
  if (status != CL_SUCCESS)
    throw std::runtime_error("opencl: " + what + " failed with error " + std::to_string(status));
}

size_t round_up(size_t v, size_t multiple) {
  return (v + multiple - 1) / multiple * multiple;
}

std::string platform_name(cl_platform_id p) {
  size_t size = 0;
  clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, nullptr, &size);
  std::string name(size, '\0');
  clGetPlatformInfo(p, CL_PLATFORM_NAME, size, name.data(), nullptr);
  while (!name.empty() && name.back() == '\0')
    name.pop_back();
  return name;
}

std::string device_name(cl_device_id d) {
  size_t size = 0;
  clGetDeviceInfo(d, CL_DEVICE_NAME, 0, nullptr, &size);
  std::string name(size, '\0');
  clGetDeviceInfo(d, CL_DEVICE_NAME, size, name.data(), nullptr);
  while (!name.empty() && name.back() == '\0')
    name.pop_back();
  return name;
}

class OpenClPlatform final : public Platform {
public:
  explicit OpenClPlatform(std::string& name) {
    cl_uint count = 0;
    if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0)
      throw std::runtime_error("opencl: no OpenCL platform (install pocl-opencl-icd)");
    std::vector<cl_platform_id> platforms(count);
    check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
    cl_platform_id pocl = nullptr;
    for (cl_platform_id p : platforms)
      if (platform_name(p).find("Portable Computing Language") != std::string::npos) pocl = p;
    if (!pocl)
      throw std::runtime_error(
          "opencl: PoCL is not among the OpenCL platforms (install pocl-opencl-icd)");
    check(clGetDeviceIDs(pocl, CL_DEVICE_TYPE_CPU, 1, &device_, nullptr),
          "clGetDeviceIDs (PoCL CPU device)");
    cl_uint units = 0;
    clGetDeviceInfo(device_, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr);
    name = device_name(device_) + " (" + std::to_string(units) + " compute units)";
    cl_int status;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &status);
    check(status, "clCreateContext");
    queue_ = clCreateCommandQueue(context_, device_, 0, &status);
    check(status, "clCreateCommandQueue");
    const char* source = kSource;
    program_ = clCreateProgramWithSource(context_, 1, &source, nullptr, &status);
    check(status, "clCreateProgramWithSource");
    if (clBuildProgram(program_, 1, &device_, "-cl-std=CL1.2", nullptr, nullptr) != CL_SUCCESS) {
      size_t size = 0;
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      throw std::runtime_error("opencl: kernels.cl does not build:\n" + log);
    }
  }

  ~OpenClPlatform() override {
    unload();
    for (auto& [name, k] : kernels_)
      clReleaseKernel(k);
    clReleaseProgram(program_);
    clReleaseCommandQueue(queue_);
    clReleaseContext(context_);
  }

  void load(const Problem& problem) override {
    for (const Buffer& b : problem.buffers) {
      cl_int status;
      cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE, b.bytes, nullptr, &status);
      check(status, "clCreateBuffer of " + b.name);
      buffers_.push_back(m);
      if (!b.host.empty()) {
        check(clEnqueueWriteBuffer(queue_, m, CL_TRUE, 0, b.bytes, b.host.data(), 0, nullptr,
                                   nullptr),
              "clEnqueueWriteBuffer");
      } else {
        const unsigned char zero = 0;
        check(clEnqueueFillBuffer(queue_, m, &zero, 1, 0, b.bytes, 0, nullptr, nullptr),
              "clEnqueueFillBuffer");
      }
    }
    check(clFinish(queue_), "clFinish after the copies");
  }

  void run(const Problem& problem) override {
    enqueue(problem);
    check(clFinish(queue_), "clFinish");
  }

  void fetch(const Problem& problem, size_t index, void* out) override {
    check(clEnqueueReadBuffer(queue_, buffers_.at(index), CL_TRUE, 0, problem.buffers[index].bytes,
                              out, 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
  }

  void unload() override {
    for (cl_mem m : buffers_)
      clReleaseMemObject(m);
    buffers_.clear();
  }

private:
  cl_kernel kernel(const char* name) {
    auto it = kernels_.find(name);
    if (it != kernels_.end()) return it->second;
    cl_int status;
    cl_kernel k = clCreateKernel(program_, name, &status);
    check(status, std::string("clCreateKernel ") + name);
    return kernels_[name] = k;
  }

  // Sets the arguments of `k` in order: cl_mem buffers by index, scalars by value.
  struct Arg {
    size_t size;
    const void* value;
  };
  void launch(const char* name, std::initializer_list<Arg> args,
              std::initializer_list<size_t> global, std::initializer_list<size_t> local) {
    cl_kernel k = kernel(name);
    cl_uint index = 0;
    for (const Arg& a : args)
      check(clSetKernelArg(k, index++, a.size, a.value), std::string("clSetKernelArg of ") + name);
    check(clEnqueueNDRangeKernel(queue_, k, cl_uint(global.size()), nullptr, global.begin(),
                                 local.begin(), 0, nullptr, nullptr),
          std::string("clEnqueueNDRangeKernel ") + name);
  }
  Arg buf(size_t i) const { return {sizeof(cl_mem), &buffers_.at(i)}; }
  template <typename T> static Arg val(const T& v) { return {sizeof(T), &v}; }
  static Arg local_bytes(size_t bytes) { return {bytes, nullptr}; }

  void enqueue(const Problem& problem) {
    const Params& p = problem.params;
    const cl_ulong n = p.n;
    const cl_uint rows = cl_uint(p.rows), cols = cl_uint(p.cols), n32 = cl_uint(p.n);
    switch (problem.kernel) {
    case Kernel::triad:
      return launch("triad", {buf(0), buf(1), buf(2), val(p.alpha), val(n)}, {round_up(n, 256)},
                    {256});
    case Kernel::saxpy:
      return launch("saxpy", {val(n), val(p.alpha), buf(0), buf(1)}, {round_up(n, 256)}, {256});
    case Kernel::reduce: {
      const cl_ulong groups = 1024;
      launch("reduce_sum", {buf(0), buf(2), val(n), local_bytes(256 * sizeof(float))},
             {groups * 256}, {256});
      return launch("reduce_sum", {buf(2), buf(1), val(groups), local_bytes(1024 * sizeof(float))},
                    {1024}, {1024});
    }
    case Kernel::scan: {
      const cl_ulong tiles = (n + 1023) / 1024;
      launch("scan_tiles", {buf(0), buf(1), buf(2), val(n), local_bytes(256 * sizeof(cl_uint))},
             {tiles * 256}, {256});
      launch("scan_tile_sums", {buf(2), val(tiles), local_bytes(1024 * sizeof(cl_uint))}, {1024},
             {1024});
      return launch("add_tile_offsets", {buf(1), buf(2), val(n)}, {tiles * 256}, {256});
    }
    case Kernel::histogram: {
      const cl_uint zero = 0;
      check(clEnqueueFillBuffer(queue_, buffers_.at(1), &zero, sizeof zero, 0,
                                256 * sizeof(cl_uint), 0, nullptr, nullptr),
            "clEnqueueFillBuffer of the bins");
      return launch("histogram256", {buf(0), val(n), buf(1)}, {1024 * 256}, {256});
    }
    case Kernel::transpose:
      return launch("transpose_tiled", {buf(1), buf(0), val(rows), val(cols)},
                    {round_up(cols, 32), round_up(rows, 32) / 4}, {32, 8});
    case Kernel::sgemm:
      return launch("sgemm_tiled", {buf(0), buf(1), buf(2), val(n32)}, {n, n}, {16, 16});
    case Kernel::stencil:
      return launch("stencil5", {buf(0), buf(1), val(rows), val(cols), val(p.alpha), val(p.beta)},
                    {round_up(cols, 32), round_up(rows, 8)}, {32, 8});
    case Kernel::nbody:
      return launch("nbody_accel", {buf(0), buf(1), val(n32), val(p.alpha)}, {n}, {256});
    case Kernel::softmax:
      return launch("softmax_rows", {buf(0), buf(1), val(cols), local_bytes(256 * sizeof(float))},
                    {size_t(rows) * 256}, {256});
    case Kernel::layernorm:
      return launch("layernorm_rows",
                    {buf(0), buf(1), buf(2), buf(3), val(cols), val(p.alpha),
                     local_bytes(256 * sizeof(float))},
                    {size_t(rows) * 256}, {256});
    case Kernel::bitonic:
      return launch("bitonic_sort_segments", {buf(0), buf(1)}, {n / 2}, {1024});
    case Kernel::blackscholes:
      return launch("black_scholes",
                    {buf(0), buf(1), buf(2), buf(3), buf(4), val(p.alpha), val(p.beta), val(n)},
                    {round_up(n, 256)}, {256});
    }
  }

  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  std::map<std::string, cl_kernel> kernels_;
  std::vector<cl_mem> buffers_;
};

} // namespace

std::unique_ptr<Platform> make_opencl_platform(unsigned threads, std::string& device) {
  // PoCL's CPU driver sizes its worker pool from these (POCL_MAX_PTHREAD_COUNT up to PoCL
  // 3, POCL_CPU_MAX_CU_NUM from PoCL 4); they must be set before the platform loads.
  std::string count = std::to_string(threads);
  setenv("POCL_MAX_PTHREAD_COUNT", count.c_str(), 0);
  setenv("POCL_CPU_MAX_CU_NUM", count.c_str(), 0);
  return std::make_unique<OpenClPlatform>(device);
}

} // namespace bench
