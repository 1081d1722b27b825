// Texture and surface instructions on the CPU: the helpers of codegen/texture_abi.h.
// They read the descriptor a handle points to (runtime/texture.h) and follow CUDA's
// texture fetching rules: normalized or element coordinates, the address modes, point and
// linear filtering with the texture unit's 9-bit weights (8 fractional bits), integer or
// normalized-float reads, half and sRGB formats.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "codegen/texture_abi.h"
#include "runtime/texture.h"

namespace mimic::codegen {

namespace {

using runtime::kFlagNormalizedCoords;
using runtime::kFlagReadAsInteger;
using runtime::kFlagSrgb;
using runtime::kSurfaceMagic;
using runtime::kTextureMagic;

// A handle that is not a live descriptor of the kind the instruction needs: say so once
// per kind of mistake; the thread traps.
const MimicTextureDescriptor* descriptor(const void* handle, uint32_t magic, const char* instruction) {
  auto address = reinterpret_cast<uintptr_t>(handle);
  const auto* d = static_cast<const MimicTextureDescriptor*>(handle);
  if (address >= 4096 && address % alignof(MimicTextureDescriptor) == 0 && d->magic == magic &&
      d->version == runtime::kDescriptorVersion)
    return d;
  static std::atomic<bool> warned[2];
  bool surface = magic == kSurfaceMagic;
  if (!warned[surface].exchange(true))
    std::fprintf(stderr,
                 "mimic: %s: handle 0x%llx is not a %s object (the thread traps; the launch fails with "
                 "CUDA_ERROR_LAUNCH_FAILED)\n",
                 instruction, (unsigned long long)address, surface ? "surface" : "texture");
  return nullptr;
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0x1f)
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) // zero or subnormal: exact in float
    return (sign ? -1.0f : 1.0f) * std::ldexp(float(mantissa), -24);
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t float_to_half(float f) { // round to nearest even
  return std::bit_cast<uint16_t>(static_cast<_Float16>(f));
}

bool is_float_format(uint32_t f) { return f == CU_AD_FORMAT_FLOAT || f == CU_AD_FORMAT_HALF; }

bool is_normalized_format(uint32_t f) {
  return f == CU_AD_FORMAT_UNORM_INT8X1 || f == CU_AD_FORMAT_UNORM_INT16X1 || f == CU_AD_FORMAT_SNORM_INT8X1 ||
         f == CU_AD_FORMAT_SNORM_INT16X1;
}

bool is_signed_format(uint32_t f) {
  return f == CU_AD_FORMAT_SIGNED_INT8 || f == CU_AD_FORMAT_SIGNED_INT16 || f == CU_AD_FORMAT_SIGNED_INT32 ||
         f == CU_AD_FORMAT_SNORM_INT8X1 || f == CU_AD_FORMAT_SNORM_INT16X1;
}

// Whether reads return integers (otherwise f32).
bool reads_integers(const MimicTextureDescriptor& d) {
  if (is_float_format(d.format) || is_normalized_format(d.format))
    return false;
  return (d.flags & kFlagReadAsInteger) || d.channel_bytes == 4;
}

float srgb_to_linear(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }

// Channel c of the element at p, as f32 bits or an integer.
uint32_t read_channel(const MimicTextureDescriptor& d, const uint8_t* p, uint32_t c, bool integers) {
  const uint8_t* at = p + c * d.channel_bytes;
  if (d.format == CU_AD_FORMAT_FLOAT) {
    uint32_t bits;
    std::memcpy(&bits, at, 4);
    return bits;
  }
  if (d.format == CU_AD_FORMAT_HALF) {
    uint16_t h;
    std::memcpy(&h, at, 2);
    return std::bit_cast<uint32_t>(half_to_float(h));
  }
  uint32_t raw = 0;
  std::memcpy(&raw, at, d.channel_bytes);
  unsigned bits = d.channel_bytes * 8;
  bool sign = is_signed_format(d.format);
  if (sign && bits < 32 && (raw >> (bits - 1)) & 1)
    raw |= ~0u << bits;
  if (integers)
    return raw;
  float v;
  if (sign)
    v = std::max(float(int32_t(raw)) / float((1u << (bits - 1)) - 1), -1.0f);
  else
    v = float(raw) / float(bits == 32 ? 4294967295.0 : double((1ull << bits) - 1));
  if ((d.flags & kFlagSrgb) && c < 3)
    v = srgb_to_linear(v);
  return std::bit_cast<uint32_t>(v);
}

// Channels of an element; channels an element lacks read as (0, 0, 0, 1).
void read_texel(const MimicTextureDescriptor& d, const uint8_t* p, bool integers, uint32_t out[4]) {
  for (uint32_t c = 0; c < 4; ++c) {
    if (c < d.channels)
      out[c] = read_channel(d, p, c, integers);
    else
      out[c] = c < 3 ? 0 : integers ? 1 : std::bit_cast<uint32_t>(1.0f);
  }
}

void border_texel(const MimicTextureDescriptor& d, bool integers, uint32_t out[4]) {
  for (int c = 0; c < 4; ++c)
    out[c] = integers ? uint32_t(int32_t(d.border_color[c])) : std::bit_cast<uint32_t>(d.border_color[c]);
}

int64_t floor_to_index(float u) {
  if (!(u == u))
    return 0;
  float f = std::floor(u);
  return f < -1e9f ? -1000000000 : f > 1e9f ? 1000000000 : int64_t(f);
}

// Texel index i along an extent n under an address mode, or -1 for the border.
int64_t resolve(int64_t i, int64_t n, uint32_t mode, bool normalized) {
  if (!normalized && (mode == CU_TR_ADDRESS_MODE_WRAP || mode == CU_TR_ADDRESS_MODE_MIRROR))
    mode = CU_TR_ADDRESS_MODE_CLAMP;
  switch (mode) {
  case CU_TR_ADDRESS_MODE_WRAP:
    return ((i % n) + n) % n;
  case CU_TR_ADDRESS_MODE_MIRROR: {
    int64_t m = ((i % (2 * n)) + 2 * n) % (2 * n);
    return m < n ? m : 2 * n - 1 - m;
  }
  case CU_TR_ADDRESS_MODE_BORDER:
    return i < 0 || i >= n ? -1 : i;
  default:
    return i < 0 ? 0 : i >= n ? n - 1 : i;
  }
}

struct Footprint {
  int64_t index[3][2];  // per dimension: the lower and upper texel (after addressing)
  float weight[3];      // per dimension: the upper texel's weight
};

class Sampler {
public:
  Sampler(const MimicTextureDescriptor& d, uint32_t dims, int32_t layer)
      : d_(d), dims_(dims), integers_(reads_integers(d)), normalized_(d.flags & kFlagNormalizedCoords) {
    extent_[0] = d.width, extent_[1] = d.height, extent_[2] = d.depth;
    slice_ = 0;
    if (layer >= 0 || dims < 3) // layered: the layer is the slice; clamped to the layers there are
      slice_ = layer < 0 ? 0 : std::min<int64_t>(layer, int64_t(d.depth) - 1);
  }
  bool integers() const { return integers_; }

