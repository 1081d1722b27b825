#include "backends/amdgpu/amdgpu_backend.h"

#include <cstdio>
#include <mutex>
#include <string>

#include "backends/amdgpu/compiler.h"
#include "backends/amdgpu/device_log.h"
#include "support/log.h"

namespace mimic::amdgpu {

namespace {

// HIP's error numbers follow CUDA's where the two share a meaning; this table says which
// CUresult each HIP error Mimic can meet stands for (others: CUDA_ERROR_UNKNOWN).
constexpr struct {
  hipError_t hip;
  CUresult cuda;
} kHipToCuda[] = {
    {0, CUDA_SUCCESS},
    {1, CUDA_ERROR_INVALID_VALUE},
    {2, CUDA_ERROR_OUT_OF_MEMORY},
    {3, CUDA_ERROR_NOT_INITIALIZED},
    {9, CUDA_ERROR_INVALID_VALUE}, // hipErrorInvalidConfiguration: a bad launch shape
    {98, CUDA_ERROR_INVALID_HANDLE},
    {100, CUDA_ERROR_NO_DEVICE},
    {101, CUDA_ERROR_INVALID_DEVICE},
    {200, CUDA_ERROR_INVALID_IMAGE},
    {209, CUDA_ERROR_NO_BINARY_FOR_GPU},
    {218, CUDA_ERROR_INVALID_IMAGE},
    {400, CUDA_ERROR_INVALID_HANDLE},
    {500, CUDA_ERROR_NOT_FOUND},
    {700, CUDA_ERROR_ILLEGAL_ADDRESS},
    {701, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES},
    {702, CUDA_ERROR_LAUNCH_TIMEOUT},
    {710, CUDA_ERROR_ASSERT},
    {719, CUDA_ERROR_LAUNCH_FAILED},
    {720, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE},
    {801, CUDA_ERROR_NOT_SUPPORTED},
};

CUresult cuda_result(hipError_t e) {
  for (const auto& m : kHipToCuda)
    if (m.hip == e) return m.cuda;
  return CUDA_ERROR_UNKNOWN;
}

// A program's kernels loaded into one GPU.
class AmdgpuProgram final : public runtime::CompiledProgram {
public:
  struct Kernel {
    std::string name;
    hipFunction_t function = nullptr;
    std::vector<runtime::ParamSlot> params;
    size_t param_bytes = 0;
    bool grid_sync = false;
    size_t static_lds_bytes = 0; // as the code object has it (the lowering may add some)
    unsigned max_threads_per_block = 1024;
  };

  AmdgpuProgram(const HipApi& hip, int ordinal, std::vector<uint8_t> elf)
      : hip_(hip), ordinal_(ordinal), elf_(std::move(elf)) {}
  ~AmdgpuProgram() override {
    if (module_ && hip_.hipSetDevice(ordinal_) == hipSuccess) (void)hip_.hipModuleUnload(module_);
  }
  // Whether HIP keeps a pointer into the image is not documented, so the image lives as long
  // as the module.
  hipError_t load() { return hip_.hipModuleLoadData(&module_, elf_.data()); }
  hipModule_t module() const { return module_; }

  std::vector<Kernel> kernels;
  bool uses_device_log = false; // printf or assert: drain the device's log after launches

private:
  const HipApi& hip_;
  int ordinal_;
  std::vector<uint8_t> elf_;
  hipModule_t module_ = nullptr;
};

class AmdgpuBackend final : public runtime::Backend {
public:
  AmdgpuBackend(const HipApi& hip, std::vector<HipDevice> devices)
      : hip_(hip), devices_(std::move(devices)) {
    for (size_t i = 0; i < devices_.size(); ++i)
      state_.push_back(std::make_unique<DeviceState>());
  }

  std::string kind() const override { return "amdgpu"; }
  size_t device_count() const override { return devices_.size(); }
  const runtime::DeviceProperties& properties(size_t device) const override {
    return devices_[device].properties;
  }

