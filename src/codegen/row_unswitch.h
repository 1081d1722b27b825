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
// leaves off), with cost limits of Mimic's own for this pass (row_unswitch.cpp): a cost
// of 150 where LLVM's default is 50, which left stencil's interior test on y (`y > 0 &&
// y + 1 < rows`) and its halo rows masked; and the cost scaled up from the third
// candidate condition of a loop on (LLVM: the ninth), so that transpose's four unrolled
// `y + j < rows` tests make 6 vector loops rather than 10 (first launch 60-64 ms, not
// 88-94). Only thread loops get it: the program's own loops keep -O2's trivial
// unswitching, which copies no code. MIMIC_LLVM_OPTIONS naming unswitch-threshold or
// unswitch-num-initial-unscaled-candidates overrides Mimic's value.
#pragma once

#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>

namespace mimic::codegen {

// MIMIC_ROW_UNSWITCH=0 turns the pass off (for comparisons); the JIT cache keys on it.
bool row_unswitch_enabled();

// `threshold`: LLVM's unswitch-threshold for this run, unless MIMIC_LLVM_OPTIONS sets it.
// The run after row_guards.h's tests copies thread loops whose rows lie wholly inside
// (`row.all.in`) at a higher cost: stencil's tile loads, three loops of some 60
// instructions (halo rows and the others), are each copied only from about 300; at 150
// the rows loaded the tile with masks (stencil at 1 MiB, one worker: 465-492 us a launch,
// 329-333 at 500; transpose 270-279 -> 205-213, scan 1154-1184 -> 1048-1097), for twice
// the code in transpose (14 -> 28 KB; its optimised code compiles in 510 ms, not 250).
struct UnswitchThreadLoops : llvm::PassInfoMixin<UnswitchThreadLoops> {
  static constexpr int kRowThreshold = 150, kRowGuardsThreshold = 500;
  explicit UnswitchThreadLoops(int threshold = kRowThreshold) : threshold_(threshold) {}
  llvm::PreservedAnalyses run(llvm::Loop& loop, llvm::LoopAnalysisManager& am,
                              llvm::LoopStandardAnalysisResults& ar, llvm::LPMUpdater& updater);

private:
  int threshold_;
};

// A function pass after the unswitching: a branch whose condition the copies settled
// (`row.all.in || tests` became `true || tests`) goes one way, so that the vectoriser sees
// the blocks it guarded as unconditional: it only makes an interleaved group of stores that
// are (scan's four stores a thread to out[4 * i + k]: 8 x 4 single stores on AVX2, no
// scatter, before; one launch at 1 MiB on one worker 722-746 -> 615-635 us). LLVM's
// SimplifyCFG would do it too, with more besides: stencil's tile loop went 314 -> 343 us.
struct FoldSettledBranches : llvm::PassInfoMixin<FoldSettledBranches> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
