// The texture and surface helpers of codegen/texture_abi.h, written once for every backend:
// backends/cpu/texture.cpp compiles them for the host, backends/amdgpu/texture_device.cpp for
// AMD GPUs (freestanding: clang builtins instead of the C and C++ libraries, no exceptions,
// no statics). Each backend wraps them in the extern "C" helpers and says what a refusal
// means on its device (a message on the CPU, a device log record on a GPU).
//
// They read the descriptor a handle points to (runtime/texture_descriptor.h) and follow
// CUDA's texture fetching rules: normalized or element coordinates, the address modes, point
// and linear filtering with the texture unit's 9-bit weights (8 fractional bits), integer or
// normalized-float reads, half and sRGB formats, tld4 gathers, and the surface instructions'
// .trap, .clamp and .zero behaviour outside the surface.
#pragma once

#include <stdint.h>

#include "codegen/texture_abi.h"
#include "runtime/texture_descriptor.h"

namespace mimic::texture_helpers {

using namespace runtime::descriptor_values;
using codegen::kSurfFormatted;
using codegen::kSurfModeShift;
using codegen::kSurfStore;
using codegen::kTexDimsMask;
using codegen::kTexGather;
using codegen::kTexGatherShift;
using codegen::kTexIntegerCoords;
using codegen::kTexLayered;
using codegen::kTexOk;
using codegen::kTexOutOfRange;
using codegen::SurfaceMode;
using codegen::TextureQuery;
using runtime::kFlagNormalizedCoords;
using runtime::kFlagReadAsInteger;
using runtime::kFlagSrgb;

template <typename T> inline T min_of(T a, T b) {
  return b < a ? b : a;
}
template <typename T> inline T max_of(T a, T b) {
  return a < b ? b : a;
}
template <typename T> inline T clamp_to(T v, T lo, T hi) {
  return v < lo ? lo : hi < v ? hi : v;
}
template <typename To, typename From> inline To bits(From v) {
  return __builtin_bit_cast(To, v);
}

// Whether `handle` points to a live descriptor of the kind `magic` says. The caller makes
// sure the address is one it may read (it is what the program passed as a handle).
inline const MimicTextureDescriptor* descriptor_at(const void* handle, uint32_t magic) {
  auto address = reinterpret_cast<uintptr_t>(handle);
  if (address < 4096 || address % alignof(MimicTextureDescriptor) != 0) return nullptr;
  const auto* d = static_cast<const MimicTextureDescriptor*>(handle);
  return d->magic == magic && d->version == runtime::kDescriptorVersion ? d : nullptr;
}

inline float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0x1f) return bits<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) // zero or subnormal: exact in float
    return (sign ? -1.0f : 1.0f) * __builtin_ldexpf(float(mantissa), -24);
  return bits<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

inline uint16_t float_to_half(float f) { // round to nearest even
  return bits<uint16_t>(static_cast<_Float16>(f));
}

inline bool is_float_format(uint32_t f) {
  return f == kFloat || f == kHalf;
}

inline bool is_normalized_format(uint32_t f) {
  return f == kUnormInt8 || f == kUnormInt16 || f == kSnormInt8 || f == kSnormInt16;
}

inline bool is_signed_format(uint32_t f) {
  return f == kSignedInt8 || f == kSignedInt16 || f == kSignedInt32 || f == kSnormInt8 ||
         f == kSnormInt16;
}

// Whether reads return integers (otherwise f32).
inline bool reads_integers(const MimicTextureDescriptor& d) {
  if (is_float_format(d.format) || is_normalized_format(d.format)) return false;
  return (d.flags & kFlagReadAsInteger) || d.channel_bytes == 4;
}

inline float srgb_to_linear(float c) {
  return c <= 0.04045f ? c / 12.92f : __builtin_powf((c + 0.055f) / 1.055f, 2.4f);
}