  Result<void*> allocate(size_t device, size_t bytes) override {
    if (Status s = use(device); !s) return s.error();
    void* pointer = nullptr;
    if (hipError_t e = hip_.hipMalloc(&pointer, bytes); e != hipSuccess || !pointer)
      return Error("hipMalloc of " + std::to_string(bytes) + " bytes on " + describe(device) +
                       ": " + hip_.describe(e),
                   CUDA_ERROR_OUT_OF_MEMORY);
    return pointer;
  }

  void release(size_t device, void* pointer) override {
    if (!use(device)) return;
    if (hipError_t e = hip_.hipFree(pointer); e != hipSuccess)
      log_warning("hipFree on " + describe(device) + ": " + hip_.describe(e));
  }

  // Host memory the host dereferences, not device memory: cuMemAllocHost and
  // cuMemHostRegister memory must be usable by both at one address, as with CUDA.
  Result<void*> allocate_host(size_t device, size_t bytes) override {
    if (Status s = use(device); !s) return s.error();
    void* pointer = nullptr;
    if (hipError_t e = hip_.hipHostMalloc(&pointer, bytes, hipHostMallocDefault);
        e != hipSuccess || !pointer)
      return Error("hipHostMalloc of " + std::to_string(bytes) + " bytes for " + describe(device) +
                       ": " + hip_.describe(e),
                   CUDA_ERROR_OUT_OF_MEMORY);
    return pointer;
  }

  void release_host(size_t device, void* pointer) override {
    if (!use(device)) return;
    if (hipError_t e = hip_.hipHostFree(pointer); e != hipSuccess)
      log_warning("hipHostFree for " + describe(device) + ": " + hip_.describe(e));
  }

  Result<void*> allocate_managed(size_t device, size_t bytes) override {
    if (Status s = use(device); !s) return s.error();
    void* pointer = nullptr;
    if (hipError_t e = hip_.hipMallocManaged(&pointer, bytes, hipMemAttachGlobal);
        e != hipSuccess || !pointer)
      return Error("hipMallocManaged of " + std::to_string(bytes) + " bytes on " +
                       describe(device) + ": " + hip_.describe(e),
                   e == 801 ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_OUT_OF_MEMORY);
    return pointer;
  }

  Status register_host(size_t device, void* pointer, size_t bytes) override {
    if (Status s = use(device); !s) return s;
    if (hipError_t e =
            hip_.hipHostRegister(pointer, bytes, hipHostRegisterPortable | hipHostRegisterMapped);
        e != hipSuccess)
      return Error("hipHostRegister of " + std::to_string(bytes) + " bytes for " +
                       describe(device) + ": " + hip_.describe(e),
                   e == 712 ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED : cuda_result(e));
    return {};
  }

  void unregister_host(size_t device, void* pointer) override {
    if (!use(device)) return;
    if (hipError_t e = hip_.hipHostUnregister(pointer); e != hipSuccess)
      log_warning("hipHostUnregister for " + describe(device) + ": " + hip_.describe(e));
  }

  Status copy(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return {};
    // hipMemcpyDefault: HIP tells host from device memory by the pointers (unified addressing).
    if (hipError_t e = hip_.hipMemcpy(dst, src, bytes, hipMemcpyDefault); e != hipSuccess)
      return Error("hipMemcpy of " + std::to_string(bytes) + " bytes: " + hip_.describe(e),
                   cuda_result(e));
    return {};
  }

  Status fill(void* dst, uint32_t value, size_t element_size, size_t count) override {
    if (count == 0) return {};
    hipError_t e = hipSuccess;
    switch (element_size) {
    case 1:
      e = hip_.hipMemsetD8(dst, static_cast<unsigned char>(value), count);
      break;
    case 2:
      e = hip_.hipMemsetD16(dst, static_cast<unsigned short>(value), count);
      break;
    case 4:
      e = hip_.hipMemsetD32(dst, static_cast<int>(value), count);
      break;
    default:
      return Error("fill element size must be 1, 2 or 4 bytes, not " + std::to_string(element_size),
                   CUDA_ERROR_INVALID_VALUE);
    }
    if (e != hipSuccess)
      return Error("hipMemsetD" + std::to_string(element_size * 8) + " of " +
                       std::to_string(count) + " elements: " + hip_.describe(e),
                   cuda_result(e));
    return {};
  }

