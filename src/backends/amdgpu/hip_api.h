// AMD's HIP runtime, loaded on first use (libamdhip64.so.7/.6/.5 on Linux, amdhip64_7.dll /
// amdhip64_6.dll on Windows). Mimic builds and runs without ROCm: the few HIP types, enum
// values and structure offsets it needs are declared here, after HIP's documented C ABI
// (hip_runtime_api.h), and the functions come from one list (hip_api.def).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/error.h"

namespace mimic::amdgpu {

using hipError_t = int; // an enum in HIP's headers, int-sized
using hipDevice_t = int;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipStream_t = struct ihipStream_t*;
struct HipUuid {
  char bytes[16];
};

constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorNoDevice = 100;
constexpr hipError_t hipErrorInvalidDevice = 101;
constexpr int hipMemcpyDefault = 4; // hipMemcpyKind: direction from the pointers
constexpr unsigned hipHostMallocDefault = 0;   // pinned, mapped into every device
constexpr unsigned hipMemAttachGlobal = 1;     // managed memory any stream may use
constexpr unsigned hipHostRegisterPortable = 1, hipHostRegisterMapped = 2;
// The tags of hipModuleLaunchKernel's `extra` list (the packed kernel arguments), which HIP
// defines as the pointers (void*)1, 2 and 3.
constexpr uintptr_t HIP_LAUNCH_PARAM_BUFFER_POINTER = 1;
constexpr uintptr_t HIP_LAUNCH_PARAM_BUFFER_SIZE = 2;
constexpr uintptr_t HIP_LAUNCH_PARAM_END = 3;

// hipDeviceAttribute_t values Mimic asks for. HIP keeps these numbers stable from ROCm 5 to 7
// (removed attributes leave "Unused" placeholders), CUDA-like ones from 0, AMD ones from 10000.
enum HipAttribute : int {
  hipDeviceAttributeAsyncEngineCount = 2,
  hipDeviceAttributeClockRate = 5,
  hipDeviceAttributeConcurrentManagedAccess = 9,
  hipDeviceAttributeCooperativeLaunch = 10,
  hipDeviceAttributeIntegrated = 16,
  hipDeviceAttributeL2CacheSize = 19,
  hipDeviceAttributeManagedMemory = 24,
  hipDeviceAttributeMaxBlocksPerMultiProcessor = 25,
  hipDeviceAttributeMaxBlockDimX = 26,
  hipDeviceAttributeMaxBlockDimY = 27,
  hipDeviceAttributeMaxBlockDimZ = 28,
  hipDeviceAttributeMaxGridDimX = 29,
  hipDeviceAttributeMaxGridDimY = 30,
  hipDeviceAttributeMaxGridDimZ = 31,
  hipDeviceAttributeMaxThreadsPerBlock = 56,
  hipDeviceAttributeMaxThreadsPerMultiProcessor = 57,
  hipDeviceAttributeMemoryBusWidth = 59,
  hipDeviceAttributeMemoryClockRate = 60,
  hipDeviceAttributeMultiprocessorCount = 63,
  hipDeviceAttributePageableMemoryAccess = 65,
  hipDeviceAttributePciBusId = 67,
  hipDeviceAttributePciDeviceId = 68,
  hipDeviceAttributePciDomainId = 69,
  hipDeviceAttributeMaxRegistersPerBlock = 71,
  hipDeviceAttributeMaxRegistersPerMultiprocessor = 72,
  hipDeviceAttributeMaxSharedMemoryPerBlock = 74,
  hipDeviceAttributeSharedMemPerMultiprocessor = 76,
  hipDeviceAttributeTexturePitchAlignment = 82,
  hipDeviceAttributeWarpSize = 87,
  hipDeviceAttributeMaxSharedMemoryPerMultiprocessor = 10002,
};

// hipDeviceProp_t up to gcnArchName, the one field Mimic reads from it, in the two layouts
// (the rest of the structure is not declared: callers pass kDevicePropertiesBuffer bytes).
struct HipDevicePropertiesR0000Prefix { // HIP 5 (hipDeviceProp_t), HIP 6 (..._tR0000)
  char name[256];
  size_t totalGlobalMem, sharedMemPerBlock;
  int regsPerBlock, warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3];
  int clockRate, memoryClockRate, memoryBusWidth;
  size_t totalConstMem;
  int major, minor, multiProcessorCount, l2CacheSize, maxThreadsPerMultiProcessor, computeMode;
  int clockInstructionRate;
  uint32_t arch; // hipDeviceArch_t: 17 one-bit fields in an unsigned
  int concurrentKernels, pciDomainID, pciBusID, pciDeviceID;
  size_t maxSharedMemoryPerMultiProcessor;
  int isMultiGpuBoard, canMapHostMemory, gcnArch;
  char gcnArchName[256];
};
struct HipDevicePropertiesR0600Prefix { // HIP 6 and 7 (hipDeviceProp_t = ..._tR0600)
  char name[256];
  HipUuid uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem, sharedMemPerBlock;
  int regsPerBlock, warpSize;
  size_t memPitch;
  int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate;
  size_t totalConstMem;
  int major, minor;
  size_t textureAlignment, texturePitchAlignment;
  int deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated, canMapHostMemory;
  int computeMode, maxTexture1D, maxTexture1DMipmap, maxTexture1DLinear, maxTexture2D[2];
  int maxTexture2DMipmap[2], maxTexture2DLinear[3], maxTexture2DGather[2], maxTexture3D[3];
  int maxTexture3DAlt[3], maxTextureCubemap, maxTexture1DLayered[2], maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2], maxSurface1D, maxSurface2D[2], maxSurface3D[3];
  int maxSurface1DLayered[2], maxSurface2DLayered[3], maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver;
  int asyncEngineCount, unifiedAddressing, memoryClockRate, memoryBusWidth, l2CacheSize;
  int persistingL2CacheMaxSize, maxThreadsPerMultiProcessor, streamPrioritiesSupported;
  int globalL1CacheSupported, localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID;
  int hostNativeAtomicSupported, singleToDoublePrecisionPerfRatio, pageableMemoryAccess;
  int concurrentManagedAccess, computePreemptionSupported, canUseHostPointerForRegisteredMem;
  int cooperativeLaunch, cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor, accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported, sparseHipArraySupported, hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported, memoryPoolsSupported, gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingHipArraySupported, ipcEventSupported, clusterLaunch, unifiedFunctionPointers;
  int reserved[63], hipReserved[32];
  char gcnArchName[256];
};
// The offsets HIP's headers give on 64-bit Linux and Windows (sizeof(hipDeviceProp_tR0600) is
// 1472): a mistake in the declarations above would read the wrong bytes.
static_assert(offsetof(HipDevicePropertiesR0000Prefix, gcnArchName) == 396);
static_assert(offsetof(HipDevicePropertiesR0600Prefix, gcnArchName) == 1160);
// More than either layout's whole size, so that a newer runtime writing more cannot overrun.
constexpr size_t kDevicePropertiesBuffer = 8192;

