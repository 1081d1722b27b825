// A stand-in for AMD's HIP runtime, for testing Mimic's HIP binding without ROCm or a GPU.
// Exports the functions of src/backends/amdgpu/hip_api.def with HIP's C signatures; its
// "device memory" is host memory. Built in three flavours:
//   FAKE_HIP_VERSION=6  HIP 6/7: hipGetDevicePropertiesR0600, hipDeviceGetUuid,
//                       hipModuleLaunchCooperativeKernel
//   FAKE_HIP_VERSION=5  HIP 5: only hipGetDeviceProperties (the R0000 layout)
//   FAKE_HIP_INCOMPLETE a library lacking hipMalloc
// FAKE_HIP_DEVICES (read at every call) lists the GPUs by gcnArchName, comma-separated
// (default "gfx1100"); empty: no GPU, as HIP answers on a machine without one.
// The offsets are written out here as numbers, not taken from Mimic's declarations, so a
// mistake there shows.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fake_hip.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using hipError_t = int;

struct FakeFunction {
  std::string name;
};

std::vector<std::string> devices() {
  const char* env = std::getenv("FAKE_HIP_DEVICES");
  std::string s = env ? env : "gfx1100";
  std::vector<std::string> out;
  for (size_t start = 0; start < s.size();) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string gfx(int device) {
  std::string arch = devices()[size_t(device)];
  return arch.substr(0, arch.find(':'));
}

bool valid(int device) {
  return device >= 0 && size_t(device) < devices().size();
}

std::mutex mutex;
std::map<void*, size_t> allocations, host_allocations, registered;
thread_local int current_device = 0;
int cooperative_param_count = 0;
hipError_t next_launch_error = 0;
std::vector<uint8_t> next_log_record; // written into the device log by the next launch

// Mimic's device log is its one allocation of 16 + 1 MiB bytes (code_object.h's layout).
void write_log_record() {
  if (next_log_record.empty()) return;
  for (auto& [pointer, size] : allocations)
    if (size == 16 + (size_t(1) << 20)) {
      auto* header = static_cast<uint64_t*>(pointer);
      if (header[1] + next_log_record.size() <= header[0])
        std::memcpy(static_cast<uint8_t*>(pointer) + 16 + header[1], next_log_record.data(),
                    next_log_record.size());
      header[1] += next_log_record.size();
    }
  next_log_record.clear();
}

FakeHipLaunch last_launch{};

} // namespace

EXPORT const char* hipGetErrorString(hipError_t e) {
  switch (e) {
  case 0:
    return "no error";
  case 1:
    return "invalid argument";
  case 2:
    return "out of memory";
  case 100:
    return "no ROCm-capable device is detected";
  case 101:
    return "invalid device ordinal";
  case 200:
    return "device kernel image is invalid";
  case 500:
    return "named symbol not found";
  case 700:
    return "an illegal memory access was encountered";
  default:
    return "unknown error";
  }
}

EXPORT hipError_t hipInit(unsigned int flags) {
  return flags ? 1 : devices().empty() ? 100 : 0;
}
EXPORT hipError_t hipRuntimeGetVersion(int* v) {
  *v = FAKE_HIP_VERSION == 6 ? 60443482 : 50223153;
  return 0;
}
EXPORT hipError_t hipDriverGetVersion(int* v) {
  return hipRuntimeGetVersion(v);
}
EXPORT hipError_t hipGetDeviceCount(int* count) {
  *count = int(devices().size());
  return *count ? 0 : 100;
}
EXPORT hipError_t hipDeviceGetName(char* name, int length, int device) {
  if (!valid(device)) return 101;
  std::string g = gfx(device);
  std::string n = g == "gfx1100"  ? "AMD Radeon RX 7900 XTX"
                  : g == "gfx906" ? "AMD Radeon VII"
                                  : "Fake AMD GPU " + g;
  snprintf(name, size_t(length), "%s", n.c_str());
  return 0;
}
EXPORT hipError_t hipDeviceTotalMem(size_t* bytes, int device) {
  if (!valid(device)) return 101;
  *bytes = size_t(24) << 30;
  return 0;
}
EXPORT hipError_t hipDeviceGetAttribute(int* value, int attribute, int device) {
  if (!valid(device)) return 101;
  static const std::map<int, int> values = {
      {2, 2},           {5, 2482000}, {9, 0},     {10, 1},    {16, 0},          {19, 6291456},
      {24, 1},          {26, 1024},   {27, 1024}, {28, 1024}, {29, 2147483647}, {30, 2147483647},
      {31, 2147483647}, {56, 1024},   {57, 2048}, {59, 384},  {60, 1250000},    {63, 96},
      {65, 0},          {67, 3},      {68, 0},    {69, 0},    {71, 65536},      {72, 65536},
      {74, 65536},      {76, 65536},  {82, 256},  {87, 32},   {10002, 65536},
  };
  auto it = values.find(attribute);
  if (it == values.end()) return 1; // as HIP answers an attribute it does not know
  *value = it->second;
  return 0;
}
EXPORT hipError_t hipSetDevice(int device) {
  if (!valid(device)) return 101;
  current_device = device;
  return 0;
}
EXPORT hipError_t hipDeviceSynchronize() {
  return 0;
}