  // The element at resolved indices, or the border.
  void texel(const int64_t* i, uint32_t out[4]) const {
    for (uint32_t k = 0; k < dims_; ++k)
      if (i[k] < 0)
        return border_texel(d_, integers_, out);
    uint64_t offset = uint64_t(i[0]) * d_.element_bytes;
    if (dims_ >= 2)
      offset += uint64_t(i[1]) * d_.pitch;
    offset += uint64_t(dims_ == 3 ? i[2] : slice_) * d_.slice_pitch;
    read_texel(d_, reinterpret_cast<const uint8_t*>(uintptr_t(d_.base)) + offset, integers_, out);
  }

  // Texel-space position of coordinate k (normalized coordinates scaled, wrapped first
  // so that large coordinates keep their fraction).
  float position(uint32_t k, float x) const {
    if (!normalized_)
      return x;
    uint32_t mode = d_.address_mode[k];
    if (mode == CU_TR_ADDRESS_MODE_WRAP)
      x -= std::floor(x);
    else if (mode == CU_TR_ADDRESS_MODE_MIRROR)
      x -= 2 * std::floor(x * 0.5f);
    return x * float(extent_[k]);
  }

  int64_t address(uint32_t k, int64_t i) const { return resolve(i, extent_[k], d_.address_mode[k], normalized_); }

  Footprint footprint(const float* x) const {
    Footprint f{};
    for (uint32_t k = 0; k < dims_; ++k) {
      float ub = position(k, x[k]) - 0.5f;
      int64_t i = floor_to_index(ub);
      float frac = std::isfinite(ub) ? ub - std::floor(ub) : 0.0f;
      f.weight[k] = std::nearbyint(frac * 256.0f) / 256.0f; // 9-bit fixed point, 8 fractional bits
      f.index[k][0] = address(k, i);
      f.index[k][1] = address(k, i + 1);
    }
    return f;
  }

  void point(const float* x, uint32_t out[4]) const {
    int64_t i[3];
    for (uint32_t k = 0; k < dims_; ++k)
      i[k] = address(k, floor_to_index(position(k, x[k])));
    texel(i, out);
  }

