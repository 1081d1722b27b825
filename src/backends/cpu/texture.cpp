// Texture and surface instructions on the CPU: the helpers of codegen/texture_abi.h, whose
// sampling rules are backends/texture_helpers.h (shared with the AMD GPU backend). Here: what
// a refusal means on the CPU (a message on stderr, once per kind of mistake; the thread
// traps and the launch fails with CUDA_ERROR_LAUNCH_FAILED).
#include <atomic>
#include <cstdio>

#include "backends/texture_helpers.h"

namespace mimic::codegen {

namespace {

using runtime::kSurfaceMagic;
using runtime::kTextureMagic;

// A handle that is not a live descriptor of the kind the instruction needs: say so once
// per kind of mistake; the thread traps.
const MimicTextureDescriptor* descriptor(const void* handle, uint32_t magic, const char* instruction) {
  if (const MimicTextureDescriptor* d = texture_helpers::descriptor_at(handle, magic)) return d;
  static std::atomic<bool> warned[2];
  bool surface = magic == kSurfaceMagic;
  if (!warned[surface].exchange(true))
    std::fprintf(
        stderr,
        "mimic: %s: handle 0x%llx is not a %s object (the thread traps; the launch fails with "
        "CUDA_ERROR_LAUNCH_FAILED)\n",
        instruction, (unsigned long long)reinterpret_cast<uintptr_t>(handle),
        surface ? "surface" : "texture");
  return nullptr;
}

} // namespace

extern "C" uint32_t mimic_tex_fetch(const void* handle, uint32_t op, const uint32_t* coords, int32_t layer,
                                    uint32_t* out) {
  const MimicTextureDescriptor* d = descriptor(handle, kTextureMagic, op & kTexGather ? "tld4" : "tex");
  if (!d)
    return kTexBadHandle;
  return texture_helpers::tex_fetch(*d, op, coords, layer, out);
}

extern "C" uint32_t mimic_surface_access(const void* handle, uint32_t op, const int32_t* coords, int32_t layer,
                                         uint32_t bytes, void* data) {
  bool store = op & kSurfStore;
  const MimicTextureDescriptor* d = descriptor(handle, kSurfaceMagic, store ? "sust" : "suld");
  if (!d)
    return kTexBadHandle;
  texture_helpers::OutsideSurface o{};
  uint32_t result = texture_helpers::surface_access(*d, op, coords, layer, bytes, data, &o);
  if (result == kTexOutOfRange) {
    static std::atomic<bool> warned;
    if (!warned.exchange(true))
      std::fprintf(stderr,
                   "mimic: %s.trap outside the surface: byte x %lld, y %lld, z %lld for %lld bytes "
                   "(the surface "
                   "is %lld bytes x %lld x %lld; the thread traps)\n",
                   store ? "sust" : "suld", (long long)o.x, (long long)o.y, (long long)o.z,
                   (long long)o.access, (long long)o.row_bytes, (long long)o.rows,
                   (long long)o.slices);
  }
  return result;
}

extern "C" uint32_t mimic_texture_query(const void* handle, uint32_t surface, uint32_t what, uint64_t* out) {
  const MimicTextureDescriptor* d = descriptor(handle, surface ? kSurfaceMagic : kTextureMagic, surface ? "suq" : "txq");
  if (!d)
    return kTexBadHandle;
  return texture_helpers::texture_query(*d, surface, what, out);
}

} // namespace mimic::codegen