// The value of a channel of `n` bytes (1, 2 or 4) at p, which is aligned to n: resources
// start at multiples of 256 bytes, pitches are multiples of 32 and rows whole elements.
inline uint32_t load_channel(const uint8_t* p, uint32_t n) {
  if (n == 4) return *static_cast<const uint32_t*>(__builtin_assume_aligned(p, 4));
  if (n == 2) return *static_cast<const uint16_t*>(__builtin_assume_aligned(p, 2));
  return *p;
}

inline void store_channel(uint8_t* p, uint32_t v, uint32_t n) {
  if (n == 4)
    *static_cast<uint32_t*>(__builtin_assume_aligned(p, 4)) = v;
  else if (n == 2)
    *static_cast<uint16_t*>(__builtin_assume_aligned(p, 2)) = uint16_t(v);
  else
    *p = uint8_t(v);
}

// Channel c of the element at p, as f32 bits or an integer.
inline uint32_t read_channel(const MimicTextureDescriptor& d, const uint8_t* p, uint32_t c,
                             bool integers) {
  const uint8_t* at = p + c * d.channel_bytes;
  if (d.format == kFloat) return load_channel(at, 4);
  if (d.format == kHalf) return bits<uint32_t>(half_to_float(uint16_t(load_channel(at, 2))));
  uint32_t raw = load_channel(at, d.channel_bytes);
  unsigned width = d.channel_bytes * 8;
  bool sign = is_signed_format(d.format);
  if (sign && width < 32 && (raw >> (width - 1)) & 1) raw |= ~0u << width;
  if (integers) return raw;
  float v;
  if (sign)
    v = __builtin_fmaxf(float(int32_t(raw)) / float((1u << (width - 1)) - 1), -1.0f);
  else
    v = float(raw) / float(width == 32 ? 4294967295.0 : double((1ull << width) - 1));
  if ((d.flags & kFlagSrgb) && c < 3) v = srgb_to_linear(v);
  return bits<uint32_t>(v);
}

// Channels of an element; channels an element lacks read as (0, 0, 0, 1).
inline void read_texel(const MimicTextureDescriptor& d, const uint8_t* p, bool integers,
                       uint32_t out[4]) {
  for (uint32_t c = 0; c < 4; ++c) {
    if (c < d.channels)
      out[c] = read_channel(d, p, c, integers);
    else
      out[c] = c < 3 ? 0 : integers ? 1 : bits<uint32_t>(1.0f);
  }
}

inline void border_texel(const MimicTextureDescriptor& d, bool integers, uint32_t out[4]) {
  for (int c = 0; c < 4; ++c)
    out[c] = integers ? uint32_t(int32_t(d.border_color[c])) : bits<uint32_t>(d.border_color[c]);
}

inline int64_t floor_to_index(float u) {
  if (!(u == u)) return 0;
  float f = __builtin_floorf(u);
  return f < -1e9f ? -1000000000 : f > 1e9f ? 1000000000 : int64_t(f);
}

// Texel index i along an extent n under an address mode, or -1 for the border.
inline int64_t resolve(int64_t i, int64_t n, uint32_t mode, bool normalized) {
  if (!normalized && (mode == kWrap || mode == kMirror)) mode = kClamp;
  switch (mode) {
  case kWrap:
    return ((i % n) + n) % n;
  case kMirror: {
    int64_t m = ((i % (2 * n)) + 2 * n) % (2 * n);
    return m < n ? m : 2 * n - 1 - m;
  }
  case kBorder:
    return i < 0 || i >= n ? -1 : i;
  default:
    return i < 0 ? 0 : i >= n ? n - 1 : i;
  }
}

struct Footprint {
  int64_t index[3][2]; // per dimension: the lower and upper texel (after addressing)
  float weight[3];     // per dimension: the upper texel's weight
};

class Sampler {
public:
  Sampler(const MimicTextureDescriptor& d, uint32_t dims, int32_t layer)
      : d_(d), dims_(dims), integers_(reads_integers(d)),
        normalized_(d.flags & kFlagNormalizedCoords) {
    extent_[0] = d.width, extent_[1] = d.height, extent_[2] = d.depth;
    slice_ = 0;
    if (layer >= 0 || dims < 3) // layered: the layer is the slice; clamped to the layers there are
      slice_ = layer < 0 ? 0 : min_of<int64_t>(layer, int64_t(d.depth) - 1);
  }
  bool integers() const { return integers_; }

