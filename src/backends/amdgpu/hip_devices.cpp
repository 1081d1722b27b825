#include "backends/amdgpu/hip_devices.h"

#include <algorithm>
#include <cstring>
#include <memory>
#ifndef _WIN32
#include <unistd.h>
#endif

#include "backends/amdgpu/code_object.h"
#include "support/config.h"

namespace mimic::amdgpu {

namespace {

// One attribute, or `fallback` when the runtime does not answer (or answers nonsense).
int attribute(const HipApi& hip, int ordinal, HipAttribute which, int fallback) {
  int value = 0;
  if (hip.hipDeviceGetAttribute(&value, which, ordinal) != hipSuccess || value <= 0)
    return fallback;
  return value;
}

bool flag(const HipApi& hip, int ordinal, HipAttribute which) {
  int value = 0;
  return hip.hipDeviceGetAttribute(&value, which, ordinal) == hipSuccess && value != 0;
}

// gcnArchName, read from hipDeviceProp_t in the layout of the runtime's entry point.
std::string arch_name(const HipApi& hip, int ordinal) {
  auto buffer = std::make_unique<unsigned char[]>(kDevicePropertiesBuffer);
  std::memset(buffer.get(), 0, kDevicePropertiesBuffer);
  size_t offset = 0;
  hipError_t status = hipErrorNoDevice;
  if (hip.hipGetDevicePropertiesR0600) {
    status = hip.hipGetDevicePropertiesR0600(buffer.get(), ordinal);
    offset = offsetof(HipDevicePropertiesR0600Prefix, gcnArchName);
  } else if (hip.hipGetDevicePropertiesR0000 || hip.hipGetDeviceProperties) {
    // HIP 5 exports only hipGetDeviceProperties, whose structure is the R0000 layout.
    auto* get = hip.hipGetDevicePropertiesR0000 ? hip.hipGetDevicePropertiesR0000
                                                : hip.hipGetDeviceProperties;
    status = get(buffer.get(), ordinal);
    offset = offsetof(HipDevicePropertiesR0000Prefix, gcnArchName);
  }
  if (status != hipSuccess) return {};
  const char* name = reinterpret_cast<const char*>(buffer.get() + offset);
  std::string s(name, strnlen(name, 256));
  // A layout Mimic does not know would put other bytes here: accept only a gfx name.
  return s.rfind("gfx", 0) == 0 ? s : std::string();
}

// A stable identity when the runtime has no hipDeviceGetUuid: the same GPU in the same slot
// gives the same UUID in every process.
void uuid_from(const std::string& seed, uint8_t out[16]) {
  uint64_t h1 = 1469598103934665603ull, h2 = 0x9e3779b97f4a7c15ull;
  for (unsigned char c : seed) {
    h1 = (h1 ^ c) * 1099511628211ull;
    h2 = (h2 ^ c) * 0x100000001b3ull + (h2 >> 29);
  }
  std::memcpy(out, &h1, 8);
  std::memcpy(out + 8, &h2, 8);
  out[6] = uint8_t((out[6] & 0x0f) | 0x40);
  out[8] = uint8_t((out[8] & 0x3f) | 0x80);
}

std::string supported_list() {
  std::string out;
  for (const std::string& t : supported_targets())
    out += (out.empty() ? "" : ", ") + t;
  return out;
}

// CUDA's view of the device: the machine's truth for sizes and clocks, CUDA's limits where
// they describe the programming model (block and grid shape, constant memory).
runtime::DeviceProperties map_properties(const HipApi& hip, const HipDevice& d) {
  runtime::DeviceProperties p;
  const int o = d.ordinal;
  p.name = d.name;
  p.backend = "amdgpu";
  p.total_memory = d.total_memory;
  auto [major, minor] = config::compute_capability();
  p.cc_major = major;
  p.cc_minor = minor;
  p.multiprocessor_count = attribute(hip, o, hipDeviceAttributeMultiprocessorCount, 1);
  p.max_threads_per_block =
      std::min(1024, attribute(hip, o, hipDeviceAttributeMaxThreadsPerBlock, 1024));
  const HipAttribute block_dims[] = {hipDeviceAttributeMaxBlockDimX, hipDeviceAttributeMaxBlockDimY,
                                     hipDeviceAttributeMaxBlockDimZ};
  const HipAttribute grid_dims[] = {hipDeviceAttributeMaxGridDimX, hipDeviceAttributeMaxGridDimY,
                                    hipDeviceAttributeMaxGridDimZ};
  for (int i = 0; i < 3; ++i) {
    p.max_block_dim[i] =
        std::min(p.max_block_dim[i], attribute(hip, o, block_dims[i], p.max_block_dim[i]));
    p.max_grid_dim[i] =
        std::min(p.max_grid_dim[i], attribute(hip, o, grid_dims[i], p.max_grid_dim[i]));
  }
  // Shared memory is the LDS: 64 KiB a workgroup on RDNA, with nothing reserved and no
  // larger opt-in size.
  int lds = attribute(hip, o, hipDeviceAttributeMaxSharedMemoryPerBlock, 64 * 1024);
  p.shared_memory_per_block = lds;
  p.shared_memory_per_block_optin = lds;
  p.reserved_shared_memory_per_block = 0;
  int lds_per_cu = attribute(hip, o, hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, 0);
  if (lds_per_cu <= 0)
    lds_per_cu = attribute(hip, o, hipDeviceAttributeSharedMemPerMultiprocessor, lds);
  p.shared_memory_per_multiprocessor = std::max(lds_per_cu, lds);
  p.max_threads_per_multiprocessor = attribute(
      hip, o, hipDeviceAttributeMaxThreadsPerMultiProcessor, p.max_threads_per_multiprocessor);
  p.max_blocks_per_multiprocessor = attribute(hip, o, hipDeviceAttributeMaxBlocksPerMultiProcessor,
                                              p.max_blocks_per_multiprocessor);
  p.registers_per_block =
      attribute(hip, o, hipDeviceAttributeMaxRegistersPerBlock, p.registers_per_block);
  p.registers_per_multiprocessor = attribute(
      hip, o, hipDeviceAttributeMaxRegistersPerMultiprocessor, p.registers_per_multiprocessor);
  // Mimic compiles for wave32 (RDNA runs 32-wide waves), so a CUDA warp is one wave
  // whatever hipDeviceAttributeWarpSize says for HIP's own default.
  p.warp_size = 32;
  p.clock_rate_khz = attribute(hip, o, hipDeviceAttributeClockRate, p.clock_rate_khz);
  p.memory_clock_rate_khz =
      attribute(hip, o, hipDeviceAttributeMemoryClockRate, p.memory_clock_rate_khz);
  p.memory_bus_width = attribute(hip, o, hipDeviceAttributeMemoryBusWidth, p.memory_bus_width);
  p.l2_cache_size = attribute(hip, o, hipDeviceAttributeL2CacheSize, p.l2_cache_size);
  p.async_engine_count = attribute(hip, o, hipDeviceAttributeAsyncEngineCount, 1);
  p.pci_domain = std::max(0, attribute(hip, o, hipDeviceAttributePciDomainId, 0));
  p.pci_bus = std::max(0, attribute(hip, o, hipDeviceAttributePciBusId, 0));
  p.pci_device = std::max(0, attribute(hip, o, hipDeviceAttributePciDeviceId, 0));
  HipUuid uuid{};
  if (hip.hipDeviceGetUuid && hip.hipDeviceGetUuid(&uuid, o) == hipSuccess &&
      std::any_of(std::begin(uuid.bytes), std::end(uuid.bytes), [](char c) { return c != 0; }))
    std::memcpy(p.uuid, uuid.bytes, 16);
  else
    uuid_from("mimic-amdgpu:" + d.name + ":" + d.arch_name + ":" + std::to_string(p.pci_domain) +
                  ":" + std::to_string(p.pci_bus) + ":" + std::to_string(p.pci_device),
              p.uuid);
  // Device memory is hipMalloc memory the host cannot dereference, also on an APU, so the
  // device counts as discrete: libraries then keep their data on the device.
  p.integrated = false;
  p.unified_addressing = true; // hipMalloc pointers are unique in the process's address space
  p.managed_memory = flag(hip, o, hipDeviceAttributeManagedMemory);
  p.concurrent_managed_access = flag(hip, o, hipDeviceAttributeConcurrentManagedAccess);
  // True only where the kernel driver gives the GPU the host's page tables (HMM, XNACK on).
  p.pageable_memory_access = flag(hip, o, hipDeviceAttributePageableMemoryAccess);
  p.cooperative_launch =
      flag(hip, o, hipDeviceAttributeCooperativeLaunch) && hip.hipModuleLaunchCooperativeKernel;
  // hipMalloc returns at least 256-byte aligned memory, as cuMemAlloc does.
  p.texture_alignment = 256;
  p.texture_pitch_alignment = std::min(
      256, attribute(hip, o, hipDeviceAttributeTexturePitchAlignment, p.texture_pitch_alignment));
  p.surface_alignment = 256;
  return p;
}

} // namespace

std::string gfx_of_arch_name(const std::string& arch_name) {
  return arch_name.substr(0, arch_name.find(':'));
}

Result<std::vector<HipDevice>> enumerate_hip_devices(const HipApi& hip) {
  // On a machine without a GPU (or without access to it) HIP answers hipErrorNoDevice, or
  // hipErrorInvalidDevice (HIP 5's hipInit), from hipInit or hipGetDeviceCount: the common
  // case, so it gets the plain message, with the usual cause when it is visible.
  auto failed = [&](const char* call, hipError_t e) {
    std::string what = std::string(call) + ": " + hip.describe(e);
#ifndef _WIN32
    if (access("/dev/kfd", R_OK | W_OK) != 0)
      what += " (/dev/kfd cannot be opened: no amdgpu kernel driver, or this user is not in the "
              "'render' group)";
#endif
    if (e == hipErrorNoDevice || e == hipErrorInvalidDevice)
      return Error("the HIP runtime (" + hip.file + ") finds no GPU: " + what);
    return Error("the HIP runtime (" + hip.file + ") cannot start: " + what);
  };
  if (hipError_t e = hip.hipInit(0); e != hipSuccess) return failed("hipInit", e);
  int count = 0;
  if (hipError_t e = hip.hipGetDeviceCount(&count); e != hipSuccess)
    return failed("hipGetDeviceCount", e);
  if (count <= 0)
    return Error("the HIP runtime (" + hip.file +
                 ") finds no GPU: hipGetDeviceCount reports 0 devices");
  std::vector<HipDevice> out;
  for (int o = 0; o < count; ++o) {
    HipDevice d;
    d.ordinal = o;
    char name[256] = {};
    if (hip.hipDeviceGetName(name, int(sizeof name) - 1, o) == hipSuccess) d.name = name;
    if (d.name.empty()) d.name = "AMD GPU " + std::to_string(o);
    size_t bytes = 0;
    if (hip.hipDeviceTotalMem(&bytes, o) == hipSuccess) d.total_memory = bytes;
    d.arch_name = arch_name(hip, o);
    d.gfx = gfx_of_arch_name(d.arch_name);
    if (d.gfx.empty()) {
      d.unsupported_reason =
          "the HIP runtime does not say which gfx target it is (hipGetDeviceProperties "
          "gave no gcnArchName Mimic can read)";
    } else if (!is_supported_target(d.gfx)) {
      d.unsupported_reason =
          d.gfx + " is not a target Mimic generates code for (supported: " + supported_list() + ")";
    } else {
      d.supported = true;
    }
    d.properties = map_properties(hip, d);
    out.push_back(std::move(d));
  }
  return out;
}

} // namespace mimic::amdgpu