#if FAKE_HIP_VERSION == 6
EXPORT hipError_t hipGetDevicePropertiesR0600(void* properties, int device) {
  if (!valid(device)) return 101;
  char* p = static_cast<char*>(properties);
  std::memset(p, 0, 1472);
  hipDeviceGetName(p, 256, device);
  snprintf(p + 1160, 256, "%s", devices()[size_t(device)].c_str());
  return 0;
}
EXPORT hipError_t hipDeviceGetUuid(char* uuid, int device) {
  if (!valid(device)) return 101;
  for (int i = 0; i < 16; ++i)
    uuid[i] = char(0xa0 + i + device);
  return 0;
}
#else
EXPORT hipError_t hipGetDeviceProperties(void* properties, int device) {
  if (!valid(device)) return 101;
  char* p = static_cast<char*>(properties);
  std::memset(p, 0, 792);
  hipDeviceGetName(p, 256, device);
  snprintf(p + 396, 256, "%s", devices()[size_t(device)].c_str());
  return 0;
}
#endif

#ifndef FAKE_HIP_INCOMPLETE
EXPORT hipError_t hipMalloc(void** pointer, size_t bytes) {
  if (bytes > (size_t(24) << 30)) return 2;
  *pointer = std::aligned_alloc(256, (bytes + 255) & ~size_t(255));
  std::lock_guard lock(mutex);
  allocations[*pointer] = bytes;
  return 0;
}
#endif
EXPORT hipError_t hipFree(void* pointer) {
  std::lock_guard lock(mutex);
  if (!allocations.erase(pointer)) return 17; // hipErrorInvalidDevicePointer (hipHostMalloc's too)
  std::free(pointer);
  return 0;
}
EXPORT hipError_t hipMallocManaged(void** pointer, size_t bytes, unsigned flags) {
  if (flags != 1) return 1; // Mimic asks for hipMemAttachGlobal
  *pointer = std::aligned_alloc(256, (bytes + 255) & ~size_t(255));
  std::lock_guard lock(mutex);
  allocations[*pointer] = bytes;
  return 0;
}
EXPORT hipError_t hipHostMalloc(void** pointer, size_t bytes, unsigned) {
  *pointer = std::aligned_alloc(4096, (bytes + 4095) & ~size_t(4095));
  std::lock_guard lock(mutex);
  host_allocations[*pointer] = bytes;
  return 0;
}
EXPORT hipError_t hipHostFree(void* pointer) {
  std::lock_guard lock(mutex);
  if (!host_allocations.erase(pointer)) return 1;
  std::free(pointer);
  return 0;
}
EXPORT hipError_t hipHostRegister(void* pointer, size_t bytes, unsigned) {
  std::lock_guard lock(mutex);
  if (!registered.emplace(pointer, bytes).second) return 712; // hipErrorHostMemoryAlreadyRegistered
  return 0;
}
EXPORT hipError_t hipHostUnregister(void* pointer) {
  std::lock_guard lock(mutex);
  return registered.erase(pointer) ? 0 : 713; // hipErrorHostMemoryNotRegistered
}
EXPORT hipError_t hipMemcpy(void* dst, const void* src, size_t bytes, int kind) {
  if (kind != 4) return 21; // Mimic always lets HIP tell the direction (hipMemcpyDefault)
  std::memmove(dst, src, bytes);
  return 0;
}
EXPORT hipError_t hipMemsetD8(void* dst, unsigned char value, size_t count) {
  std::memset(dst, value, count);
  return 0;
}
EXPORT hipError_t hipMemsetD16(void* dst, unsigned short value, size_t count) {
  for (size_t i = 0; i < count; ++i)
    static_cast<uint16_t*>(dst)[i] = value;
  return 0;
}
EXPORT hipError_t hipMemsetD32(void* dst, int value, size_t count) {
  for (size_t i = 0; i < count; ++i)
    static_cast<int32_t*>(dst)[i] = value;
  return 0;
}

