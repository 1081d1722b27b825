// The AMDGPU texture and surface helpers (texture_device.cpp, compiled to bitcode at build
// time) linked into a lowered module that calls them.
#pragma once

#include "support/error.h"

namespace llvm {
class Module;
}

namespace mimic::amdgpu {

// Links the helpers `m` declares (mimic_tex_fetch, mimic_surface_access,
// mimic_texture_query) into it as internal functions, for the optimiser to inline. Nothing
// to do for a module that declares none. CUDA_ERROR_NOT_SUPPORTED when this build has no
// helper bitcode (no clang of LLVM's version at build time).
Status link_texture_helpers(llvm::Module& m, const std::string& origin);

} // namespace mimic::amdgpu
