// libmimic_amdgpu_compiler.so: AMDGPU code generation (compile.cpp) behind one C entry point,
// the only symbol the library exports (compiler_plugin.map).
#include "backends/amdgpu/compiler.h"
#include "runtime/program.h"

extern "C" __attribute__((visibility("default"))) const mimic::amdgpu::CompilerPlugin*
mimic_amdgpu_compiler_plugin() {
  static const mimic::amdgpu::CompilerPlugin plugin{
      mimic::amdgpu::kCompilerPluginVersion, sizeof(mimic::runtime::Program),
      sizeof(mimic::amdgpu::CodeObject), &mimic::amdgpu::compile_code_object};
  return &plugin;
}