  Status synchronize(size_t device) override {
    if (Status s = use(device); !s) return s;
    if (hipError_t e = hip_.hipDeviceSynchronize(); e != hipSuccess)
      return Error("hipDeviceSynchronize on " + describe(device) + ": " + hip_.describe(e),
                   cuda_result(e));
    return {};
  }

  Result<std::shared_ptr<runtime::CompiledProgram>>
  compile(size_t device, const runtime::Program& program,
          const std::map<std::string, void*, std::less<>>& globals) override {
    const HipDevice& d = devices_[device];
    if (!is_supported_target(d.gfx))
      return Error(program.origin + ": no code for " + describe(device) + ": " +
                       d.unsupported_reason,
                   CUDA_ERROR_NO_BINARY_FOR_GPU);
    // The device log (printf, assert), the grid workspace (grid.sync) and the device heap
    // (malloc) are bound like globals of every program; the code uses them only when it
    // prints, asserts, waits for the grid or allocates.
    Result<void*> log = device_log(device);
    if (!log) return log.error();
    Result<void*> workspace = grid_workspace(device);
    if (!workspace) return workspace.error();
    Result<void*> heap = device_heap(device);
    if (!heap) return heap.error();
    std::map<std::string, void*, std::less<>> bound = globals;
    bound[kDeviceLogSymbol] = *log;
    bound[kGridWorkspaceSymbol] = *workspace;
    bound[kDeviceHeapSymbol] = *heap;
    Result<CodeObject> code = compile_with_plugin(program, d.gfx, &bound);
    if (!code)
      return Error(code.error().message(),
                   code.error().code() ? code.error().code() : CUDA_ERROR_INVALID_PTX);
    return load(device, *code, program);
  }

  Result<std::shared_ptr<runtime::CompiledProgram>> load(size_t device, const CodeObject& code,
                                                         const runtime::Program& program) {
    if (code.kernels.size() != program.kernels.size())
      return Error(program.origin + ": the code object for " + code.target + " has " +
                       std::to_string(code.kernels.size()) + " kernels, the program " +
                       std::to_string(program.kernels.size()),
                   CUDA_ERROR_INVALID_IMAGE);
    if (Status s = use(device); !s) return s.error();
    if (code.elf.empty())
      return Error(program.origin + ": the " + code.target + " code object is empty",
                   CUDA_ERROR_INVALID_IMAGE);
    if (code.uses_device_log)
      if (Result<void*> log = device_log(device); !log) return log.error();
    if (code.uses_device_heap)
      if (Result<void*> heap = device_heap(device); !heap) return heap.error();
    for (const KernelObject& k : code.kernels)
      if (k.grid_sync)
        if (Result<void*> workspace = grid_workspace(device); !workspace) return workspace.error();
    auto loaded = std::make_shared<AmdgpuProgram>(hip_, devices_[device].ordinal, code.elf);
    loaded->uses_device_log = code.uses_device_log;
    if (hipError_t e = loaded->load(); e != hipSuccess)
      return Error(program.origin + ": hipModuleLoadData rejected the " + code.target +
                       " code object on " + describe(device) + ": " + hip_.describe(e),
                   e == 209 ? CUDA_ERROR_NO_BINARY_FOR_GPU : CUDA_ERROR_INVALID_IMAGE);
    for (size_t i = 0; i < program.kernels.size(); ++i) {
      const runtime::KernelInfo& k = program.kernels[i];
      const KernelObject& ko = code.kernels[i];
      AmdgpuProgram::Kernel out{k.name,
                                nullptr,
                                k.params,
                                k.param_bytes,
                                ko.grid_sync,
                                ko.static_lds_bytes,
                                ko.max_threads_per_block};
      if (hipError_t e = hip_.hipModuleGetFunction(&out.function, loaded->module(),
                                                   code.kernels[i].name.c_str());
          e != hipSuccess || !out.function)
        return Error(program.origin + ": kernel '" + code.kernels[i].name + "' is not in its " +
                         code.target + " code object: " + hip_.describe(e),
                     CUDA_ERROR_NOT_FOUND);
      loaded->kernels.push_back(std::move(out));
    }
    return std::shared_ptr<runtime::CompiledProgram>(std::move(loaded));
  }