  void linear(const float* x, uint32_t out[4]) const {
    Footprint f = footprint(x);
    float sum[4] = {0, 0, 0, 0};
    for (uint32_t corner = 0; corner < (1u << dims_); ++corner) {
      int64_t i[3];
      float w = 1.0f;
      for (uint32_t k = 0; k < dims_; ++k) {
        bool upper = (corner >> k) & 1;
        i[k] = f.index[k][upper];
        w *= upper ? f.weight[k] : 1.0f - f.weight[k];
      }
      uint32_t t[4];
      texel(i, t);
      for (int c = 0; c < 4; ++c)
        sum[c] += w * std::bit_cast<float>(t[c]);
    }
    for (int c = 0; c < 4; ++c)
      out[c] = std::bit_cast<uint32_t>(sum[c]);
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
    int64_t i[3];
    bool linear_resource = d_.resource_type == CU_RESOURCE_TYPE_LINEAR;
    for (uint32_t k = 0; k < dims_; ++k) {
      if (linear_resource) { // tex1Dfetch: outside the buffer reads zero
        if (x[k] < 0 || int64_t(x[k]) >= extent_[k]) {
          std::memset(out, 0, 16);
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

float channel_from_word(uint32_t word) { return std::bit_cast<float>(word); }

// sust.p: word (f32 for float and normalized formats, an integer otherwise) in the
// channel's encoding.
uint32_t encode_channel(const MimicTextureDescriptor& d, uint32_t word) {
  unsigned bits = d.channel_bytes * 8;
  switch (d.format) {
  case CU_AD_FORMAT_FLOAT:
    return word;
  case CU_AD_FORMAT_HALF:
    return float_to_half(channel_from_word(word));
  case CU_AD_FORMAT_UNORM_INT8X1:
  case CU_AD_FORMAT_UNORM_INT16X1: {
    float f = std::fmin(std::fmax(channel_from_word(word), 0.0f), 1.0f); // NaN -> 0
    return uint32_t(std::nearbyint(f * float((1u << bits) - 1)));
  }
  case CU_AD_FORMAT_SNORM_INT8X1:
  case CU_AD_FORMAT_SNORM_INT16X1: {
    float f = std::fmin(std::fmax(channel_from_word(word), -1.0f), 1.0f);
    return uint32_t(int32_t(std::nearbyint(f * float((1u << (bits - 1)) - 1))));
  }
  default:
    return word;
  }
}

} // namespace

extern "C" uint32_t mimic_tex_fetch(const void* handle, uint32_t op, const uint32_t* coords, int32_t layer,
                                    uint32_t* out) {
  const MimicTextureDescriptor* d = descriptor(handle, kTextureMagic, op & kTexGather ? "tld4" : "tex");
  if (!d)
    return kTexBadHandle;
  uint32_t dims = op & kTexDimsMask;
  Sampler s(*d, dims, op & kTexLayered ? layer : -1);
  if (op & kTexIntegerCoords) {
    int32_t x[3];
    std::memcpy(x, coords, sizeof x);
    s.fetch(x, out);
    return kTexOk;
  }
  float x[3];
  std::memcpy(x, coords, sizeof x);
  if (op & kTexGather)
    s.gather(x, (op >> kTexGatherShift) & 3, out);
  else if (d->filter_mode == CU_TR_FILTER_MODE_LINEAR && !s.integers() &&
           d->resource_type != CU_RESOURCE_TYPE_LINEAR)
    s.linear(x, out);
  else
    s.point(x, out);
  return kTexOk;
}

extern "C" uint32_t mimic_surface_access(const void* handle, uint32_t op, const int32_t* coords, int32_t layer,
                                         uint32_t bytes, void* data) {
  bool store = op & kSurfStore, formatted = op & kSurfFormatted;
  const MimicTextureDescriptor* d = descriptor(handle, kSurfaceMagic, store ? "sust" : "suld");
  if (!d)
    return kTexBadHandle;
  uint32_t dims = op & kTexDimsMask;
  auto mode = SurfaceMode((op >> kSurfModeShift) & 3);
  int64_t row_bytes = int64_t(d->width) * d->element_bytes;
  int64_t access = formatted ? d->element_bytes : bytes;
  int64_t x = formatted ? int64_t(coords[0]) * d->element_bytes : coords[0];
  int64_t y = dims >= 2 ? coords[1] : 0;
  int64_t z = dims == 3 ? coords[2] : (op & kTexLayered) ? layer : 0;
  int64_t rows = d->height, slices = d->depth;
  bool inside = x >= 0 && x + access <= row_bytes && y >= 0 && y < rows && z >= 0 && z < slices;
  if (!inside) {
    if (mode == SurfaceMode::Zero) {
      if (!store)
        std::memset(data, 0, bytes);
      return kTexOk;
    }
    if (mode == SurfaceMode::Trap) {
      static std::atomic<bool> warned;
      if (!warned.exchange(true))
        std::fprintf(stderr,
                     "mimic: %s.trap outside the surface: byte x %lld, y %lld, z %lld for %lld bytes (the surface "
                     "is %lld bytes x %lld x %lld; the thread traps)\n",
                     store ? "sust" : "suld", (long long)x, (long long)y, (long long)z, (long long)access,
                     (long long)row_bytes, (long long)rows, (long long)slices);
      return kTexOutOfRange;
    }
    x = std::clamp<int64_t>(x, 0, std::max<int64_t>(row_bytes - access, 0));
    y = std::clamp<int64_t>(y, 0, rows - 1);
    z = std::clamp<int64_t>(z, 0, slices - 1);
  }
  uint8_t* at = reinterpret_cast<uint8_t*>(uintptr_t(d->base)) + z * d->slice_pitch + y * d->pitch + x;
  if (!formatted) {
    if (store)
      std::memcpy(at, data, bytes);
    else
      std::memcpy(data, at, bytes);
    return kTexOk;
  }
  // sust.p: the source's words are the channels r, g, b, a; channels it lacks keep their value.
  const auto* words = static_cast<const uint32_t*>(data);
  for (uint32_t c = 0; c < d->channels && c < bytes / 4; ++c) {
    uint32_t encoded = encode_channel(*d, words[c]);
    std::memcpy(at + c * d->channel_bytes, &encoded, d->channel_bytes);
  }
  return kTexOk;
}

extern "C" uint32_t mimic_texture_query(const void* handle, uint32_t surface, uint32_t what, uint64_t* out) {
  const MimicTextureDescriptor* d = descriptor(handle, surface ? kSurfaceMagic : kTextureMagic, surface ? "suq" : "txq");
  if (!d)
    return kTexBadHandle;
  bool integers = surface ? !is_float_format(d->format) && !is_normalized_format(d->format) : reads_integers(*d);
  // The channel types and orders are OpenCL's (CLK_*), as PTX defines these queries.
  auto data_type = [&]() -> uint64_t {
    switch (d->format) {
    case CU_AD_FORMAT_FLOAT:
      return 0x10DE;
    case CU_AD_FORMAT_HALF:
      return 0x10DD;
    case CU_AD_FORMAT_SIGNED_INT8:
      return integers ? 0x10D7 : 0x10D0;
    case CU_AD_FORMAT_SIGNED_INT16:
      return integers ? 0x10D8 : 0x10D1;
    case CU_AD_FORMAT_SIGNED_INT32:
      return 0x10D9;
    case CU_AD_FORMAT_UNSIGNED_INT8:
      return integers ? 0x10DA : 0x10D2;
    case CU_AD_FORMAT_UNSIGNED_INT16:
      return integers ? 0x10DB : 0x10D3;
    case CU_AD_FORMAT_UNSIGNED_INT32:
      return 0x10DC;
    case CU_AD_FORMAT_SNORM_INT8X1:
      return 0x10D0;
    case CU_AD_FORMAT_SNORM_INT16X1:
      return 0x10D1;
    case CU_AD_FORMAT_UNORM_INT8X1:
      return 0x10D2;
    case CU_AD_FORMAT_UNORM_INT16X1:
      return 0x10D3;
    default:
      return 0;
    }
  };
  // PTX's address mode enum: wrap, mirror, clamp_ogl, clamp_to_edge, clamp_to_border.
  auto addr_mode = [&](int k) -> uint64_t {
    switch (d->address_mode[k]) {
    case CU_TR_ADDRESS_MODE_WRAP:
      return 0;
    case CU_TR_ADDRESS_MODE_MIRROR:
      return 1;
    case CU_TR_ADDRESS_MODE_BORDER:
      return 4;
    default:
      return 3;
    }
  };
  switch (TextureQuery(what)) {
  case TextureQuery::Width:
    *out = d->width;
    break;
  case TextureQuery::Height:
    *out = d->height;
    break;
  case TextureQuery::Depth:
    *out = d->depth;
    break;
  case TextureQuery::ChannelDataType:
    *out = data_type();
    break;
  case TextureQuery::ChannelOrder: // CLK_R, CLK_RG, CLK_RGBA
    *out = d->channels == 1 ? 0x10B0 : d->channels == 2 ? 0x10B2 : 0x10B5;
    break;
  case TextureQuery::NormalizedCoords:
    *out = (d->flags & kFlagNormalizedCoords) ? 1 : 0;
    break;
  case TextureQuery::FilterMode:
    *out = d->filter_mode == CU_TR_FILTER_MODE_LINEAR ? 1 : 0;
    break;
  case TextureQuery::AddrMode0:
  case TextureQuery::AddrMode1:
  case TextureQuery::AddrMode2:
    *out = addr_mode(int(what - uint32_t(TextureQuery::AddrMode0)));
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

} // namespace mimic::codegen
