// A loop pass for the optimiser's loop pipeline: thread loops are unswitched on conditions
// that are the same for every thread of the row they run.
//
// A thread loop runs the threads of one row of the block (threadIdx.y and .z fixed), so a
// condition on the row alone (`threadIdx.y == 0`, `y < rows` for y = blockIdx.y * ny +
// threadIdx.y; in `x < cols && y < rows` the second half) is invariant in it. Left in
// place, the vectoriser evaluates it per lane and masks what it guards in every row
// (transpose's and sgemm's tile accesses under `y < rows`, stencil's interior test on y).
// Unswitched, each outcome gets a copy of the loop that the vectoriser treats on its own,
// with the guarded accesses unconditional or gone.
//
// LLVM's SimpleLoopUnswitch does the work (its non-trivial unswitching, which clang's -O2
// leaves off). Its cost limit (unswitch-threshold, 50) bounds the copies: stencil's halo
// rows (`threadIdx.y == 0 && y > 0`) stay masked; at 300 they are unswitched too, but
// transpose's four unrolled `y + j < rows` tests make up to 16 copies and its first launch
// takes three times as long. Only thread loops get it: the program's own loops keep -O2's
// trivial unswitching, which copies no code.
#pragma once

#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>

namespace mimic::codegen {

// MIMIC_ROW_UNSWITCH=0 turns the pass off (for comparisons); the JIT cache keys on it.
bool row_unswitch_enabled();

struct UnswitchThreadLoops : llvm::PassInfoMixin<UnswitchThreadLoops> {
  llvm::PreservedAnalyses run(llvm::Loop& loop, llvm::LoopAnalysisManager& am,
                              llvm::LoopStandardAnalysisResults& ar, llvm::LPMUpdater& updater);
};

} // namespace mimic::codegen