  CUresult launch(size_t device, runtime::CompiledProgram& compiled, size_t kernel,
                  const runtime::LaunchShape& shape, const void* args) override {
    auto* program = dynamic_cast<AmdgpuProgram*>(&compiled);
    if (!program || kernel >= program->kernels.size()) return CUDA_ERROR_INVALID_HANDLE;
    const AmdgpuProgram::Kernel& k = program->kernels[kernel];
    if (Status s = check_shape(device, k, shape); !s) {
      log_error(s.error().message());
      return CUresult(s.error().code());
    }
    if (Status s = use(device); !s) {
      log_error(s.error().message());
      return CUresult(s.error().code());
    }
    // A program that writes the device log runs alone on its device, from its launch until
    // the log is drained, so that the log holds only its records when it is read and reset;
    // so does a kernel that waits for the grid, whose workspace starts zeroed.
    std::unique_lock<std::mutex> alone;
    if (program->uses_device_log || k.grid_sync) alone = std::unique_lock(state_[device]->mutex);
    hipError_t e = hipSuccess;
    if (k.grid_sync) e = hip_.hipMemsetD8(state_[device]->grid_workspace, 0, kGridWorkspaceBytes);
    if (e == hipSuccess)
      e = k.grid_sync ? launch_cooperative(k, shape, args) : launch_plain(k, shape, args);
    if (e == hipSuccess) e = hip_.hipDeviceSynchronize();
    // Drained also after a failed launch: an assert or a texture instruction traps, and its
    // report is in the log.
    DecodedLog::Outcome outcome =
        program->uses_device_log ? drain_device_log(device) : DecodedLog::Outcome::Ran;
    if (outcome == DecodedLog::Outcome::Asserted) return CUDA_ERROR_ASSERT;
    if (outcome == DecodedLog::Outcome::Trapped) return CUDA_ERROR_LAUNCH_FAILED;
    if (e == hipSuccess) return CUDA_SUCCESS;
    log_error("kernel '" + k.name + "' on " + describe(device) + ": " + hip_.describe(e));
    return cuda_result(e);
  }

private:
  // What HIP would refuse with a vaguer error: more threads than the kernel was compiled for,
  // or more LDS than a workgroup has.
  Status check_shape(size_t device, const AmdgpuProgram::Kernel& k,
                     const runtime::LaunchShape& shape) const {
    uint64_t threads = uint64_t(shape.block[0]) * shape.block[1] * shape.block[2];
    if (threads > k.max_threads_per_block)
      return Error("kernel '" + k.name + "' launched with " + std::to_string(threads) +
                       " threads a block; its code for " + devices_[device].gfx + " allows " +
                       std::to_string(k.max_threads_per_block),
                   CUDA_ERROR_INVALID_VALUE);
    uint64_t lds = uint64_t(k.static_lds_bytes) + shape.dynamic_shared_bytes;
    uint64_t limit = uint64_t(devices_[device].properties.shared_memory_per_block);
    if (lds > limit)
      return Error("kernel '" + k.name + "' needs " + std::to_string(k.static_lds_bytes) +
                       " bytes of static and " + std::to_string(shape.dynamic_shared_bytes) +
                       " of dynamic shared memory; " + describe(device) + " has " +
                       std::to_string(limit) + " a block",
                   CUDA_ERROR_INVALID_VALUE);
    return {};
  }

  struct DeviceState {
    std::mutex mutex;
    void* log = nullptr;            // DeviceLogHeader, then kDeviceLogCapacity bytes of records
    void* grid_workspace = nullptr; // kGridWorkspaceBytes, zeroed before each grid-sync launch
    void* heap = nullptr; // DeviceHeapHeader, then kDeviceHeapCapacity bytes for device malloc
  };
  // As CUDA's default device heap (cudaLimitMallocHeapSize).
  static constexpr uint64_t kDeviceHeapCapacity = 8 << 20;
  // As CUDA's default printf buffer (cudaLimitPrintfFifoSize).
  static constexpr uint64_t kDeviceLogCapacity = 1 << 20;