EXPORT hipError_t hipModuleLoadData(void** module, const void* image) {
  if (std::memcmp(image,
                  "\x7f"
                  "ELF",
                  4) != 0)
    return 200;
  *module = new int(1);
  return 0;
}
EXPORT hipError_t hipModuleUnload(void* module) {
  delete static_cast<int*>(module);
  return 0;
}
EXPORT hipError_t hipModuleGetFunction(void** function, void*, const char* name) {
  if (std::string(name) == "missing_kernel") return 500;
  *function = new FakeFunction{name};
  return 0;
}

namespace {
hipError_t record(void* function, const unsigned* grid, const unsigned* block, unsigned shared,
                  bool cooperative) {
  std::lock_guard lock(mutex);
  last_launch.kernel = static_cast<FakeFunction*>(function)->name;
  std::memcpy(last_launch.grid, grid, sizeof last_launch.grid);
  std::memcpy(last_launch.block, block, sizeof last_launch.block);
  last_launch.shared_bytes = shared;
  last_launch.cooperative = cooperative;
  last_launch.device = current_device;
  last_launch.launches++;
  write_log_record();
  hipError_t e = next_launch_error;
  next_launch_error = 0;
  return e;
}
} // namespace

EXPORT hipError_t hipModuleLaunchKernel(void* function, unsigned gx, unsigned gy, unsigned gz,
                                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                        void*, void** params, void** extra) {
  if (params || !extra || extra[0] != reinterpret_cast<void*>(1) ||
      extra[2] != reinterpret_cast<void*>(2) || extra[4] != reinterpret_cast<void*>(3))
    return 1;
  const auto* bytes = static_cast<const uint8_t*>(extra[1]);
  size_t size = *static_cast<size_t*>(extra[3]);
  last_launch.args.assign(bytes, bytes + size);
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return record(function, grid, block, shared, false);
}

#if FAKE_HIP_VERSION == 6
EXPORT hipError_t hipModuleLaunchCooperativeKernel(void* function, unsigned gx, unsigned gy,
                                                   unsigned gz, unsigned bx, unsigned by,
                                                   unsigned bz, unsigned shared, void*,
                                                   void** params) {
  last_launch.param_pointers.assign(params, params + cooperative_param_count);
  // Mimic's grid workspace is its one allocation of 128 bytes: it must come zeroed, and the
  // kernel leaves counts in it.
  last_launch.grid_workspace_zero = false;
  for (auto& [pointer, size] : allocations)
    if (size == 128) {
      auto* bytes = static_cast<uint8_t*>(pointer);
      last_launch.grid_workspace_zero =
          std::all_of(bytes, bytes + 128, [](uint8_t b) { return b == 0; });
      bytes[0] = 0x2a;
    }
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return record(function, grid, block, shared, true);
}
#endif

// Test hooks (not HIP functions).
EXPORT void fakeHipSetCooperativeParamCount(int n) {
  cooperative_param_count = n;
}
EXPORT void* fakeHipAllocationOfSize(size_t bytes) {
  std::lock_guard lock(mutex);
  for (auto& [pointer, size] : allocations)
    if (size == bytes) return pointer;
  return nullptr;
}
EXPORT bool fakeHipIsDeviceMemory(const void* address, size_t bytes) {
  std::lock_guard lock(mutex);
  auto at = reinterpret_cast<uintptr_t>(address);
  for (auto& [pointer, size] : allocations)
    if (at >= reinterpret_cast<uintptr_t>(pointer) &&
        at + bytes <= reinterpret_cast<uintptr_t>(pointer) + size)
      return true;
  return false;
}
EXPORT void fakeHipLogOnNextLaunch(const void* record, size_t bytes) {
  std::lock_guard lock(mutex);
  next_log_record.assign(static_cast<const uint8_t*>(record),
                         static_cast<const uint8_t*>(record) + bytes);
}
EXPORT void fakeHipFailNextLaunch(hipError_t e) {
  next_launch_error = e;
}
EXPORT const FakeHipLaunch* fakeHipLastLaunch() {
  return &last_launch;
}
EXPORT size_t fakeHipLiveAllocations() {
  std::lock_guard lock(mutex);
  return allocations.size() + host_allocations.size() + registered.size();
}
