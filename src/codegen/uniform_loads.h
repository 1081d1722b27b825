// A pass for the optimiser: loads of one shared-memory variable that every thread of a
// thread loop reads alike are read once per row, before the loop.
//
// After a barrier, a block commonly reads what one thread wrote before it: the total of a
// block reduction (`__syncthreads(); float mean = total / n;`). The load's address is the
// same in every thread, but the memory may change between barriers, so the load is
// neither invariant nor computed again where a thread resumes: each thread reads it, the
// value goes through the spill slots per thread, and an interchanged loop carries it in a
// per-thread array (layernorm's mean and 1/std, read per element).
//
// Within one thread loop the threads of a row run one after another with nothing else in
// between, so a load whose address is the same for all of them (a constant offset into
// the static shared variables) reads the same value in each, as long as nothing in the
// thread loop may write there: then it is read once per row, before the thread loop,
// which also makes the value the same for every thread of the row to the passes after
// this one (tagged `!mimic.uniform`; RematerialiseSpills restores a register saved from
// it once per row, InterchangeThreadLoops sees it as invariant). The read is speculative
// (a row whose threads do not reach it still reads), so only offsets inside the kernel's
// static shared variables qualify ("mimic-static-shared" on the kernel, in bytes).
//
// What counts as a possible write: any instruction of the thread loop that alias analysis
// cannot separate from the load (the executor's arrays have scopes of their own), except
// stores through a kernel parameter plus an offset, which CUDA keeps in the parameter's
// global object. Runs after SROA and before RematerialiseSpills.
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

inline constexpr const char* kUniformMetadata = "mimic.uniform";
inline constexpr const char* kStaticSharedAttribute = "mimic-static-shared";

struct HoistUniformLoads : llvm::PassInfoMixin<HoistUniformLoads> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
