// Pitched, 3D and array copies, 2D fills, memory pools, occupancy and launch
// configurations through the exported driver API. No kernel runs: every launch here is
// refused before it starts.
#include "libcuda_loader.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace mimic::test {
namespace {

// Two kernels that never run: one open, one limited to 128 threads per block.
const char kPtx[] = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry open_kernel(.param .u64 out)
{
	ret;
}

.visible .entry small_kernel(.param .u64 out)
.maxntid 128, 1, 1
{
	ret;
}
)";

#define DRIVER(name, type) auto name = exported<type>(#name)

class DriverMemory2D : public testing::Test {
protected:
  void SetUp() override {
    DRIVER(cuInit, PFN_cuInit_v2000);
    DRIVER(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000);
    DRIVER(cuCtxSetCurrent, PFN_cuCtxSetCurrent_v4000);
    ASSERT_TRUE(cuInit && cuDevicePrimaryCtxRetain && cuCtxSetCurrent);
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&context, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
  }
  void TearDown() override {
    DRIVER(cuDevicePrimaryCtxRelease_v2, PFN_cuDevicePrimaryCtxRelease_v11000);
    if (cuDevicePrimaryCtxRelease_v2) cuDevicePrimaryCtxRelease_v2(0);
  }
  CUdeviceptr alloc(size_t bytes) {
    DRIVER(cuMemAlloc_v2, PFN_cuMemAlloc_v3020);
    CUdeviceptr p = 0;
    EXPECT_EQ(cuMemAlloc_v2(&p, bytes), CUDA_SUCCESS);
    return p;
  }
  void release(CUdeviceptr p) {
    DRIVER(cuMemFree_v2, PFN_cuMemFree_v3020);
    EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  }
  CUfunction function(const char* name) {
    DRIVER(cuModuleLoadData, PFN_cuModuleLoadData_v2000);
    DRIVER(cuModuleGetFunction, PFN_cuModuleGetFunction_v2000);
    if (!module) EXPECT_EQ(cuModuleLoadData(&module, kPtx), CUDA_SUCCESS);
    CUfunction f = nullptr;
    EXPECT_EQ(cuModuleGetFunction(&f, module, name), CUDA_SUCCESS);
    return f;
  }
  CUcontext context = nullptr;
  CUmodule module = nullptr;
};

TEST_F(DriverMemory2D, Copy3DChecksEveryRowOfDeviceSides) {
  DRIVER(cuMemcpy3D_v2, PFN_cuMemcpy3D_v3020);
  const size_t pitch = 64, rows = 4, slices = 3;
  CUdeviceptr dev = alloc(pitch * rows * slices);
  std::vector<uint8_t> host(pitch * rows * slices), back(host.size(), 0);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = uint8_t(i * 13);
  CUDA_MEMCPY3D up = {};
  up.srcMemoryType = CU_MEMORYTYPE_HOST;
  up.srcHost = host.data();
  up.srcPitch = pitch;
  up.srcHeight = rows;
  up.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  up.dstDevice = dev;
  up.dstPitch = pitch;
  up.dstHeight = rows;
  up.WidthInBytes = pitch;
  up.Height = rows;
  up.Depth = slices;
  EXPECT_EQ(cuMemcpy3D_v2(&up), CUDA_SUCCESS);
  CUDA_MEMCPY3D down = up;
  std::swap(down.srcMemoryType, down.dstMemoryType);
  down.srcDevice = dev;
  down.srcHost = nullptr;
  down.dstHost = back.data();
  down.dstDevice = 0;
  EXPECT_EQ(cuMemcpy3D_v2(&down), CUDA_SUCCESS);
  EXPECT_EQ(back, host);

  CUDA_MEMCPY3D bad = up;
  bad.dstZ = 1; // the last slice leaves the allocation
  EXPECT_EQ(cuMemcpy3D_v2(&bad), CUDA_ERROR_INVALID_VALUE);
  bad = up;
  bad.dstDevice = 0x1000; // wild
  EXPECT_EQ(cuMemcpy3D_v2(&bad), CUDA_ERROR_INVALID_VALUE);
  bad = up;
  bad.dstHeight = rows - 1; // slices overlap their rows
  EXPECT_EQ(cuMemcpy3D_v2(&bad), CUDA_ERROR_INVALID_VALUE);
  bad = up;
  bad.dstPitch = SIZE_MAX / 2; // overflow
  EXPECT_EQ(cuMemcpy3D_v2(&bad), CUDA_ERROR_INVALID_VALUE);
  bad = up;
  bad.srcLOD = 1;
  EXPECT_EQ(cuMemcpy3D_v2(&bad), CUDA_ERROR_INVALID_VALUE);
  bad = up;
  bad.dstMemoryType = CUmemorytype(42);
  EXPECT_EQ(cuMemcpy3D_v2(&bad), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpy3D_v2(nullptr), CUDA_ERROR_INVALID_VALUE);
  release(dev);
}