  // The element at resolved indices, or the border.
  void texel(const int64_t* i, uint32_t out[4]) const {
    for (uint32_t k = 0; k < dims_; ++k)
      if (i[k] < 0) return border_texel(d_, integers_, out);
    uint64_t offset = uint64_t(i[0]) * d_.element_bytes;
    if (dims_ >= 2) offset += uint64_t(i[1]) * d_.pitch;
    offset += uint64_t(dims_ == 3 ? i[2] : slice_) * d_.slice_pitch;
    read_texel(d_, reinterpret_cast<const uint8_t*>(uintptr_t(d_.base)) + offset, integers_, out);
  }

  // Texel-space position of coordinate k (normalized coordinates scaled, wrapped first
  // so that large coordinates keep their fraction).
  float position(uint32_t k, float x) const {
    if (!normalized_) return x;
    uint32_t mode = d_.address_mode[k];
    if (mode == kWrap)
      x -= __builtin_floorf(x);
    else if (mode == kMirror)
      x -= 2 * __builtin_floorf(x * 0.5f);
    return x * float(extent_[k]);
  }

  int64_t address(uint32_t k, int64_t i) const {
    return resolve(i, extent_[k], d_.address_mode[k], normalized_);
  }

  Footprint footprint(const float* x) const {
    Footprint f{};
    for (uint32_t k = 0; k < dims_; ++k) {
      float ub = position(k, x[k]) - 0.5f;
      int64_t i = floor_to_index(ub);
      float frac = __builtin_isfinite(ub) ? ub - __builtin_floorf(ub) : 0.0f;
      f.weight[k] =
          __builtin_nearbyintf(frac * 256.0f) / 256.0f; // 9-bit fixed point, 8 fractional bits
      f.index[k][0] = address(k, i);
      f.index[k][1] = address(k, i + 1);
    }
    return f;
  }

  void point(const float* x, uint32_t out[4]) const {
    int64_t i[3] = {0, 0, 0};
    for (uint32_t k = 0; k < dims_; ++k)
      i[k] = address(k, floor_to_index(position(k, x[k])));
    texel(i, out);
  }

  void linear(const float* x, uint32_t out[4]) const {
    Footprint f = footprint(x);
    float sum[4] = {0, 0, 0, 0};
    for (uint32_t corner = 0; corner < (1u << dims_); ++corner) {
      int64_t i[3] = {0, 0, 0};
      float w = 1.0f;
      for (uint32_t k = 0; k < dims_; ++k) {
        bool upper = (corner >> k) & 1;
        i[k] = f.index[k][upper];
        w *= upper ? f.weight[k] : 1.0f - f.weight[k];
      }
      uint32_t t[4];
      texel(i, t);
      for (int c = 0; c < 4; ++c)
        sum[c] += w * bits<float>(t[c]);
    }
    for (int c = 0; c < 4; ++c)
      out[c] = bits<uint32_t>(sum[c]);
  }

  // tld4: component c of the 2x2 footprint, counter-clockwise from the lower left.
  void gather(const float* x, uint32_t c, uint32_t out[4]) const {
    Footprint f = footprint(x);
    const int order[4][2] = {{0, 1}, {1, 1}, {1, 0}, {0, 0}};
    for (int n = 0; n < 4; ++n) {
      int64_t i[3] = {f.index[0][order[n][0]], f.index[1][order[n][1]], 0};
      uint32_t t[4];
      texel(i, t);
      out[n] = t[c];
    }
  }

