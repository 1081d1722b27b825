// Texture and surface objects: the handle is the address of a MimicTextureDescriptor
// (runtime/texture.h) that kernels read; its fields, the getters, validation, and
// destroyed or foreign handles.
#include <cstdint>
#include <cstring>
#include <vector>

#include "libcuda_loader.h"
#include "runtime/texture.h"

namespace {

const MimicTextureDescriptor& descriptor(unsigned long long handle) {
  return *reinterpret_cast<const MimicTextureDescriptor*>(uintptr_t(handle));
}

CUDA_RESOURCE_DESC linear(CUdeviceptr p, size_t bytes, CUarray_format format = CU_AD_FORMAT_FLOAT,
                          unsigned channels = 1) {
  CUDA_RESOURCE_DESC r{};
  r.resType = CU_RESOURCE_TYPE_LINEAR;
  r.res.linear.devPtr = p;
  r.res.linear.format = format;
  r.res.linear.numChannels = channels;
  r.res.linear.sizeInBytes = bytes;
  return r;
}

CUDA_RESOURCE_DESC of_array(CUarray a) {
  CUDA_RESOURCE_DESC r{};
  r.resType = CU_RESOURCE_TYPE_ARRAY;
  r.res.array.hArray = a;
  return r;
}

class Textures : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, 0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuMemAlloc)(&memory, 1 << 16), CUDA_SUCCESS);
  }
  void TearDown() override {
    CU(cuMemFree)(memory);
    CU(cuDevicePrimaryCtxRelease)(0);
  }
  CUcontext ctx = nullptr;
  CUdeviceptr memory = 0;
  CUDA_TEXTURE_DESC point{}; // clamp, point, unnormalized
};

