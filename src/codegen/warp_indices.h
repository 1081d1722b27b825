// A pass for the optimiser: in a kernel whose thread loops go warp by warp (a row's
// threads in pieces of 32 %tid.x values: FunctionLowering::emit_row_setup, when the
// kernel computes warps and lanes from %tid.x), `(%tid.x) >> 5` is the piece's warp,
// the same in all its threads, and `(%tid.x) & 31` is the thread index less the piece's
// first. Written so, an address such as `row(%tid.x / 32) * cols + %tid.x % 32` is affine
// in the thread index, and a thread loop over it (or the interchange of its inner loops)
// reads consecutive elements where it gathered.
//
// %tid.x is `sub t, base` with `base` the row's first index (!mimic.row kind 0); the
// piece's warp is computed beside it and carries `!mimic.warp`. Runs after
// RematerialiseSpills, which recomputes %tid.x from the thread index where a thread
// resumes.
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

inline constexpr const char* kWarpMetadata = "mimic.warp";

struct WarpIndices : llvm::PassInfoMixin<WarpIndices> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