// The resolved functions of one loaded HIP runtime.
struct HipApi {
#define HIP_FUNCTION(name, result, params) result(*name) params = nullptr;
#define HIP_OPTIONAL(name, result, params) result(*name) params = nullptr;
#include "backends/amdgpu/hip_api.def"
#undef HIP_FUNCTION
#undef HIP_OPTIONAL
  std::string path;       // the library loaded, as it was asked for (a name or a path)
  std::string file;       // the file that was loaded (its full path, where the system says)
  void* handle = nullptr; // its dlopen/LoadLibrary handle (never closed)

  // "HIP error 2: out of memory" (the number and hipGetErrorString), for messages.
  std::string describe(hipError_t error) const;
};

// The libraries tried, in order: MIMIC_HIP_LIBRARY alone when set; otherwise the HIP
// runtimes by soname (newest first), then the same under $ROCM_PATH/lib and /opt/rocm/lib.
std::vector<std::string> hip_library_candidates();

// Loads `path` and resolves every function of hip_api.def. Fails naming the library and the
// missing functions; never unloads a library it opened.
Result<HipApi> load_hip_library(const std::string& path);

// The first of `candidates` that loads; the error lists each one tried and why it failed.
Result<HipApi> load_first_hip_library(const std::vector<std::string>& candidates);

// The process's HIP runtime, loaded on the first call (from hip_library_candidates()) and
// kept; later calls return the same result. hipInit is not called here.
const Result<HipApi>& hip_runtime();

// "6.4.1" from HIP's version number (major * 10000000 + minor * 100000 + patch).
std::string hip_version_text(int version);

} // namespace mimic::amdgpu
