// The descriptor of a texture or surface object, as kernels read it. This header depends on
// nothing but <stdint.h> and <stddef.h>: the texture helpers (backends/texture_helpers.h)
// are compiled from it for the host and for AMD GPUs (freestanding, without cuda.h), so the
// CUDA enumerators the descriptor stores are restated here; runtime/texture.h checks them
// against cuda.h.
//
// ---- Layout (C, natural alignment, 160 bytes, fixed by static_asserts below) ----------
//
//   off  type      field             meaning
//     0  uint32    magic             kTextureMagic ('MTEX') or kSurfaceMagic ('MSRF')
//     4  uint32    version           kDescriptorVersion (1)
//     8  uint64    base              device address of element (0, 0, 0)
//    16  uint64    pitch             bytes from one row to the next (y + 1)
//    24  uint64    slice_pitch       bytes from one slice to the next (z + 1)
//    32  uint32    width             extent in elements (x); at least 1
//    36  uint32    height            rows (y); 1 for a 1D resource
//    40  uint32    depth             slices (z); 1 for 1D and 2D resources
//    44  uint32    dimensions        1, 2 or 3
//    48  uint32    format            CUarray_format of each channel (CU_AD_FORMAT_*)
//    52  uint32    channels          1, 2 or 4
//    56  uint32    channel_bytes     bytes of one channel: 1, 2 or 4
//    60  uint32    element_bytes     channels * channel_bytes
//    64  uint32    address_mode[3]   CUaddress_mode for x, y, z (CU_TR_ADDRESS_MODE_*)
//    76  uint32    filter_mode       CUfilter_mode (POINT or LINEAR)
//    80  uint32    flags             kFlag* bits below
//    84  uint32    resource_type     CUresourcetype the object was made from
//    88  float     border_color[4]   returned for out-of-range reads with BORDER mode,
//                                    per channel (r, g, b, a), as given
//   104  uint32    max_anisotropy    as given (Mimic filters isotropically)
//   108  uint32    mipmap_filter_mode  CUfilter_mode between levels (one level today)
//   112  float     mipmap_level_bias
//   116  float     min_mipmap_level_clamp
//   120  float     max_mipmap_level_clamp
//   124  uint32    reserved0         0
//   128  uint64    reserved[4]       0; room for mip level tables
//
// Element (x, y, z) of the resource lies at  base + z * slice_pitch + y * pitch
// + x * element_bytes; channels are consecutive inside it, each channel_bytes wide, in
// the little-endian encoding of `format` (HALF: IEEE binary16). Every address in the
// descriptor is one the device reading it can use: on the CPU, host memory; on a GPU, the
// descriptor itself and `base` are device memory (runtime/texture.cpp places them).
//
// Reading rules the helpers implement (as CUDA defines them):
// - kFlagNormalizedCoords: coordinates are in [0, 1) over each extent; otherwise in
//   elements. Address modes WRAP and MIRROR apply to normalized coordinates only; with
//   unnormalized coordinates they act as CLAMP.
// - Integer formats are returned as integers when kFlagReadAsInteger is set, otherwise
//   promoted to float normalized to [0, 1] (unsigned) or [-1, 1] (signed). FLOAT and
//   HALF always read as float. LINEAR filtering is accepted only where the result is
//   float (creation rejects it otherwise).
// - kFlagSrgb: 8-bit unsigned channels r, g, b are converted from sRGB to linear when
//   read as float.
// - Resources of type LINEAR are read by tex1Dfetch-style integer indexing only: no
//   filtering, address modes or normalized coordinates (width is sizeInBytes /
//   element_bytes, height = depth = 1).
// - Surfaces (kSurfaceMagic) use byte x coordinates in suld/sust; the out-of-range
//   behaviour (.trap, .clamp, .zero) is the instruction's, so address_mode, filter_mode
//   and border_color are unused (zero).
#pragma once

#include <stddef.h>
#include <stdint.h>

extern "C" {

struct MimicTextureDescriptor {
  uint32_t magic;
  uint32_t version;
  uint64_t base;
  uint64_t pitch;
  uint64_t slice_pitch;
  uint32_t width;
  uint32_t height;
  uint32_t depth;
  uint32_t dimensions;
  uint32_t format;
  uint32_t channels;
  uint32_t channel_bytes;
  uint32_t element_bytes;
  uint32_t address_mode[3];
  uint32_t filter_mode;
  uint32_t flags;
  uint32_t resource_type;
  float border_color[4];
  uint32_t max_anisotropy;
  uint32_t mipmap_filter_mode;
  float mipmap_level_bias;
  float min_mipmap_level_clamp;
  float max_mipmap_level_clamp;
  uint32_t reserved0;
  uint64_t reserved[4];
};

} // extern "C"

static_assert(sizeof(MimicTextureDescriptor) == 160,
              "the layout is part of the generated code's ABI");
static_assert(offsetof(MimicTextureDescriptor, base) == 8);
static_assert(offsetof(MimicTextureDescriptor, width) == 32);
static_assert(offsetof(MimicTextureDescriptor, format) == 48);
static_assert(offsetof(MimicTextureDescriptor, address_mode) == 64);
static_assert(offsetof(MimicTextureDescriptor, flags) == 80);
static_assert(offsetof(MimicTextureDescriptor, border_color) == 88);
static_assert(offsetof(MimicTextureDescriptor, max_anisotropy) == 104);
static_assert(offsetof(MimicTextureDescriptor, reserved) == 128);

namespace mimic::runtime {

inline constexpr uint32_t kTextureMagic = 0x5845544d; // "MTEX" in memory
inline constexpr uint32_t kSurfaceMagic = 0x4652534d; // "MSRF" in memory
inline constexpr uint32_t kDescriptorVersion = 1;

// MimicTextureDescriptor::flags
inline constexpr uint32_t kFlagReadAsInteger = 1u << 0;    // CU_TRSF_READ_AS_INTEGER
inline constexpr uint32_t kFlagNormalizedCoords = 1u << 1; // CU_TRSF_NORMALIZED_COORDINATES
inline constexpr uint32_t kFlagSrgb = 1u << 2;             // CU_TRSF_SRGB
inline constexpr uint32_t kFlagDisableTrilinear = 1u << 3; // CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION
inline constexpr uint32_t kFlagSeamlessCubemap = 1u << 4;  // CU_TRSF_SEAMLESS_CUBEMAP

// The CUDA enumerators the descriptor stores, by their values in cuda.h.
namespace descriptor_values {
// CUarray_format
inline constexpr uint32_t kUnsignedInt8 = 0x01, kUnsignedInt16 = 0x02, kUnsignedInt32 = 0x03;
inline constexpr uint32_t kSignedInt8 = 0x08, kSignedInt16 = 0x09, kSignedInt32 = 0x0a;
inline constexpr uint32_t kHalf = 0x10, kFloat = 0x20;
inline constexpr uint32_t kUnormInt8 = 0xc0, kUnormInt16 = 0xc3, kSnormInt8 = 0xc6,
                          kSnormInt16 = 0xc9;
// CUaddress_mode
inline constexpr uint32_t kWrap = 0, kClamp = 1, kMirror = 2, kBorder = 3;
// CUfilter_mode
inline constexpr uint32_t kFilterPoint = 0, kFilterLinear = 1;
// CUresourcetype
inline constexpr uint32_t kResourceArray = 0, kResourceLinear = 2, kResourcePitch2d = 3;
} // namespace descriptor_values

} // namespace mimic::runtime
