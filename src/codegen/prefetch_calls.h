// PTX prefetches in thread loops that the loop vectoriser can widen.
//
// LLVM's vectoriser does not widen a call of llvm.prefetch: a thread loop with a `prefetch`
// in it stayed scalar (a tiled SGEMM with a next-tile prefetch ran 1.6x slower than
// without). The lowering calls @mimic.prefetch.l1 / .l2 (i64 address) instead; before the
// optimiser runs, offer_vector_prefetches gives those calls vector variants (VFABI, masked
// and unmasked, 2 to 64 lanes), so the vectoriser widens them like any call with a vector
// form. After it, ExpandPrefetchCalls turns every call back into llvm.prefetch: one per
// cache line the lanes touch where their spacing is known (two for 16 consecutive floats),
// one per lane otherwise. A prefetch never faults, so lanes the mask leaves out may
// prefetch too.
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

// The declaration of @mimic.prefetch.l1 (into L1, locality 3) or .l2 (locality 2).
llvm::Function* prefetch_function(llvm::Module& m, bool l2);

// Declares the vector variants of the prefetch functions `m` calls and names them on the
// calls (the vectoriser's VFABI attribute).
void offer_vector_prefetches(llvm::Module& m);

// After the optimiser: the vector variants' declarations go (ExpandPrefetchCalls has
// replaced every call), so that the module is what it would be without them.
void withdraw_vector_prefetches(llvm::Module& m);

struct ExpandPrefetchCalls : llvm::PassInfoMixin<ExpandPrefetchCalls> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