  // Integer texel coordinates: no filtering; address modes as for unnormalized ones.
  void fetch(const int32_t* x, uint32_t out[4]) const {
    int64_t i[3] = {0, 0, 0};
    bool linear_resource = d_.resource_type == kResourceLinear;
    for (uint32_t k = 0; k < dims_; ++k) {
      if (linear_resource) { // tex1Dfetch: outside the buffer reads zero
        if (x[k] < 0 || int64_t(x[k]) >= extent_[k]) {
          for (int c = 0; c < 4; ++c)
            out[c] = 0;
          return;
        }
        i[k] = x[k];
        continue;
      }
      i[k] = resolve(x[k], extent_[k], d_.address_mode[k], false);
    }
    texel(i, out);
  }

private:
  const MimicTextureDescriptor& d_;
  uint32_t dims_;
  bool integers_;
  bool normalized_;
  int64_t extent_[3];
  int64_t slice_;
};

// sust.p: word (f32 for float and normalized formats, an integer otherwise) in the
// channel's encoding.
inline uint32_t encode_channel(const MimicTextureDescriptor& d, uint32_t word) {
  unsigned width = d.channel_bytes * 8;
  switch (d.format) {
  case kFloat:
    return word;
  case kHalf:
    return float_to_half(bits<float>(word));
  case kUnormInt8:
  case kUnormInt16: {
    float f = __builtin_fminf(__builtin_fmaxf(bits<float>(word), 0.0f), 1.0f); // NaN -> 0
    return uint32_t(__builtin_nearbyintf(f * float((1u << width) - 1)));
  }
  case kSnormInt8:
  case kSnormInt16: {
    float f = __builtin_fminf(__builtin_fmaxf(bits<float>(word), -1.0f), 1.0f);
    return uint32_t(int32_t(__builtin_nearbyintf(f * float((1u << (width - 1)) - 1))));
  }
  default:
    return word;
  }
}

// tex / tld4 on a valid texture descriptor.
inline uint32_t tex_fetch(const MimicTextureDescriptor& d, uint32_t op, const uint32_t* coords,
                          int32_t layer, uint32_t* out) {
  uint32_t dims = op & kTexDimsMask;
  Sampler s(d, dims, op & kTexLayered ? layer : -1);
  if (op & kTexIntegerCoords) {
    int32_t x[3] = {int32_t(coords[0]), int32_t(coords[1]), int32_t(coords[2])};
    s.fetch(x, out);
    return kTexOk;
  }
  float x[3] = {bits<float>(coords[0]), bits<float>(coords[1]), bits<float>(coords[2])};
  if (op & kTexGather)
    s.gather(x, (op >> kTexGatherShift) & 3, out);
  else if (d.filter_mode == kFilterLinear && !s.integers() && d.resource_type != kResourceLinear)
    s.linear(x, out);
  else
    s.point(x, out);
  return kTexOk;
}

// Where a .trap surface access fell outside the surface (for the backend's message).
struct OutsideSurface {
  int64_t x, y, z, access; // byte x, row, slice, bytes accessed
  int64_t row_bytes, rows, slices;
};

// suld / sust on a valid surface descriptor; kTexOutOfRange (with `outside` filled in) for a
// .trap access outside the surface.
inline uint32_t surface_access(const MimicTextureDescriptor& d, uint32_t op, const int32_t* coords,
                               int32_t layer, uint32_t bytes, void* data, OutsideSurface* outside) {
  bool store = op & kSurfStore, formatted = op & kSurfFormatted;
  uint32_t dims = op & kTexDimsMask;
  auto mode = SurfaceMode((op >> kSurfModeShift) & 3);
  int64_t row_bytes = int64_t(d.width) * d.element_bytes;
  int64_t access = formatted ? d.element_bytes : bytes;
  int64_t x = formatted ? int64_t(coords[0]) * d.element_bytes : coords[0];
  int64_t y = dims >= 2 ? coords[1] : 0;
  int64_t z = dims == 3 ? coords[2] : (op & kTexLayered) ? layer : 0;
  int64_t rows = d.height, slices = d.depth;
  auto* bytes_of_data = static_cast<uint8_t*>(data);
  bool inside = x >= 0 && x + access <= row_bytes && y >= 0 && y < rows && z >= 0 && z < slices;
  if (!inside) {
    if (mode == SurfaceMode::Zero) {
      if (!store)
        for (uint32_t i = 0; i < bytes; ++i)
          bytes_of_data[i] = 0;
      return kTexOk;
    }
    if (mode == SurfaceMode::Trap) {
      if (outside) *outside = {x, y, z, access, row_bytes, rows, slices};
      return kTexOutOfRange;
    }
    x = clamp_to<int64_t>(x, 0, max_of<int64_t>(row_bytes - access, 0));
    y = clamp_to<int64_t>(y, 0, rows - 1);
    z = clamp_to<int64_t>(z, 0, slices - 1);
  }
  uint8_t* at = reinterpret_cast<uint8_t*>(uintptr_t(d.base)) + z * d.slice_pitch + y * d.pitch + x;
  if (!formatted) {
    if (store)
      __builtin_memcpy(at, data, bytes);
    else
      __builtin_memcpy(data, at, bytes);
    return kTexOk;
  }
  // sust.p: the source's words are the channels r, g, b, a; channels it lacks keep their value.
  const auto* words = static_cast<const uint32_t*>(data);
  for (uint32_t c = 0; c < d.channels && c < bytes / 4; ++c)
    store_channel(at + c * d.channel_bytes, encode_channel(d, words[c]), d.channel_bytes);
  return kTexOk;
}

