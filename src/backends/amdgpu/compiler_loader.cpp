#include <cstdlib>
#include <cuda.h>

#include "backends/amdgpu/compiler.h"
#include "runtime/program.h"

#ifdef MIMIC_AMDGPU_COMPILER_PLUGIN
#include <dlfcn.h>
#include <filesystem>
#include <vector>
#endif

namespace mimic::amdgpu {

bool compiler_built() {
#ifdef MIMIC_AMDGPU_COMPILER_PLUGIN
  return true;
#else
  return false;
#endif
}

#ifdef MIMIC_AMDGPU_COMPILER_PLUGIN
namespace {

// Where the plugin may be: beside this code's file (libcuda.so.1 in build/lib or an install's
// lib), or in ../lib from it (a program in build/bin linking the backend statically).
std::vector<std::string> plugin_candidates() {
  if (const char* env = std::getenv("MIMIC_AMDGPU_COMPILER"); env && *env) return {env};
  std::vector<std::string> out;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&plugin_candidates), &info) && info.dli_fname) {
    std::filesystem::path dir = std::filesystem::path(info.dli_fname).parent_path();
    out.push_back((dir / MIMIC_AMDGPU_COMPILER_PLUGIN).string());
    out.push_back((dir.parent_path() / "lib" / MIMIC_AMDGPU_COMPILER_PLUGIN).string());
  }
  out.push_back(MIMIC_AMDGPU_COMPILER_PLUGIN); // the loader's search path
  return out;
}

Result<const CompilerPlugin*> load_plugin() {
  std::string tried;
  for (const std::string& path : plugin_candidates()) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      tried += "\n  " + (e ? std::string(e) : path + ": cannot be loaded");
      continue;
    }
    using Entry = const CompilerPlugin* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, kCompilerPluginEntry));
    const CompilerPlugin* plugin = entry ? entry() : nullptr;
    if (!plugin || plugin->version != kCompilerPluginVersion ||
        plugin->program_size != sizeof(runtime::Program) ||
        plugin->code_object_size != sizeof(CodeObject) || !plugin->compile) {
      tried += "\n  " + path + ": not the AMDGPU code generator of this build of Mimic";
      continue;
    }
    return plugin;
  }
  return Error("the AMDGPU code generator (" + std::string(MIMIC_AMDGPU_COMPILER_PLUGIN) +
                   ") cannot be loaded; tried:" + tried,
               CUDA_ERROR_NOT_SUPPORTED);
}

} // namespace

Result<CodeObject> compile_with_plugin(const runtime::Program& program, std::string_view gfx,
                                       const std::map<std::string, void*, std::less<>>* globals) {
  // Never destroyed; loaded once (the plugin stays loaded).
  static const Result<const CompilerPlugin*>* plugin =
      new Result<const CompilerPlugin*>(load_plugin());
  if (!*plugin)
    return Error(program.origin + ": " + plugin->error().message(), plugin->error().code());
  return (**plugin)->compile(program, gfx, globals);
}
#else
Result<CodeObject> compile_with_plugin(const runtime::Program& program, std::string_view gfx,
                                       const std::map<std::string, void*, std::less<>>*) {
  return Error(program.origin +
                   ": this build of Mimic has no AMDGPU code generator, so kernels cannot run on " +
                   std::string(gfx) +
                   " (build with LLVM 22, its AMDGPU target and lld's libraries)",
               CUDA_ERROR_NOT_SUPPORTED);
}
#endif

} // namespace mimic::amdgpu
