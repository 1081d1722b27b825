// The contract between generated code and the backend's texture and surface helpers
// (lower_texture.cpp calls them; backends/texture_helpers.h implements them, once for the
// CPU and for AMD GPUs). A handle is the device address of a MimicTextureDescriptor
// (runtime/texture_descriptor.h); the helpers check its magic, so a wrong handle ends the
// thread with a trap instead of reading garbage.
#pragma once

#include <stdint.h> // also compiled freestanding for AMD GPUs (backends/texture_helpers.h)

namespace mimic::codegen {

// Bits of the `op` argument of the helpers.
enum TextureOp : uint32_t {
  kTexDimsMask = 3u,           // 1, 2 or 3 coordinates
  kTexLayered = 1u << 2,       // `layer` selects the slice (a1d, a2d)
  kTexIntegerCoords = 1u << 3, // coordinates are .s32 texel indices
  kTexGather = 1u << 4,        // tld4: the component is in bits kTexGatherShift..+1
  kTexGatherShift = 5,
  // Surfaces
  kSurfModeShift = 4, // 0 .trap, 1 .clamp, 2 .zero (2 bits)
  kSurfStore = 1u << 6,
  kSurfFormatted = 1u << 7, // sust.p: x in elements, data converted to the format
};

enum class SurfaceMode : uint32_t { Trap = 0, Clamp = 1, Zero = 2 };

// What a txq/suq asks for.
enum class TextureQuery : uint32_t {
  Width, Height, Depth, ChannelDataType, ChannelOrder, NormalizedCoords, FilterMode,
  AddrMode0, AddrMode1, AddrMode2, NumMipmapLevels,
};

// Helper results: 0 is success; anything else makes the thread trap. The CPU's helpers say
// why on stderr; on a GPU the generated code writes a device log record saying why
// (TextureInstruction, the result, the handle) before it traps.
constexpr uint32_t kTexOk = 0;
constexpr uint32_t kTexBadHandle = 1;
constexpr uint32_t kTexOutOfRange = 2; // a .trap surface access outside the surface

// Which instruction trapped, in a GPU's trap record.
enum class TextureInstruction : uint32_t { Tex, Tld4, Suld, Sust, Txq, Suq };

extern "C" {
// tex / tld4: `coords` holds three 32-bit words (f32 or s32 bits), `out` receives four
// words: f32 bits for textures read as float, integers otherwise.
uint32_t mimic_tex_fetch(const void* handle, uint32_t op, const uint32_t* coords, int32_t layer, uint32_t* out);
// suld / sust: `bytes` bytes to or from `data` at the surface coordinates (x in bytes,
// or in elements when formatted).
uint32_t mimic_surface_access(const void* handle, uint32_t op, const int32_t* coords, int32_t layer, uint32_t bytes,
                              void* data);
// txq / suq: `surface` says which kind of handle the instruction expects.
uint32_t mimic_texture_query(const void* handle, uint32_t surface, uint32_t what, uint64_t* out);
}

} // namespace mimic::codegen
