// A pass for the optimiser, before the loop vectoriser: in a thread loop, code that only
// one thread runs (`if (threadIdx.x == 0)`, a row's last thread, warp 0's lane 0) moves out
// of the loop, to run after it for that thread.
//
// Tiled kernels load a tile's halo from its edge threads: stencil's `if (threadIdx.x ==
// 0) tile[ty][0] = in[i - 1]` and `if (threadIdx.x == 31) tile[ty][33] = in[i + 1]`; a
// reduction's thread 0 stores the block's total. In the copy of a thread loop for whole
// rows (codegen/lower.cpp, copy_full_rows), the loop runs from the row's first thread to
// its last, a constant trip count for the block's shape. Left in the loop, such a test
// costs every vector of threads a mask (stencil: 64-bit lane indices compared with 31, a
// quarter of its samples), and LLVM peels the first thread off the loop, which leaves the
// vectoriser 31 threads: three vectors of 8 and seven scalar ones. Moved out, the loop keeps
// its 32 threads, and the edge's code runs once after it. A loop whose one thread's store
// was all it did (`if (lane == 0) total = v` over warp 0) is then not entered at all.
//
// The test must imply the thread: an equality (under `and`, or the `or` of inequalities
// when the code is on the false side) of a value stepping by one with the thread and one
// that does not, which holds at one iteration k (SCEV). Where k is not known to be one the
// loop runs (a call of part of a row, a loop over one warp of several), the code after the
// loop runs only if k is at most the loop's backedge-taken count.
//
// The code after the loop makes the test alone, not the tests on the way to it, so the
// test must be made in every iteration: no path from the loop's header to its latch avoids
// it, taking only the known side of branches whose condition folds to a constant and not
// through code already moved (an interchange's `if (state[t] == OUT)`, or stencil's `x > 0`
// before its halo test in rows at the grid's edge, keep the code in place).
//
// Legal where the loop is `llvm.loop.parallel_accesses` (parallel_loops.h: between two split
// points, CUDA lets a block's threads run in any interleaving, and a program in which one
// thread touches what another writes races): running thread k's guarded code after every
// other thread's iteration is one of those interleavings. In a loop not marked so (it reads
// a uniform value's slot), only where the loop's other accesses are kept apart from the
// code's by their alias scopes, whatever the iteration. Within thread k's own iteration,
// the code moves past what follows it there, so that must not touch what it touches (SCEV's
// ranges of the two addresses at iteration k, or alias analysis), and no value it computes
// may be used outside it. The values it uses from its iteration are computed again after
// the loop: from SCEV where they step with the thread, or by copying their arithmetic (no
// loads but invariant ones).
//
// The copies for whole rows keep LLVM's loop peeling off (`llvm.loop.peeled.count`,
// lower.cpp), so the tests are still in the loop here.
//   MIMIC_EDGE_THREADS=0 turns it off (the JIT cache keys on it); =explain says what moves,
//   on standard error as kernels compile (the JIT cache is bypassed).
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

bool edge_threads_enabled();
bool edge_threads_explain();

struct ExtractEdgeThreads : llvm::PassInfoMixin<ExtractEdgeThreads> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
