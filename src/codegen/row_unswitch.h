// A loop pass for the optimiser's loop pipeline: thread loops are unswitched on conditions
// that are the same for every thread of the row they run.
//
// A thread loop runs the threads of one row of the block (threadIdx.y and .z fixed), so a
// condition on the row alone (`threadIdx.y == 0`, `y + 1 < rows` for y = blockIdx.y * ny +
// threadIdx.y, `x < cols && y < rows` where only y is the row's) is invariant in it. Left
// in place, the vectoriser evaluates it per lane and turns what it guards into masked
// accesses that every row pays for: stencil's halo loads of the rows above and below run in
// all eight rows of its 32x8 blocks, its interior test in every lane of every row. Unswitched,
// each outcome gets a copy of the loop that the vectoriser treats on its own, with the
// guarded accesses unconditional or gone.
//
// LLVM's SimpleLoopUnswitch does the work (its non-trivial unswitching, which clang's -O2
// leaves off; its cost limit bounds how much code a loop may grow). Only thread loops get
// it: the program's own loops keep -O2's trivial unswitching, which does not copy code (the
// full non-trivial unswitching made scan's loops slower and cost compile time).
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
