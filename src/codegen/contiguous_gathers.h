// A pass for the optimiser: gathers and scatters whose lanes' addresses turn out to be
// consecutive elements when they run become plain (masked) vector loads and stores there.
//
// The loop vectoriser makes a gather or scatter of every access whose address it cannot
// prove consecutive from thread to thread. Some are consecutive all the same, in ways no
// analysis sees: bitonic sort's pair `i = 2t - (t & (stride - 1))` is 16 consecutive keys
// for 16 threads whenever the step's stride is 16 or more (28 of its 66 steps), and the
// step's code makes four gathers and four scatters of 8 lanes each per 16 threads (a scatter
// of 8 lanes is about ten times a vector store on Zen 4). So each gather and scatter is
// preceded by a test of its lanes: lane l's address is lane 0's plus l elements (one vector
// compare of the indices it was computed from, or of the addresses themselves); where that
// holds, a masked load or store from lane 0's address runs instead, with the same mask,
// pass-through and alignment. The branch goes the same way for every round of a loop
// whose addresses move together, so it costs a compare and a predicted branch where the
// lanes never line up (transpose's column reads). Runs after the loop vectoriser.
//   MIMIC_CONTIGUOUS_GATHERS=0 turns it off (the JIT cache keys on it).
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

bool contiguous_gathers_enabled();

struct ContiguousGathers : llvm::PassInfoMixin<ContiguousGathers> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
