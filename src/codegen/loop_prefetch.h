// Prefetches of the next trip's loads in loops with barriers (the lowering's part,
// codegen/loop_prefetch.cpp).
//
// A tiled kernel loops over tiles with barriers in the loop: each trip loads a tile of
// global memory into shared memory, waits at a barrier, computes from shared memory and
// waits again (SGEMM: `bs[ty][tx] = b[(t + ty) * n + col]` for t += 16). On the CPU the
// loop is split at its barriers, so neither LLVM nor the hardware sees it as a loop, and a
// tile whose rows are a matrix's row apart (16 lines, 8 KiB apart for n = 2048) comes in
// from L3 a line at a time, every trip, while the core waits. The lowering knows the
// loop: a load from global memory inside a loop that holds a barrier, whose address is a
// linear function of the loop's induction register (the one register the loop writes
// once, by adding a literal), gets a prefetch into L2 of the address the next trip will
// load (the address plus the step times the coefficient, which may be a product of
// registers the loop does not write, the matrix's width). The prefetch is a call the
// vectoriser widens (codegen/prefetch_calls.h): one prefetch per line a row of threads
// touches. A constant distance under a page is left to the hardware prefetcher.
// SGEMM (2048, tiles of 16; the bench's), 3 alternating pairs: 787-860 -> 429-495 ms
// (2.9x -> 1.6-1.8x OpenMP), as fast as with the prefetch written into the CUDA source.
// Without it the kernel waits on L3 and its time swings with the machine's load (500-860
// ms from run to run); n-body's tile loop gets it too, unchanged (216-224 vs 215-217 ms).
//   MIMIC_LOOP_PREFETCH=0 turns it off (the JIT cache keys on it).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <llvm/ADT/SmallVector.h>

namespace mimic::codegen {

bool loop_prefetch_enabled();

// The distance from a load's address to the next trip's, in bytes: a sum of literal
// factors times registers the loop does not write.
struct LoopPrefetch {
  struct Term {
    int64_t factor = 1;
    llvm::SmallVector<std::string_view, 2> registers;
  };
  using Sum = std::vector<Term>;
};

} // namespace mimic::codegen