TEST_F(Textures, LinearResourceDescriptor) {
  CUDA_RESOURCE_DESC r = linear(memory, 4096, CU_AD_FORMAT_HALF, 2);
  CUtexObject tex = 0;
  ASSERT_EQ(CU(cuTexObjectCreate)(&tex, &r, &point, nullptr), CUDA_SUCCESS);
  ASSERT_NE(tex, 0u);
  const MimicTextureDescriptor& d = descriptor(tex);
  EXPECT_EQ(d.magic, mimic::runtime::kTextureMagic);
  EXPECT_EQ(d.version, 1u);
  EXPECT_EQ(d.base, memory);
  EXPECT_EQ(d.format, uint32_t(CU_AD_FORMAT_HALF));
  EXPECT_EQ(d.channels, 2u);
  EXPECT_EQ(d.channel_bytes, 2u);
  EXPECT_EQ(d.element_bytes, 4u);
  EXPECT_EQ(d.width, 1024u);
  EXPECT_EQ(d.height, 1u);
  EXPECT_EQ(d.depth, 1u);
  EXPECT_EQ(d.dimensions, 1u);
  EXPECT_EQ(d.resource_type, uint32_t(CU_RESOURCE_TYPE_LINEAR));
  CUDA_RESOURCE_DESC got{};
  ASSERT_EQ(CU(cuTexObjectGetResourceDesc)(&got, tex), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(&got, &r, sizeof r), 0);
  CUDA_RESOURCE_VIEW_DESC view{};
  EXPECT_EQ(CU(cuTexObjectGetResourceViewDesc)(&view, tex), CUDA_ERROR_INVALID_VALUE); // none given
  EXPECT_EQ(CU(cuTexObjectDestroy)(tex), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuTexObjectDestroy)(tex), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuTexObjectGetResourceDesc)(&got, tex), CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(Textures, PitchedResourceAndSampling) {
  CUdeviceptr pitched = 0;
  size_t pitch = 0;
  ASSERT_EQ(CU(cuMemAllocPitch)(&pitched, &pitch, 100 * 4, 50, 4), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC r{};
  r.resType = CU_RESOURCE_TYPE_PITCH2D;
  r.res.pitch2D = {pitched, CU_AD_FORMAT_UNSIGNED_INT8, 4, 100, 50, pitch};
  CUDA_TEXTURE_DESC t{};
  t.addressMode[0] = CU_TR_ADDRESS_MODE_WRAP;
  t.addressMode[1] = CU_TR_ADDRESS_MODE_MIRROR;
  t.addressMode[2] = CU_TR_ADDRESS_MODE_BORDER;
  t.filterMode = CU_TR_FILTER_MODE_LINEAR;
  t.flags = CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB;
  t.borderColor[0] = 0.25f;
  t.borderColor[3] = 1.0f;
  t.maxAnisotropy = 4;
  CUtexObject tex = 0;
  ASSERT_EQ(CU(cuTexObjectCreate)(&tex, &r, &t, nullptr), CUDA_SUCCESS);
  const MimicTextureDescriptor& d = descriptor(tex);
  EXPECT_EQ(d.base, pitched);
  EXPECT_EQ(d.pitch, pitch);
  EXPECT_EQ(d.width, 100u);
  EXPECT_EQ(d.height, 50u);
  EXPECT_EQ(d.dimensions, 2u);
  EXPECT_EQ(d.element_bytes, 4u);
  EXPECT_EQ(d.address_mode[0], uint32_t(CU_TR_ADDRESS_MODE_WRAP));
  EXPECT_EQ(d.address_mode[1], uint32_t(CU_TR_ADDRESS_MODE_MIRROR));
  EXPECT_EQ(d.address_mode[2], uint32_t(CU_TR_ADDRESS_MODE_BORDER));
  EXPECT_EQ(d.filter_mode, uint32_t(CU_TR_FILTER_MODE_LINEAR));
  EXPECT_EQ(d.flags, mimic::runtime::kFlagNormalizedCoords | mimic::runtime::kFlagSrgb);
  EXPECT_EQ(d.border_color[0], 0.25f);
  EXPECT_EQ(d.border_color[3], 1.0f);
  EXPECT_EQ(d.max_anisotropy, 4u);
  CUDA_TEXTURE_DESC got{};
  ASSERT_EQ(CU(cuTexObjectGetTextureDesc)(&got, tex), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(&got, &t, sizeof t), 0);
  EXPECT_EQ(CU(cuTexObjectDestroy)(tex), CUDA_SUCCESS);

  // Pitches and extents that do not fit.
  CUDA_RESOURCE_DESC bad = r;
  bad.res.pitch2D.pitchInBytes = pitch + 4; // not a multiple of the pitch alignment
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, &bad, &point, nullptr), CUDA_ERROR_INVALID_VALUE);
  bad = r;
  bad.res.pitch2D.width = unsigned(pitch); // rows longer than the pitch
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, &bad, &point, nullptr), CUDA_ERROR_INVALID_VALUE);
  bad = r;
  bad.res.pitch2D.height = 51; // past the allocation
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, &bad, &point, nullptr), CUDA_ERROR_INVALID_VALUE);
  bad = r;
  bad.res.pitch2D.devPtr = pitched + 4; // misaligned
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, &bad, &point, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemFree)(pitched), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, &r, &point, nullptr),
            CUDA_ERROR_INVALID_VALUE); // freed memory
}

TEST_F(Textures, ArraysResolveToTheirStorage) {
  CUDA_ARRAY3D_DESCRIPTOR ad{8, 4, 3, CU_AD_FORMAT_FLOAT, 1, 0};
  CUarray array = nullptr;
  ASSERT_EQ(CU(cuArray3DCreate)(&array, &ad), CUDA_SUCCESS);
  std::vector<float> values(8 * 4 * 3);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = float(i);
  CUDA_MEMCPY3D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = values.data();
  copy.srcPitch = 8 * 4;
  copy.srcHeight = 4;
  copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  copy.dstArray = array;
  copy.WidthInBytes = 8 * 4;
  copy.Height = 4;
  copy.Depth = 3;
  ASSERT_EQ(CU(cuMemcpy3D)(&copy), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC r = of_array(array);
  CUDA_RESOURCE_VIEW_DESC view{CU_RES_VIEW_FORMAT_NONE, 8, 4, 3, 0, 0, 0, 0, {}};
  CUtexObject tex = 0;
  ASSERT_EQ(CU(cuTexObjectCreate)(&tex, &r, &point, &view), CUDA_SUCCESS);
  const MimicTextureDescriptor& d = descriptor(tex);
  EXPECT_EQ(d.dimensions, 3u);
  EXPECT_EQ(d.width, 8u);
  EXPECT_EQ(d.height, 4u);
  EXPECT_EQ(d.depth, 3u);
  EXPECT_EQ(d.pitch, 32u);
  EXPECT_EQ(d.slice_pitch, 128u);
  // Element (x, y, z) lies where the layout says (device memory is host memory on the
  // CPU backend).
  const auto* base = reinterpret_cast<const uint8_t*>(uintptr_t(d.base));
  float element = 0;
  std::memcpy(&element, base + 2 * d.slice_pitch + 3 * d.pitch + 5 * d.element_bytes, 4);
  EXPECT_EQ(element, values[(2 * 4 + 3) * 8 + 5]);
  CUDA_RESOURCE_VIEW_DESC got{};
  ASSERT_EQ(CU(cuTexObjectGetResourceViewDesc)(&got, tex), CUDA_SUCCESS);
  EXPECT_EQ(got.width, 8u);
  EXPECT_EQ(CU(cuTexObjectDestroy)(tex), CUDA_SUCCESS);
  // Views of part of the array, or of another format, are not supported.
  view.width = 4;
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, &r, &point, &view), CUDA_ERROR_NOT_SUPPORTED);
  // A surface needs CUDA_ARRAY3D_SURFACE_LDST.
  CUsurfObject surf = 0;
  EXPECT_EQ(CU(cuSurfObjectCreate)(&surf, &r), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuArrayDestroy)(array), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, &r, &point, nullptr),
            CUDA_ERROR_INVALID_HANDLE); // stale array
}

