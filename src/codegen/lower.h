// PTX -> LLVM IR, backend-neutral (docs/codegen-plan.md, layer 1).
//
// Each PTX kernel becomes `void @<name>(ptr %params, ptr %state)` describing ONE thread:
// `%params` is the packed argument buffer (runtime::KernelInfo::params), `%state` an
// opaque per-thread block that only intrinsics read. Special registers and the other
// execution-model operations are calls to `@mimic.*` intrinsics, which each backend
// defines. Module-level variables are external globals named as in PTX; the backend binds
// them to the addresses of the runtime module's globals.
//
// What cannot be lowered fails the whole program, naming each kernel with the PTX line of
// the first construct it could not translate.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "runtime/program.h"
#include "support/error.h"

namespace mimic::codegen {

struct LoweredProgram {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::vector<std::string> kernels;  // LLVM function names, in Program::kernels order
  std::vector<std::string> globals;  // external globals the module uses
};

// Intrinsics the lowering emits (each backend defines them):
//   i32 @mimic.sreg(ptr %state, i32 %which)   special registers, `which` from SpecialRegister
enum class SpecialRegister : int {
  TidX, TidY, TidZ, NtidX, NtidY, NtidZ, CtaidX, CtaidY, CtaidZ, NctaidX, NctaidY, NctaidZ,
  LaneId, WarpId, NWarpId, SmId, NSmId, GridIdLo, LanemaskEq, LanemaskLe, LanemaskLt, LanemaskGe,
  LanemaskGt, DynamicSmemSize, TotalSmemSize, Count_
};

Result<LoweredProgram> lower(const runtime::Program& program);

// Lowers each kernel on its own and says which translate (for `mimic info --compile`).
struct KernelVerdict {
  std::string name;
  bool translates = false;
  std::string error;
};
std::vector<KernelVerdict> check_kernels(const runtime::Program& program);

} // namespace mimic::codegen
