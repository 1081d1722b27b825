// A pass for the optimiser, before the loop vectoriser: a thread loop's tests of a thread's
// own position (`if (i < n)`, i = blockIdx.x * blockDim.x + threadIdx.x; `if (i >= n)
// return`; stencil's `x > 0 && x + 1 < cols`) are settled for the whole row when they come
// out the same for its first and last thread.
//
// Such a test compares a value that goes up (or down) by a constant step from thread to
// thread (`i`, or scan's `4 * threadIdx.x + k` for a thread's k-th item) with one that is
// the same in the row, so over the row its outcome changes at most once. Before
// the loop, each test is made for the row's first and last thread, and, for each value that
// must not wrap around between them, that it does not (`row.all.in`: every test comes out
// as usual in the whole row). A branch on tests joined by `and` (usually true) then
// branches on `row.all.in || tests`, one on tests joined by `or` (usually false) on
// `!row.all.in && tests`, the same values; other conditions joined with them go to a
// branch of their own after. LLVM's unswitching (with row_unswitch.h's limits) then copies
// the loop for rows where row.all.in holds: there the tests are gone and the vectoriser
// loads and stores without masks (triad at 4x the LLC on a Zen 3: 67 -> 23-38 ms, as fast
// as OpenMP's). Rows that straddle an end run the loop as before. A lone test is usually
// true below a bound (`i < n`) or above a constant (`x > 0`), usually false above a bound
// that is not constant (`i >= n`). An equality with a row-invariant value (`x == 0`,
// what `x > 0` becomes) is settled where that value lies outside the row's range: in every
// row but the grid's first, stencil's tile neighbours are loaded without masks (in the
// interior copy the x == 0 test had stayed, and with it a mask on the four loads it
// guards: stencil at four times the LLC on the Zen 3, 194-200 -> 148-150 ms). One that has
// to hold in the whole row (`threadIdx.x == 0`) goes with the other conditions. The row's first thread must be known to LLVM without a
// division by a block width it cannot prove non-zero: in code for one block shape (what
// the JIT compiles), not in code for any shape.
//   MIMIC_ROW_GUARDS=0 turns it off (the JIT cache keys on it); MIMIC_ROW_GUARDS=explain
//   says which tests each thread loop makes for its rows, and which equalities it leaves,
//   on standard error as kernels compile (the JIT cache is bypassed).
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

bool row_guards_enabled();
bool row_guards_explain();

struct HoistRowGuards : llvm::PassInfoMixin<HoistRowGuards> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