// The channel types and orders are OpenCL's (CLK_*), as PTX defines these queries.
inline uint64_t channel_data_type(const MimicTextureDescriptor& d, bool integers) {
  switch (d.format) {
  case kFloat:
    return 0x10DE;
  case kHalf:
    return 0x10DD;
  case kSignedInt8:
    return integers ? 0x10D7 : 0x10D0;
  case kSignedInt16:
    return integers ? 0x10D8 : 0x10D1;
  case kSignedInt32:
    return 0x10D9;
  case kUnsignedInt8:
    return integers ? 0x10DA : 0x10D2;
  case kUnsignedInt16:
    return integers ? 0x10DB : 0x10D3;
  case kUnsignedInt32:
    return 0x10DC;
  case kSnormInt8:
    return 0x10D0;
  case kSnormInt16:
    return 0x10D1;
  case kUnormInt8:
    return 0x10D2;
  case kUnormInt16:
    return 0x10D3;
  default:
    return 0;
  }
}

// PTX's address mode enum: wrap, mirror, clamp_ogl, clamp_to_edge, clamp_to_border.
inline uint64_t ptx_address_mode(uint32_t mode) {
  switch (mode) {
  case kWrap:
    return 0;
  case kMirror:
    return 1;
  case kBorder:
    return 4;
  default:
    return 3;
  }
}

// txq / suq on a valid descriptor of the kind the instruction expects.
inline uint32_t texture_query(const MimicTextureDescriptor& d, bool surface, uint32_t what,
                              uint64_t* out) {
  bool integers =
      surface ? !is_float_format(d.format) && !is_normalized_format(d.format) : reads_integers(d);
  switch (TextureQuery(what)) {
  case TextureQuery::Width:
    *out = d.width;
    break;
  case TextureQuery::Height:
    *out = d.height;
    break;
  case TextureQuery::Depth:
    *out = d.depth;
    break;
  case TextureQuery::ChannelDataType:
    *out = channel_data_type(d, integers);
    break;
  case TextureQuery::ChannelOrder: // CLK_R, CLK_RG, CLK_RGBA
    *out = d.channels == 1 ? 0x10B0 : d.channels == 2 ? 0x10B2 : 0x10B5;
    break;
  case TextureQuery::NormalizedCoords:
    *out = (d.flags & kFlagNormalizedCoords) ? 1 : 0;
    break;
  case TextureQuery::FilterMode:
    *out = d.filter_mode == kFilterLinear ? 1 : 0;
    break;
  case TextureQuery::AddrMode0:
  case TextureQuery::AddrMode1:
  case TextureQuery::AddrMode2:
    *out = ptx_address_mode(d.address_mode[what - uint32_t(TextureQuery::AddrMode0)]);
    break;
  case TextureQuery::NumMipmapLevels:
    *out = 1;
    break;
  default:
    *out = 0;
    break;
  }
  return kTexOk;
}

} // namespace mimic::texture_helpers
