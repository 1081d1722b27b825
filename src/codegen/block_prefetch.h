// A pass for the optimiser: the next block's stores are prefetched, for writing, where
// they are a page or more from this block's, and its loads, for reading, where they are a
// quarter page or more.
//
// A kernel that gives each block its own stretch of an output (a row of a matrix, a tile)
// ends each block with a burst of stores to lines that are not in the cache. On a GPU the
// burst is fire-and-forget; on a CPU core every store waits in the store buffer for its
// line, and once that buffer is full nothing that stores can go on: the block's next
// phases (and the next block's) wait for the memory, so memory and computation take their
// times one after the other (layernorm at four times the LLC: 2.6 us a row against 1.3 in
// cache). The hardware prefetcher follows runs within a page and does not guess the next
// block's row. So each vector store whose address moves by a page or more from one block
// to the next (SCEV: the address with %ctaid.x + 1 in place of %ctaid.x, less the address,
// invariant in the loops around it) is preceded by prefetches-for-write of the lines it
// covers there: the lines of the next block's output, which the same worker runs next
// (blocks go to workers in runs of consecutive indices), arrive while this block computes.
// Loads are the same story from the other side: a block that reads its own row (layernorm:
// 4 KiB a row) starts each row with loads that wait on memory until the hardware
// prefetcher has seen enough of the page, and the core has nothing else to do meanwhile.
// So each vector load whose address moves by a quarter page or more from one block to the
// next is preceded by prefetches of the lines it covers there, into L2 (prefetcht1): the
// next block's row arrives while this block computes (layernorm at four times the LLC: 215-238
// -> 185-196 ms), and a block's own working set in L1 is left alone (into L1, 209-217).
// A row read by several loops is prefetched by each; the repeats hit L1 and cost nothing
// measurable in cache (layernorm at 0.05x LLC: 2.02-2.20 ms without, 1.99-2.04 with).
// Runs after the loop vectoriser, so there is one prefetch per line of a vector access,
// not one per thread. Gathers and scatters whose lanes are evenly spaced count too (scan's
// four items per thread: four gathers of the block's 4 KiB tile), and so do accesses
// through lane 0 of a vector of addresses (a joined run of a thread's items, a load the
// vectoriser addressed from its vector of indices): their addresses are followed through
// the vector code to SCEV. Accesses of one block whose lines another of its prefetches
// covers get none (the four gathers share one; a prefetch for writing serves the loads of
// `out[i] += x`). Scan at four times the LLC: 268-292 -> 221-224 ms; bitonic unchanged.
// Loads a quarter page to a page apart gain too: a grid-stride block's next block reads
// the lines beside each of its rounds, and gets them from DRAM in the same runs (reduce at
// four times the LLC: 1.64-1.78x OpenMP -> 1.26-1.33x).
// A stride SCEV knows only at run time that comes out short with the extensions of 32-bit
// index arithmetic taken through its sums (stencil's 128 bytes a block) gets no prefetch:
// they had run at a stride of 0 (stencil at four times the LLC, 2 workers: 60-62 -> 55 ms).
//   MIMIC_STORE_PREFETCH=0 turns the stores' prefetches off, MIMIC_LOAD_PREFETCH=0 the
//   loads' (the JIT cache keys on both).
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

bool store_prefetch_enabled();
bool load_prefetch_enabled();

struct PrefetchNextBlock : llvm::PassInfoMixin<PrefetchNextBlock> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