TEST_F(Textures, Surfaces) {
  CUDA_ARRAY3D_DESCRIPTOR ad{16, 16, 0, CU_AD_FORMAT_UNSIGNED_INT32, 2, CUDA_ARRAY3D_SURFACE_LDST};
  CUarray array = nullptr;
  ASSERT_EQ(CU(cuArray3DCreate)(&array, &ad), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC r = of_array(array);
  CUsurfObject surf = 0;
  ASSERT_EQ(CU(cuSurfObjectCreate)(&surf, &r), CUDA_SUCCESS);
  const MimicTextureDescriptor& d = descriptor(surf);
  EXPECT_EQ(d.magic, mimic::runtime::kSurfaceMagic);
  EXPECT_EQ(d.dimensions, 2u);
  EXPECT_EQ(d.element_bytes, 8u);
  EXPECT_EQ(d.pitch, 16u * 8);
  CUDA_RESOURCE_DESC got{};
  ASSERT_EQ(CU(cuSurfObjectGetResourceDesc)(&got, surf), CUDA_SUCCESS);
  EXPECT_EQ(got.res.array.hArray, array);
  // The kinds do not mix.
  CUDA_TEXTURE_DESC t{};
  EXPECT_EQ(CU(cuTexObjectGetTextureDesc)(&t, surf), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuTexObjectDestroy)(surf), CUDA_ERROR_INVALID_HANDLE);
  // Only arrays back surfaces.
  CUDA_RESOURCE_DESC lin = linear(memory, 4096);
  CUsurfObject other = 0;
  EXPECT_EQ(CU(cuSurfObjectCreate)(&other, &lin), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuSurfObjectCreate)(nullptr, &r), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuSurfObjectCreate)(&other, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuSurfObjectGetResourceDesc)(nullptr, surf), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuSurfObjectDestroy)(surf), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuSurfObjectDestroy)(surf), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuSurfObjectDestroy)(0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuArrayDestroy)(array), CUDA_SUCCESS);
}

