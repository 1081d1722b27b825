#include "backends/cpu/cpu_backend.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/program.h"
#include "support/config.h"
#ifdef MIMIC_HAVE_CODEGEN
#include "backends/cpu/jit.h"
#endif

namespace mimic::cpu {

namespace {

// CUDA guarantees at least 256-byte alignment for cudaMalloc'ed memory.
constexpr size_t kAllocationAlignment = 256;
// Allocations of this size and more are aligned to huge pages and asked to be backed by
// them (where transparent huge pages are on, or on madvise): kernels that stride through
// device memory a block's width at a time (grid-stride loops, columns of a matrix) then
// miss the TLB once per 2 MB instead of once per 4 KB page.
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kHugeAllocation = 2 * kHugePage;

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(colon + 1);
        size_t first = name.find_first_not_of(" \t");
        return first == std::string::npos ? "x86-64" : name.substr(first);
      }
    }
  return "x86-64";
}

int cpu_clock_khz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("cpu MHz", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos)
        return int(std::atof(line.c_str() + colon + 1) * 1000.0);
    }
  return 2000000;
}

// A stable identity: the same machine model gives the same UUID in every process.
void stable_uuid(const std::string& seed, uint8_t out[16]) {
  uint64_t h1 = 1469598103934665603ull, h2 = 0x9e3779b97f4a7c15ull;
  for (unsigned char c : seed) {
    h1 = (h1 ^ c) * 1099511628211ull;
    h2 = (h2 ^ c) * 0x100000001b3ull + (h2 >> 29);
  }
  std::memcpy(out, &h1, 8);
  std::memcpy(out + 8, &h2, 8);
  out[6] = uint8_t((out[6] & 0x0f) | 0x40); // RFC 4122 version 4 layout
  out[8] = uint8_t((out[8] & 0x3f) | 0x80);
}

class CpuBackend final : public runtime::Backend {
public:
  CpuBackend() {
    runtime::DeviceProperties& p = props_;
    p.backend = "cpu";
    std::string model = cpu_model_name();
    p.name = "Mimic CPU (" + model + ")";
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    p.total_memory = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : (uint64_t(8) << 30);
    auto [major, minor] = config::compute_capability();
    p.cc_major = major;
    p.cc_minor = minor;
    p.multiprocessor_count = int(config::worker_threads());
    p.clock_rate_khz = cpu_clock_khz();
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE), l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    long llc = l3 > 0 ? l3 : l2;
    if (llc > 0)
      p.l2_cache_size = int(llc);
    p.pci_domain = 0;
    p.pci_bus = 1;
    p.pci_device = 0;
    stable_uuid("mimic-cpu-device-0:" + model, p.uuid);
  }

  std::string kind() const override { return "cpu"; }
  size_t device_count() const override { return 1; }
  const runtime::DeviceProperties& properties(size_t) const override { return props_; }

  Result<void*> allocate(size_t, size_t bytes) override {
    size_t align = bytes >= kHugeAllocation ? kHugePage : kAllocationAlignment;
    size_t rounded = (bytes + align - 1) & ~(align - 1);
    void* p = std::aligned_alloc(align, rounded);
    if (!p)
      return Error("out of memory allocating " + std::to_string(bytes) + " bytes");
    if (align == kHugePage)
      madvise(p, rounded, MADV_HUGEPAGE); // advice only: without huge pages it runs as before
    return p;
  }

  void release(size_t, void* pointer) override { std::free(pointer); }

  Status copy(void* dst, const void* src, size_t bytes) override {
    if (bytes)
      std::memmove(dst, src, bytes);
    return {};
  }

  Status fill(void* dst, uint32_t value, size_t element_size, size_t count) override {
    switch (element_size) {
    case 1:
      std::memset(dst, int(value & 0xff), count);
      return {};
    case 2: {
      auto* d = static_cast<uint16_t*>(dst);
      for (size_t i = 0; i < count; ++i)
        d[i] = uint16_t(value);
      return {};
    }
    case 4: {
      auto* d = static_cast<uint32_t*>(dst);
      for (size_t i = 0; i < count; ++i)
        d[i] = value;
      return {};
    }
    default:
      return Error("fill element size must be 1, 2 or 4 bytes, not " + std::to_string(element_size));
    }
  }

  Status synchronize(size_t) override { return {}; }

  Result<std::shared_ptr<runtime::CompiledProgram>> compile(
      size_t, const runtime::Program& program, const std::map<std::string, void*, std::less<>>& globals) override {
#ifdef MIMIC_HAVE_CODEGEN
    return compile_for_cpu(program, globals);
#else
    (void)globals;
    return Error(program.origin + ": this build of Mimic has no code generator (LLVM was not found when it was "
                                  "built), so kernels cannot run",
                 CUDA_ERROR_NOT_SUPPORTED);
#endif
  }

  CUresult launch(size_t, runtime::CompiledProgram& program, size_t kernel, const runtime::LaunchShape& shape,
                  const void* args) override {
#ifdef MIMIC_HAVE_CODEGEN
    return launch_on_cpu(program, kernel, shape, args);
#else
    return CUDA_ERROR_NOT_SUPPORTED;
#endif
  }

private:
  runtime::DeviceProperties props_;
};

} // namespace

std::unique_ptr<runtime::Backend> create_cpu_backend() { return std::make_unique<CpuBackend>(); }

} // namespace mimic::cpu
