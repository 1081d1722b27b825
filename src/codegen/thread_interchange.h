// A pass for the optimiser, at the start of the vectorisers: thread-loop interchange.
//
// Between two split points the threads of a block may run in any interleaving, and the CPU
// backend runs them one after another (a thread loop). Where each thread then runs a loop
// of its own (a grid-stride loop, `for (c = tid; c < cols; c += blockDim)`, the j loop of
// n-body over a tile), that loop stays scalar and, worse, thread after thread walks memory
// with the stride of the whole block. For a thread loop `A(t); loop { B(t) }; C(t)` this
// pass makes
//
//   for t: A(t)                       threads that reach the loop stop before it (state IN)
//   do { for t: if IN: one iteration of B(t) (leaving: state OUT) } while (a thread is IN)
//   for t: if OUT: C(t)
//
// which is the same program under another interleaving. The inner `for t` loops are plain
// thread loops again, which LLVM vectorises: the threads of a row go through the loop in
// step, side by side. Values crossing from one part to another live in per-thread arrays
// (stack arrays of one element per thread of a row), except those computed from the
// thread index and values the same in every thread, which are computed again; loop-carried
// values the same in every thread that stays (a counter, a pointer into a shared tile)
// are carried once per round, and ones that step by such a value from a per-thread start
// (the index of a grid-stride loop) are that start plus a per-round offset, so that their
// accesses stay consecutive across the threads. Rounds that stay scalar get a copy without
// the per-thread state test, run while every thread of the row is inside (full rounds).
// Vectorised rounds of a loop left at its latch, whose test keeps a thread while such an
// index compares below a bound the same in every thread (`c < cols`), are counted: the
// state byte records only who entered (nothing at all when the loop's guard is the same
// test), and whether a thread is still inside is the latch's test of the round before,
// computed again from its start and the round's offset; nothing is stored per round. A
// check at run time of the starts' range, the bound and the step sends rows whose values
// could wrap around, where that test would be wrong, to state-mode rounds (kept scalar).
// Where the loop's guard is that test, counted rounds get a full-round copy too, without
// the test: every thread is inside iff the largest start passes it, and another round
// follows iff the smallest start passes it one step on. 64-bit indices are counted only
// then (a grid-stride loop over size_t: most of its rounds test nothing).
//
// Thread loops are recognised by llvm.loop metadata the lowering puts on their back edges.
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class Instruction;
class Loop;
} // namespace llvm

namespace mimic::codegen {

// Marks `back_edge` (a thread loop's latch branch) as a thread loop's, to be vectorised.
void mark_thread_loop(llvm::Instruction* back_edge);
bool is_thread_loop(const llvm::Loop& loop);
// Asks the vectoriser for one warp's 32 threads per iteration of the loop `back_edge`
// closes (vector width 32, not interleaved), and whether a loop's back edge asks that: a
// loop over one warp's piece of a row runs at most 32 threads; left to the vectoriser,
// a small body got 16 lanes x 4 on AVX-512 and never entered its vector body.
void one_warp_per_iteration(llvm::Instruction* back_edge);
bool asks_one_warp_per_iteration(const llvm::Instruction* back_edge);
// MIMIC_INTERCHANGE=0 turns the pass off (for comparisons); the JIT cache keys on it.
bool interchange_enabled();
// MIMIC_INTERCHANGE=explain: each loop considered and why it was or was not interchanged,
// on standard error, as kernels compile (the JIT cache is bypassed).
bool interchange_explain();
// MIMIC_PREFETCH=0: no prefetching of the runs a grid-stride loop reads rounds ahead (for
// comparisons); the JIT cache keys on it.
bool prefetch_enabled();
// MIMIC_FULL_ROUNDS=0: no copy of the rounds for when every thread is inside the loop, and
// no counted rounds of 64-bit indices (for comparisons); the JIT cache keys on it.
bool full_rounds_enabled();
// MIMIC_COUNTED_ROUNDS=0: rounds always test and store each thread's state, never count
// (for comparisons); the JIT cache keys on it.
bool counted_rounds_enabled();

struct InterchangeThreadLoops : llvm::PassInfoMixin<InterchangeThreadLoops> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
