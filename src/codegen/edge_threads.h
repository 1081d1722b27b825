// A pass for the optimiser, before the loop vectoriser: in a thread loop whose threads may
// run in any order, code that only the row's first or last thread runs moves out of the
// loop, to run after it for that thread.
//
// Tiled kernels load a tile's halo from its edge threads: stencil's `if (threadIdx.x ==
// 0) tile[ty][0] = in[i - 1]` and `if (threadIdx.x == 31) tile[ty][33] = in[i + 1]`, a
// reduction's `if (threadIdx.x == 0) out[blockIdx.x] = sum`. In the copy of a thread loop
// for whole rows (codegen/lower.cpp, copy_full_rows), the loop runs from the row's first
// thread to its last, a constant trip count for the block's shape. Left in the loop, such a
// test costs every vector of threads a mask (stencil: 64-bit lane indices compared with 31,
// a quarter of its samples), and LLVM peels the first thread off the loop, which leaves the
// vectoriser 31 threads: three vectors of 8 and seven scalar ones. Moved out, the loop
// keeps its 32 threads, and the edge's code runs once after it.
//
// Legal where the loop is `llvm.loop.parallel_accesses` (parallel_loops.h: between two split
// points, CUDA lets a block's threads run in any interleaving, and a program in which one
// thread touches what another writes races): running the edge thread's guarded code after
// every other thread's iteration is one of those interleavings. Within the edge thread's own
// iteration, the code moves past what follows it there, so that must not touch what it
// touches (alias analysis says so, or the code is the iteration's last), and no value it
// computes may be used outside it. The values it uses from its iteration are computed
// again after the loop, for that thread: from SCEV where they step with the thread, or by
// copying their arithmetic (no loads but invariant ones).
//
// The test must imply the thread: an equality (under `and`, or the `or` of inequalities
// when the code is on the false side) of a value that steps with the thread and one that
// does not, holding at the loop's first or last iteration only. The copies for whole rows
// keep LLVM's loop peeling off (`llvm.loop.peeled.count`, lower.cpp), so the tests are
// still in the loop here.
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
