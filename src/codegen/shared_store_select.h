// A pass for the optimiser, at the start of the vectorisers: a conditional store to shared
// memory of a location the thread has just loaded becomes an unconditional store of a select
// (the new value, or the value it loaded).
//
// A compare-exchange (`a = s[i]; b = s[j]; if (a > b) { s[i] = b; s[j] = a; }`, bitonic sort's
// every step) branches per thread on its data. Vectorised, each lane's two stores sit in a
// block of their own behind a test of its mask bit (8 branches a vector on AVX2, each taken
// at random on unsorted keys); scalar, the branch is as unpredictable. Storing
// `c ? b : a` and `c ? a : b` instead has no branch. LLVM does not do this: another thread
// could store to s[i] between the load and the store, and the store would write the old
// value over it. On the CPU a block's threads run one at a time on one worker and its shared
// memory is its own (clusters are of one block), so nothing else writes s[i] in between; the
// pass also requires that nothing this thread does between the load and the store may write
// it (LLVM's alias analysis: s[i + stride] with a constant stride does not).
//
// The shape taken: a block whose only predecessor branches to it or past it, holding the
// stores and computations that may run anyway, each store's address loaded with the same
// type in the predecessor (not volatile, not atomic). Global memory is left alone: another
// block may write it between the load and the store.
//   MIMIC_SHARED_STORE_SELECT=0 turns the pass off (the JIT cache keys on it).
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

bool shared_store_select_enabled();

struct SelectSharedStores : llvm::PassInfoMixin<SelectSharedStores> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
