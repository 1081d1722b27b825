// compile_code_object for builds without AMDGPU code generation (no LLVM, or before
// compile.cpp exists): the HIP binding links and says why kernels cannot run.
#include "backends/amdgpu/code_object.h"

#include <cuda.h>

#include "runtime/program.h"

namespace mimic::amdgpu {

Result<CodeObject> compile_code_object(const runtime::Program& program, std::string_view gfx,
                                       const std::map<std::string, void*, std::less<>>*) {
  return Error(program.origin +
                   ": this build of Mimic has no AMDGPU code generator, so kernels cannot run on " +
                   std::string(gfx) + " (build with LLVM 22 and its AMDGPU target)",
               CUDA_ERROR_NOT_SUPPORTED);
}

} // namespace mimic::amdgpu