TEST_F(Textures, Validation) {
  CUtexObject tex = 0;
  CUDA_RESOURCE_DESC r = linear(memory, 4096);
  EXPECT_EQ(CU(cuTexObjectCreate)(nullptr, &r, &point, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, nullptr, &point, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, &r, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  auto expect_invalid = [&](CUDA_RESOURCE_DESC res, CUDA_TEXTURE_DESC t, const char* why) {
    CUtexObject out = 0;
    EXPECT_EQ(CU(cuTexObjectCreate)(&out, &res, &t, nullptr), CUDA_ERROR_INVALID_VALUE) << why;
  };
  expect_invalid(linear(memory, 4096, CUarray_format(0x77)), point, "unknown format");
  expect_invalid(linear(memory, 4096, CU_AD_FORMAT_FLOAT, 3), point, "three channels");
  expect_invalid(linear(memory + 4, 4092), point, "misaligned address");
  expect_invalid(linear(memory, 1 << 20), point, "larger than the allocation");
  expect_invalid(linear(0, 4096), point, "null address");
  CUDA_RESOURCE_DESC flagged = r;
  flagged.flags = 1;
  expect_invalid(flagged, point, "resource flags");
  CUDA_RESOURCE_DESC unknown = r;
  unknown.resType = CUresourcetype(9);
  expect_invalid(unknown, point, "resource type");
  CUDA_TEXTURE_DESC t = point;
  t.addressMode[1] = CUaddress_mode(7);
  expect_invalid(r, t, "address mode");
  t = point;
  t.filterMode = CUfilter_mode(5);
  expect_invalid(r, t, "filter mode");
  t = point;
  t.flags = 0x100;
  expect_invalid(r, t, "unknown flag");
  t = point;
  t.filterMode = CU_TR_FILTER_MODE_LINEAR;
  expect_invalid(r, t, "linear filtering of a linear resource");
  CUdeviceptr pitched = 0;
  size_t pitch = 0;
  ASSERT_EQ(CU(cuMemAllocPitch)(&pitched, &pitch, 64, 8, 4), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC p2{};
  p2.resType = CU_RESOURCE_TYPE_PITCH2D;
  p2.res.pitch2D = {pitched, CU_AD_FORMAT_SIGNED_INT32, 1, 16, 8, pitch};
  expect_invalid(p2, t, "linear filtering of 32-bit integers");
  p2.res.pitch2D.format = CU_AD_FORMAT_UNSIGNED_INT8;
  t.flags = CU_TRSF_READ_AS_INTEGER;
  expect_invalid(p2, t, "linear filtering of values read as integers");
  t.flags = 0;
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, &p2, &t, nullptr), CUDA_SUCCESS); // 8-bit promoted to float
  EXPECT_EQ(CU(cuTexObjectDestroy)(tex), CUDA_SUCCESS);
  t = point;
  t.flags = CU_TRSF_SRGB;
  expect_invalid(r, t, "sRGB of floats");
  CUDA_RESOURCE_DESC mip{};
  mip.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, &mip, &point, nullptr), CUDA_ERROR_NOT_SUPPORTED);
  CUDA_RESOURCE_VIEW_DESC view{};
  EXPECT_EQ(CU(cuTexObjectCreate)(&tex, &r, &point, &view),
            CUDA_ERROR_INVALID_VALUE); // views: arrays only
  EXPECT_EQ(CU(cuMemFree)(pitched), CUDA_SUCCESS);
}

TEST_F(Textures, ForeignAndStaleHandles) {
  CUstream stream = nullptr;
  ASSERT_EQ(CU(cuStreamCreate)(&stream, 0), CUDA_SUCCESS);
  uint64_t garbage[32] = {};
  std::memcpy(garbage, &mimic::runtime::kTextureMagic, 4); // looks like a descriptor, is not one
  CUDA_RESOURCE_DESC r{};
  CUDA_TEXTURE_DESC t{};
  for (unsigned long long bad :
       {0x10ull, 0xdeadbeef000ull, (unsigned long long)uintptr_t(garbage),
        (unsigned long long)uintptr_t(stream), (unsigned long long)memory}) {
    EXPECT_EQ(CU(cuTexObjectDestroy)(bad), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(CU(cuTexObjectGetResourceDesc)(&r, bad), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(CU(cuTexObjectGetTextureDesc)(&t, bad), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(CU(cuSurfObjectDestroy)(bad), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(CU(cuSurfObjectGetResourceDesc)(&r, bad), CUDA_ERROR_INVALID_HANDLE);
  }
  EXPECT_EQ(CU(cuTexObjectDestroy)(0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuStreamDestroy)(stream), CUDA_SUCCESS);
  // Objects go with their context.
  CUcontext created = nullptr;
  ASSERT_EQ(CU(cuCtxCreate)(&created, nullptr, 0, 0), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  ASSERT_EQ(CU(cuMemAlloc)(&p, 4096), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC res = linear(p, 4096);
  CUtexObject tex = 0;
  ASSERT_EQ(CU(cuTexObjectCreate)(&tex, &res, &point, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxDestroy)(created), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuTexObjectGetResourceDesc)(&r, tex), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuTexObjectDestroy)(tex), CUDA_ERROR_INVALID_HANDLE);
  ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
}

} // namespace
