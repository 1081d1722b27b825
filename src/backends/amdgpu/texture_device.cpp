// The texture and surface helpers of codegen/texture_abi.h on AMD GPUs: the sampling rules of
// backends/texture_helpers.h (the CPU's too), compiled at build time by clang for
// amdgcn-amd-amdhsa, freestanding, into LLVM bitcode (codegen.cmake) that compile.cpp links
// into each module calling a helper and makes internal. Handles and the descriptors' data
// are device addresses (runtime/texture.cpp puts descriptors into device memory). A refusal
// only returns its code: the generated code writes the device log's trap record and traps.
#include "backends/texture_helpers.h"

using namespace mimic;
using codegen::kTexBadHandle;

extern "C" uint32_t mimic_tex_fetch(const void* handle, uint32_t op, const uint32_t* coords,
                                    int32_t layer, uint32_t* out) {
  const MimicTextureDescriptor* d = texture_helpers::descriptor_at(handle, runtime::kTextureMagic);
  if (!d) return kTexBadHandle;
  return texture_helpers::tex_fetch(*d, op, coords, layer, out);
}

extern "C" uint32_t mimic_surface_access(const void* handle, uint32_t op, const int32_t* coords,
                                         int32_t layer, uint32_t bytes, void* data) {
  const MimicTextureDescriptor* d = texture_helpers::descriptor_at(handle, runtime::kSurfaceMagic);
  if (!d) return kTexBadHandle;
  return texture_helpers::surface_access(*d, op, coords, layer, bytes, data, nullptr);
}

extern "C" uint32_t mimic_texture_query(const void* handle, uint32_t surface, uint32_t what,
                                        uint64_t* out) {
  const MimicTextureDescriptor* d = texture_helpers::descriptor_at(
      handle, surface ? runtime::kSurfaceMagic : runtime::kTextureMagic);
  if (!d) return kTexBadHandle;
  return texture_helpers::texture_query(*d, surface, what, out);
}
