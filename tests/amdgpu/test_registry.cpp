// Which devices a CUDA process sees, through Mimic's libcuda.so.1 (loaded with dlopen), with
// the fake HIP runtime (MIMIC_HIP_LIBRARY) or none. Each test runs in a process of its own
// with the environment its ctest entry gives (tests/amdgpu/CMakeLists.txt): the backends are
// chosen once per process.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../driver/libcuda_loader.h"
#include "fake_hip.h"

namespace {

std::string name_of(CUdevice d) {
  char name[256] = {};
  EXPECT_EQ(CU(cuDeviceGetName)(name, sizeof name, d), CUDA_SUCCESS);
  return name;
}

int attribute(CUdevice_attribute a, CUdevice d) {
  int v = -1;
  EXPECT_EQ(CU(cuDeviceGetAttribute)(&v, a, d), CUDA_SUCCESS);
  return v;
}

} // namespace

// MIMIC_HIP_LIBRARY=fake (one gfx1100), MIMIC_BACKEND unset: the GPU is device 0 (in builds
// with AMDGPU code generation).
TEST(Registry, AmdGpuFirstThenCpu) {
  ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
  int count = 0;
  ASSERT_EQ(CU(cuDeviceGetCount)(&count), CUDA_SUCCESS);
#ifndef MIMIC_TEST_AMDGPU_CODEGEN
  // Without AMDGPU code generation the GPU is a device only when asked for (MIMIC_BACKEND).
  ASSERT_EQ(count, 1);
  EXPECT_EQ(name_of(0).rfind("Mimic CPU", 0), 0u) << name_of(0);
  GTEST_SKIP() << "this build has no AMDGPU code generation: by default programs run on the CPU";
#endif
  ASSERT_EQ(count, 2);
  EXPECT_EQ(name_of(0), "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(name_of(1).rfind("Mimic CPU", 0), 0u) << name_of(1);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0), 96);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0), 32);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_INTEGRATED, 0), 0);
  EXPECT_EQ(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 0), 65536);
  size_t total = 0;
  ASSERT_EQ(CU(cuDeviceTotalMem)(&total, 0), CUDA_SUCCESS);
  EXPECT_EQ(total, size_t(24) << 30);

  // Memory of the GPU through the driver API: allocated, written, filled and read back.
  CUcontext ctx = nullptr;
  ASSERT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  ASSERT_EQ(CU(cuMemAlloc)(&p, 1024), CUDA_SUCCESS);
  std::vector<uint32_t> host(256);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = uint32_t(i * 3);
  ASSERT_EQ(CU(cuMemcpyHtoD)(p, host.data(), 1024), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuMemsetD32)(p + 16, 0x01020304u, 4), CUDA_SUCCESS);
  std::vector<uint32_t> back(256);
  ASSERT_EQ(CU(cuMemcpyDtoH)(back.data(), p, 1024), CUDA_SUCCESS);
  for (size_t i = 0; i < back.size(); ++i)
    EXPECT_EQ(back[i], i >= 4 && i < 8 ? 0x01020304u : uint32_t(i * 3)) << i;
  EXPECT_EQ(CU(cuMemFree)(p), CUDA_SUCCESS);

  // Pinned, managed and registered host memory: the host uses them at the same address.
  void* pinned = nullptr;
  ASSERT_EQ(CU(cuMemAllocHost)(&pinned, 256), CUDA_SUCCESS);
  std::memset(pinned, 0x5a, 256);
  EXPECT_EQ(CU(cuMemFreeHost)(pinned), CUDA_SUCCESS);
  CUdeviceptr managed = 0;
  ASSERT_EQ(CU(cuMemAllocManaged)(&managed, 256, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  std::memset(reinterpret_cast<void*>(managed), 0x5b, 256);
  EXPECT_EQ(CU(cuMemFree)(managed), CUDA_SUCCESS);
  std::vector<char> pageable(8192);
  ASSERT_EQ(CU(cuMemHostRegister)(pageable.data(), pageable.size(), 0), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuMemHostRegister)(pageable.data(), pageable.size(), 0),
            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(CU(cuMemHostUnregister)(pageable.data()), CUDA_SUCCESS);

  // A kernel: compiled by the AMDGPU code generator (the plugin), loaded and launched through
  // the fake runtime, which records the launch.
  const char* ptx = ".version 7.0\n.target sm_70\n.address_size 64\n"
                    ".visible .entry scale(.param .u64 p, .param .u32 n)\n{\n ret;\n}\n";
  CUmodule module = nullptr;
  ASSERT_EQ(CU(cuModuleLoadData)(&module, ptx), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(CU(cuModuleGetFunction)(&f, module, "scale"), CUDA_SUCCESS);
  CUdeviceptr arg_p = 0x1234567890ull;
  unsigned arg_n = 77;
  void* params[] = {&arg_p, &arg_n};
  ASSERT_EQ(CU(cuLaunchKernel)(f, 3, 2, 1, 64, 1, 1, 128, nullptr, params, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxSynchronize)(), CUDA_SUCCESS);
  void* fake = dlopen(std::getenv("MIMIC_HIP_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(fake, nullptr);
  auto last = reinterpret_cast<FakeHipLastLaunch>(dlsym(fake, "fakeHipLastLaunch"));
  ASSERT_NE(last, nullptr);
  const FakeHipLaunch& l = *last();
  EXPECT_EQ(l.kernel, "scale");
  EXPECT_EQ(l.grid[0], 3u);
  EXPECT_EQ(l.grid[1], 2u);
  EXPECT_EQ(l.block[0], 64u);
  EXPECT_EQ(l.shared_bytes, 128u);
  ASSERT_EQ(l.args.size(), 12u);
  EXPECT_EQ(std::memcmp(l.args.data(), &arg_p, 8), 0);
  EXPECT_EQ(std::memcmp(l.args.data() + 8, &arg_n, 4), 0);
  EXPECT_EQ(CU(cuModuleUnload)(module), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuDevicePrimaryCtxRelease)(0), CUDA_SUCCESS);
}

// Texture and surface objects on the GPU (device 0): kernels get the device address of a
// descriptor in device memory whose data pointer is device memory too; the driver finds
// the object by that handle. A kernel sampling a texture compiles, loads and launches.
TEST(Registry, TextureObjectsInDeviceMemory) {
  ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
#ifndef MIMIC_TEST_AMDGPU_CODEGEN
  GTEST_SKIP() << "this build has no AMDGPU code generation: device 0 is the CPU";
#endif
  CUcontext ctx = nullptr;
  ASSERT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
  void* fake = dlopen(std::getenv("MIMIC_HIP_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(fake, nullptr);
  auto device_memory =
      reinterpret_cast<FakeHipIsDeviceMemory>(dlsym(fake, "fakeHipIsDeviceMemory"));
  ASSERT_NE(device_memory, nullptr);
  struct Descriptor { // runtime/texture_descriptor.h: the fields checked here
    uint32_t magic, version;
    uint64_t base, pitch, slice_pitch;
    uint32_t width, height;
  };

  CUDA_ARRAY3D_DESCRIPTOR ad = {};
  ad.Width = 16;
  ad.Height = 8;
  ad.Format = CU_AD_FORMAT_FLOAT;
  ad.NumChannels = 1;
  ad.Flags = CUDA_ARRAY3D_SURFACE_LDST;
  CUarray array = nullptr;
  ASSERT_EQ(CU(cuArray3DCreate)(&array, &ad), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC res = {};
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = array;
  CUDA_TEXTURE_DESC td = {};
  td.filterMode = CU_TR_FILTER_MODE_LINEAR;
  td.flags = CU_TRSF_NORMALIZED_COORDINATES;
  CUtexObject tex = 0;
  ASSERT_EQ(CU(cuTexObjectCreate)(&tex, &res, &td, nullptr), CUDA_SUCCESS);
  ASSERT_TRUE(device_memory(reinterpret_cast<void*>(tex), 160)) << std::hex << tex;
  Descriptor d; // the fake's device memory is host memory
  std::memcpy(&d, reinterpret_cast<void*>(tex), sizeof d);
  EXPECT_EQ(d.magic, 0x5845544du); // "MTEX"
  EXPECT_EQ(d.width, 16u);
  EXPECT_EQ(d.height, 8u);
  EXPECT_EQ(d.pitch, 64u);
  EXPECT_TRUE(device_memory(reinterpret_cast<void*>(d.base), 16 * 8 * 4));
  CUDA_RESOURCE_DESC back = {};
  EXPECT_EQ(CU(cuTexObjectGetResourceDesc)(&back, tex), CUDA_SUCCESS);
  EXPECT_EQ(back.res.array.hArray, array);

  CUsurfObject surf = 0;
  ASSERT_EQ(CU(cuSurfObjectCreate)(&surf, &res), CUDA_SUCCESS);
  ASSERT_TRUE(device_memory(reinterpret_cast<void*>(surf), 160));
  EXPECT_NE(surf, tex);
  std::memcpy(&d, reinterpret_cast<void*>(surf), sizeof d);
  EXPECT_EQ(d.magic, 0x4652534du);                                    // "MSRF"
  EXPECT_EQ(CU(cuTexObjectDestroy)(surf), CUDA_ERROR_INVALID_HANDLE); // not a texture

  // Linear memory: the descriptor's base is the application's device pointer.
  CUdeviceptr buffer = 0;
  ASSERT_EQ(CU(cuMemAlloc)(&buffer, 4096), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC lin = {};
  lin.resType = CU_RESOURCE_TYPE_LINEAR;
  lin.res.linear.devPtr = buffer;
  lin.res.linear.format = CU_AD_FORMAT_UNSIGNED_INT32;
  lin.res.linear.numChannels = 1;
  lin.res.linear.sizeInBytes = 4096;
  CUDA_TEXTURE_DESC point = {};
  CUtexObject linear = 0;
  ASSERT_EQ(CU(cuTexObjectCreate)(&linear, &lin, &point, nullptr), CUDA_SUCCESS);
  ASSERT_TRUE(device_memory(reinterpret_cast<void*>(linear), 160));
  std::memcpy(&d, reinterpret_cast<void*>(linear), sizeof d);
  EXPECT_EQ(d.base, buffer);
  EXPECT_EQ(d.width, 1024u);

  // A kernel that samples it: the helpers are linked in, the module loads and launches.
  const char* ptx = ".version 7.0\n.target sm_70\n.address_size 64\n"
                    ".visible .entry fetch(.param .u64 t, .param .u64 out)\n{\n"
                    " .reg .b64 %rd<3>;\n .reg .b32 %r<6>;\n"
                    " ld.param.u64 %rd1, [t];\n ld.param.u64 %rd2, [out];\n mov.b32 %r1, 5;\n"
                    " tex.1d.v4.u32.s32 {%r2, %r3, %r4, %r5}, [%rd1, {%r1}];\n"
                    " st.global.u32 [%rd2], %r2;\n ret;\n}\n";
  CUmodule module = nullptr;
  ASSERT_EQ(CU(cuModuleLoadData)(&module, ptx), CUDA_SUCCESS);
  CUfunction f = nullptr;
  ASSERT_EQ(CU(cuModuleGetFunction)(&f, module, "fetch"), CUDA_SUCCESS);
  void* params[] = {&linear, &buffer};
  ASSERT_EQ(CU(cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxSynchronize)(), CUDA_SUCCESS);
  auto last = reinterpret_cast<FakeHipLastLaunch>(dlsym(fake, "fakeHipLastLaunch"));
  ASSERT_NE(last, nullptr);
  ASSERT_EQ(last()->args.size(), 16u);
  EXPECT_EQ(std::memcmp(last()->args.data(), &linear, 8), 0); // the handle, unchanged
  EXPECT_EQ(CU(cuModuleUnload)(module), CUDA_SUCCESS);

  EXPECT_EQ(CU(cuTexObjectDestroy)(tex), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuTexObjectDestroy)(tex), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuTexObjectDestroy)(linear), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuSurfObjectDestroy)(surf), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuArrayDestroy)(array), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuMemFree)(buffer), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuDevicePrimaryCtxRelease)(0), CUDA_SUCCESS);
}

// MIMIC_BACKEND=cpu with the fake runtime present: only the CPU.
TEST(Registry, CpuForced) {
  ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
  int count = 0;
  ASSERT_EQ(CU(cuDeviceGetCount)(&count), CUDA_SUCCESS);
  ASSERT_EQ(count, 1);
  EXPECT_EQ(name_of(0).rfind("Mimic CPU", 0), 0u) << name_of(0);
}

// No HIP runtime (MIMIC_HIP_LIBRARY names no file), MIMIC_BACKEND unset: the CPU is device 0.
TEST(Registry, CpuWithoutHip) {
  ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
  int count = 0;
  ASSERT_EQ(CU(cuDeviceGetCount)(&count), CUDA_SUCCESS);
  ASSERT_EQ(count, 1);
  EXPECT_EQ(name_of(0).rfind("Mimic CPU", 0), 0u) << name_of(0);
}

// MIMIC_BACKEND=amdgpu and no usable AMD GPU: CUDA finds no device.
TEST(Registry, AmdgpuForcedWithoutGpu) {
  EXPECT_EQ(CU(cuInit)(0), CUDA_ERROR_NO_DEVICE);
}
