// AMDGPU code generation as the backend reaches it: through a plugin,
// libmimic_amdgpu_compiler.so, loaded on the first compile. libcuda.so.1 so carries neither
// LLVM's AMDGPU target nor lld, whose static constructors would otherwise run in every CUDA
// process (Mimic's libraries do no work when loaded), and a build without AMDGPU code
// generation simply has no plugin.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "backends/amdgpu/code_object.h"

namespace mimic::amdgpu {

// What the plugin exports (mimic_amdgpu_compiler_plugin()); the sizes guard against a plugin
// from another build.
struct CompilerPlugin {
  unsigned version;
  size_t program_size, code_object_size;
  Result<CodeObject> (*compile)(const runtime::Program& program, std::string_view gfx,
                                const std::map<std::string, void*, std::less<>>* globals);
};
constexpr unsigned kCompilerPluginVersion = 1;
inline constexpr const char* kCompilerPluginEntry = "mimic_amdgpu_compiler_plugin";

// Whether this build made the plugin (it had AMDGPU code generation).
bool compiler_built();

// compile_code_object through the plugin: MIMIC_AMDGPU_COMPILER (a path) when set, else the
// plugin beside the library or program this code is in, or in ../lib from there. Fails with
// CUDA_ERROR_NOT_SUPPORTED saying why when there is none (or the build made none).
Result<CodeObject> compile_with_plugin(const runtime::Program& program, std::string_view gfx,
                                       const std::map<std::string, void*, std::less<>>* globals);

} // namespace mimic::amdgpu