TEST_F(DriverMemory2D, Fill2DRespectsAlignmentAndPitch) {
  DRIVER(cuMemsetD2D32_v2, PFN_cuMemsetD2D32_v3020);
  DRIVER(cuMemsetD2D16Async, PFN_cuMemsetD2D16Async_v3020);
  DRIVER(cuMemcpyDtoH_v2, PFN_cuMemcpyDtoH_v3020);
  DRIVER(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000);
  CUdeviceptr dev = alloc(256);
  std::vector<uint32_t> back(64);
  EXPECT_EQ(cuMemsetD2D32_v2(dev, 256, 0, 64, 1), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD2D32_v2(dev, 64, 0xdeadbeef, 4, 4), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyDtoH_v2(back.data(), dev, 256), CUDA_SUCCESS);
  EXPECT_EQ(back[0], 0xdeadbeefu);
  EXPECT_EQ(back[3], 0xdeadbeefu);
  EXPECT_EQ(back[4], 0u);
  EXPECT_EQ(back[48 + 3], 0xdeadbeefu);
  EXPECT_EQ(back[63], 0u);
  EXPECT_EQ(cuMemsetD2D16Async(dev + 2, 64, 0x1234, 2, 4, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD2D32_v2(dev + 2, 64, 0, 4, 4), CUDA_ERROR_INVALID_VALUE); // misaligned
  EXPECT_EQ(cuMemsetD2D32_v2(dev, 8, 0, 4, 4), CUDA_ERROR_INVALID_VALUE);      // pitch < row
  EXPECT_EQ(cuMemsetD2D32_v2(dev, 64, 0, 4, 5), CUDA_ERROR_INVALID_VALUE);     // past the end
  EXPECT_EQ(cuMemsetD2D32_v2(dev, 64, 0, 0, 5), CUDA_SUCCESS);                 // nothing to do
  release(dev);
}

TEST_F(DriverMemory2D, ArraysValidateAndBoundCopies) {
  DRIVER(cuArray3DCreate_v2, PFN_cuArray3DCreate_v3020);
  DRIVER(cuArray3DGetDescriptor_v2, PFN_cuArray3DGetDescriptor_v3020);
  DRIVER(cuArrayGetDescriptor_v2, PFN_cuArrayGetDescriptor_v3020);
  DRIVER(cuArrayDestroy, PFN_cuArrayDestroy_v2000);
  DRIVER(cuMemcpy2D_v2, PFN_cuMemcpy2D_v3020);
  CUDA_ARRAY3D_DESCRIPTOR d = {};
  d.Width = 8;
  d.Height = 4;
  d.Format = CU_AD_FORMAT_UNSIGNED_INT16;
  d.NumChannels = 2;
  CUarray array = nullptr;
  ASSERT_EQ(cuArray3DCreate_v2(&array, &d), CUDA_SUCCESS);
  CUDA_ARRAY3D_DESCRIPTOR got = {};
  EXPECT_EQ(cuArray3DGetDescriptor_v2(&got, array), CUDA_SUCCESS);
  EXPECT_EQ(got.Width, 8u);
  EXPECT_EQ(got.NumChannels, 2u);
  CUDA_ARRAY_DESCRIPTOR flat = {};
  EXPECT_EQ(cuArrayGetDescriptor_v2(&flat, array), CUDA_SUCCESS);
  EXPECT_EQ(flat.Height, 4u);
  EXPECT_EQ(flat.Format, CU_AD_FORMAT_UNSIGNED_INT16);

  std::vector<uint32_t> host(8 * 4), back(8 * 4, 0);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = uint32_t(i * 0x10001);
  CUDA_MEMCPY2D in = {};
  in.srcMemoryType = CU_MEMORYTYPE_HOST;
  in.srcHost = host.data();
  in.srcPitch = 32;
  in.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  in.dstArray = array;
  in.WidthInBytes = 32;
  in.Height = 4;
  EXPECT_EQ(cuMemcpy2D_v2(&in), CUDA_SUCCESS);
  CUDA_MEMCPY2D out = {};
  out.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  out.srcArray = array;
  out.dstMemoryType = CU_MEMORYTYPE_HOST;
  out.dstHost = back.data();
  out.dstPitch = 32;
  out.WidthInBytes = 32;
  out.Height = 4;
  EXPECT_EQ(cuMemcpy2D_v2(&out), CUDA_SUCCESS);
  EXPECT_EQ(back, host);
  in.dstXInBytes = 4; // one element past the row's end
  EXPECT_EQ(cuMemcpy2D_v2(&in), CUDA_ERROR_INVALID_VALUE);
  in.dstXInBytes = 0;
  in.dstY = 1;
  EXPECT_EQ(cuMemcpy2D_v2(&in), CUDA_ERROR_INVALID_VALUE);

  EXPECT_EQ(cuArrayDestroy(array), CUDA_SUCCESS);
  EXPECT_EQ(cuArrayDestroy(array), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuArray3DGetDescriptor_v2(&got, array), CUDA_ERROR_INVALID_HANDLE);
  in.dstY = 0;
  EXPECT_EQ(cuMemcpy2D_v2(&in), CUDA_ERROR_INVALID_HANDLE); // stale array

  d.NumChannels = 3;
  EXPECT_EQ(cuArray3DCreate_v2(&array, &d), CUDA_ERROR_INVALID_VALUE);
  d.NumChannels = 1;
  d.Depth = 2;
  d.Flags = CUDA_ARRAY3D_LAYERED;
  EXPECT_EQ(cuArray3DCreate_v2(&array, &d), CUDA_ERROR_NOT_SUPPORTED);
}

TEST_F(DriverMemory2D, PeerCopiesNeedLiveContexts) {
  DRIVER(cuMemcpyPeer, PFN_cuMemcpyPeer_v4000);
  CUdeviceptr a = alloc(64), b = alloc(64);
  EXPECT_EQ(cuMemcpyPeer(b, context, a, context, 64), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyPeer(b, context, a, nullptr, 64), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuMemcpyPeer(b, context, a, context, 65), CUDA_ERROR_INVALID_VALUE);
  release(a);
  release(b);
}

TEST_F(DriverMemory2D, StreamOrderedAllocationReportsItsPool) {
  DRIVER(cuMemAllocAsync, PFN_cuMemAllocAsync_v11020);
  DRIVER(cuMemFreeAsync, PFN_cuMemFreeAsync_v11020);
  DRIVER(cuDeviceGetDefaultMemPool, PFN_cuDeviceGetDefaultMemPool_v11020);
  DRIVER(cuPointerGetAttribute, PFN_cuPointerGetAttribute_v4000);
  DRIVER(cuMemPoolGetAttribute, PFN_cuMemPoolGetAttribute_v11020);
  DRIVER(cuMemPoolSetAttribute, PFN_cuMemPoolSetAttribute_v11020);
  DRIVER(cuMemPoolDestroy, PFN_cuMemPoolDestroy_v11020);
  DRIVER(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000);
  CUmemoryPool pool = nullptr;
  ASSERT_EQ(cuDeviceGetDefaultMemPool(&pool, 0), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAllocAsync(&p, 3000, nullptr), CUDA_SUCCESS);
  CUmemoryPool owner = nullptr;
  EXPECT_EQ(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p + 100),
            CUDA_SUCCESS);
  EXPECT_EQ(owner, pool);
  cuuint64_t used = 0;
  EXPECT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used), CUDA_SUCCESS);
  EXPECT_GE(used, 3000u);
  EXPECT_EQ(cuMemFreeAsync(p, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeAsync(p, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFreeAsync(p + 8, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
  cuuint64_t high = 5;
  EXPECT_EQ(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &high),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE); // the default pool stays
  // cuMemFree takes pool memory back to its pool.
  DRIVER(cuMemFree_v2, PFN_cuMemFree_v3020);
  ASSERT_EQ(cuMemAllocAsync(&p, 3000, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used), CUDA_SUCCESS);
  EXPECT_EQ(used, 0u);
  // Memory from cuMemAlloc may be freed in stream order too.
  CUdeviceptr plain = alloc(128);
  EXPECT_EQ(cuMemFreeAsync(plain, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(nullptr), CUDA_SUCCESS);
}

TEST_F(DriverMemory2D, OccupancyFollowsTheKernelsLimits) {
  DRIVER(cuOccupancyMaxActiveBlocksPerMultiprocessor,
         PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050);
  DRIVER(cuOccupancyMaxPotentialBlockSize, PFN_cuOccupancyMaxPotentialBlockSize_v6050);
  CUfunction small = function("small_kernel");
  int blocks = -1;
  EXPECT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, small, 128, 0), CUDA_SUCCESS);
  EXPECT_GT(blocks, 0);
  EXPECT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, small, 256, 0), CUDA_SUCCESS);
  EXPECT_EQ(blocks, 0);
  int min_grid = 0, block = 0;
  EXPECT_EQ(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, small, nullptr, 0, 0),
            CUDA_SUCCESS);
  EXPECT_GT(block, 0);
  EXPECT_LE(block, 128);
  EXPECT_EQ(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, nullptr, 128, 0),
            CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(DriverMemory2D, LaunchConfigurationsAreChecked) {
  DRIVER(cuLaunchKernelEx, PFN_cuLaunchKernelEx_v11060);
  DRIVER(cuLaunchCooperativeKernel, PFN_cuLaunchCooperativeKernel_v9000);
  CUfunction f = function("open_kernel");
  CUfunction small = function("small_kernel");
  CUdeviceptr out = alloc(64);
  void* params[] = {&out};
  CUlaunchAttribute attr = {};
  CUlaunchConfig config = {};
  config.gridDimX = config.gridDimY = config.gridDimZ = 4;
  config.blockDimX = 256;
  config.blockDimY = config.blockDimZ = 1;
  config.attrs = &attr;
  config.numAttrs = 1;
  attr.id = CUlaunchAttributeID(999);
  EXPECT_EQ(cuLaunchKernelEx(&config, f, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  attr.id = CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY; // a stream attribute
  EXPECT_EQ(cuLaunchKernelEx(&config, f, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 3; // does not divide the grid
  attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
  EXPECT_EQ(cuLaunchKernelEx(&config, f, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
  attr.value.programmaticEvent.event = reinterpret_cast<CUevent>(uintptr_t(0x1234));
  EXPECT_EQ(cuLaunchKernelEx(&config, f, params, nullptr), CUDA_ERROR_INVALID_HANDLE);
  attr.id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
  attr.value.accessPolicyWindow.hitRatio = 2.0f;
  EXPECT_EQ(cuLaunchKernelEx(&config, f, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attr.value.cooperative = 1;
  config.gridDimX = 1 << 20;
  EXPECT_EQ(cuLaunchKernelEx(&config, f, params, nullptr), CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  config.blockDimX = 256; // beyond small_kernel's .maxntid: a shape error, not a size one
  EXPECT_EQ(cuLaunchKernelEx(&config, small, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  config.numAttrs = 2;
  config.attrs = nullptr;
  EXPECT_EQ(cuLaunchKernelEx(&config, f, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLaunchKernelEx(nullptr, f, params, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLaunchCooperativeKernel(f, 1 << 20, 1, 1, 256, 1, 1, 0, nullptr, params),
            CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  EXPECT_EQ(cuLaunchCooperativeKernel(f, 1, 1, 1, 2048, 1, 1, 0, nullptr, params),
            CUDA_ERROR_INVALID_VALUE);
  release(out);
}

} // namespace
} // namespace mimic::test