  // A buffer of the device that the code uses, allocated on first use and initialised with
  // `header` (the rest is left as hipMalloc gives it).
  template <typename Header>
  Result<void*> device_buffer(size_t device, void* DeviceState::* slot, size_t bytes,
                              const Header& header, const char* what) {
    DeviceState& st = *state_[device];
    std::lock_guard lock(st.mutex);
    if (st.*slot) return st.*slot;
    Result<void*> p = allocate(device, bytes);
    if (!p) return p.error().context(std::string("allocating ") + what);
    if (Status s = copy(*p, &header, sizeof header); !s) {
      release(device, *p);
      return s.error().context(std::string("initialising ") + what);
    }
    st.*slot = *p;
    return *p;
  }

  Result<void*> device_log(size_t device) {
    return device_buffer(device, &DeviceState::log, sizeof(DeviceLogHeader) + kDeviceLogCapacity,
                         DeviceLogHeader{kDeviceLogCapacity, 0},
                         "the device log for printf and assert");
  }

  // Its `used` is never reset: memory a kernel allocates stays valid for later kernels, as in
  // CUDA, and free does not return memory yet (code_object.h), so a program that allocates
  // more than the heap in its lifetime gets NULL.
  Result<void*> device_heap(size_t device) {
    return device_buffer(device, &DeviceState::heap, sizeof(DeviceHeapHeader) + kDeviceHeapCapacity,
                         DeviceHeapHeader{kDeviceHeapCapacity, 0}, "the device heap for malloc");
  }

  // Zeroed before each launch that uses it, not here.
  Result<void*> grid_workspace(size_t device) {
    return device_buffer(device, &DeviceState::grid_workspace, kGridWorkspaceBytes, uint64_t(0),
                         "the workspace of grid.sync");
  }

  // Prints the log's records (printf to stdout, assert and trap reports to stderr) and empties
  // it. Says whether a thread failed an assert or trapped. The caller holds the device's mutex.
  DecodedLog::Outcome drain_device_log(size_t device) {
    char* log = static_cast<char*>(state_[device]->log);
    DeviceLogHeader header{};
    if (!log || !copy(&header, log, sizeof header) || header.used == 0)
      return DecodedLog::Outcome::Ran;
    std::vector<uint8_t> records(std::min(header.used, header.capacity));
    const uint64_t zero = 0;
    if (!copy(records.data(), log + sizeof header, records.size()) ||
        !copy(log + offsetof(DeviceLogHeader, used), &zero, sizeof zero)) {
      log_error("cannot read the device log of " + describe(device) + ": printf output is lost");
      return DecodedLog::Outcome::Ran;
    }
    ReadDevice read = [this](void* out, uint64_t address, size_t bytes) {
      return hip_.hipMemcpy(out, reinterpret_cast<const void*>(address), bytes, hipMemcpyDefault) ==
             hipSuccess;
    };
    // Records are whole only up to the capacity: one that did not fit was not written.
    DecodedLog decoded = decode_device_log(records.data(), records.size(), read);
    if (!decoded.printed.empty()) {
      std::fwrite(decoded.printed.data(), 1, decoded.printed.size(), stdout);
      std::fflush(stdout);
    }
    if (!decoded.asserts.empty()) std::fputs(decoded.asserts.c_str(), stderr);
    if (!decoded.traps.empty()) std::fputs(decoded.traps.c_str(), stderr);
    if (!decoded.problem.empty()) log_error(describe(device) + ": " + decoded.problem);
    if (header.used > header.capacity)
      warn_once("amdgpu-device-log-full", "device printf output was lost: more than " +
                                              std::to_string(header.capacity) +
                                              " bytes in one launch (the device log's size)");
    return decoded.outcome();
  }

  hipError_t launch_plain(const AmdgpuProgram::Kernel& k, const runtime::LaunchShape& shape,
                          const void* args) {
    // The packed parameters as they are: the code object's argument segment starts with the
    // PTX parameters in the same layout, and HIP fills in the hidden arguments after them.
    static char no_arguments;
    size_t bytes = k.param_bytes;
    if (bytes && !args) return 1; // hipErrorInvalidValue: parameters expected, none given
    void* buffer = bytes ? const_cast<void*>(args) : &no_arguments;
    auto tag = [](uintptr_t t) { return reinterpret_cast<void*>(t); };
    void* extra[] = {tag(HIP_LAUNCH_PARAM_BUFFER_POINTER), buffer,
                     tag(HIP_LAUNCH_PARAM_BUFFER_SIZE), &bytes, tag(HIP_LAUNCH_PARAM_END)};
    return hip_.hipModuleLaunchKernel(
        k.function, shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0], shape.block[1],
        shape.block[2], unsigned(shape.dynamic_shared_bytes), nullptr, nullptr, extra);
  }

  hipError_t launch_cooperative(const AmdgpuProgram::Kernel& k, const runtime::LaunchShape& shape,
                                const void* args) {
    if (!hip_.hipModuleLaunchCooperativeKernel)
      return 801; // hipErrorNotSupported: a runtime older than ROCm 6
    // The cooperative entry point takes arguments one by one: point into the packed buffer.
    if (!k.params.empty() && !args) return 1;
    std::vector<void*> params;
    for (const runtime::ParamSlot& slot : k.params)
      params.push_back(const_cast<char*>(static_cast<const char*>(args) + slot.offset));
    return hip_.hipModuleLaunchCooperativeKernel(
        k.function, shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0], shape.block[1],
        shape.block[2], unsigned(shape.dynamic_shared_bytes), nullptr,
        params.empty() ? nullptr : params.data());
  }

  // Makes HIP's current device on this thread the backend's device `device`.
  Status use(size_t device) {
    if (device >= devices_.size())
      return Error("AMD GPU backend has no device " + std::to_string(device),
                   CUDA_ERROR_INVALID_DEVICE);
    if (hipError_t e = hip_.hipSetDevice(devices_[device].ordinal); e != hipSuccess)
      return Error("hipSetDevice(" + std::to_string(devices_[device].ordinal) +
                       "): " + hip_.describe(e),
                   cuda_result(e));
    return {};
  }

  std::string describe(size_t device) const {
    const HipDevice& d = devices_[device];
    return "HIP device " + std::to_string(d.ordinal) + " (" + d.name + ", " + d.gfx + ")";
  }

  const HipApi& hip_;
  std::vector<HipDevice> devices_;
  std::vector<std::unique_ptr<DeviceState>> state_;
};

std::string unsupported_summary(const std::vector<HipDevice>& devices) {
  std::string out;
  for (const HipDevice& d : devices)
    out += (out.empty() ? "" : "; ") +
           ("HIP device " + std::to_string(d.ordinal) + " (" + d.name + "): ") +
           d.unsupported_reason;
  return out;
}

} // namespace

Result<std::unique_ptr<runtime::Backend>> create_amdgpu_backend(const HipApi& hip,
                                                                std::vector<HipDevice> devices) {
  std::vector<HipDevice> usable;
  for (HipDevice& d : devices)
    if (d.supported) usable.push_back(d);
  if (usable.empty())
    return Error("no supported AMD GPU: " + (devices.empty()
                                                 ? std::string("the HIP runtime reports none")
                                                 : unsupported_summary(devices)));
  return std::unique_ptr<runtime::Backend>(std::make_unique<AmdgpuBackend>(hip, std::move(usable)));
}

Result<std::unique_ptr<runtime::Backend>> create_amdgpu_backend() {
  const Result<HipApi>& hip = hip_runtime();
  if (!hip) return hip.error();
  Result<std::vector<HipDevice>> devices = enumerate_hip_devices(*hip);
  if (!devices) return devices.error();
  return create_amdgpu_backend(*hip, std::move(*devices));
}

Result<std::shared_ptr<runtime::CompiledProgram>>
load_code_object(runtime::Backend& backend, size_t device, const CodeObject& code,
                 const runtime::Program& program) {
  auto* amd = dynamic_cast<AmdgpuBackend*>(&backend);
  if (!amd)
    return Error("load_code_object needs an AMD GPU backend, not '" + backend.kind() + "'",
                 CUDA_ERROR_INVALID_VALUE);
  if (device >= amd->device_count())
    return Error("AMD GPU backend has no device " + std::to_string(device),
                 CUDA_ERROR_INVALID_DEVICE);
  return amd->load(device, code, program);
}

} // namespace mimic::amdgpu
