// A pass for the optimiser: masked stores are branched on their mask, so that a mask with
// no lane active stores nothing and one with every lane active stores plainly.
//
// The loop vectoriser turns a thread loop's conditional stores (`if (i < n) y[i] = ...`, the
// state and values the loop interchange keeps per thread, the code after a loop that some
// threads never entered) into llvm.masked.store. Without AVX-512 that is VMASKMOVPS or
// VPMASKMOVD, which AMD's cores before Zen 4 run as microcode, tens of micro-operations a
// store whatever the mask (a layernorm on a Zen 3 spent 40% of its time in them, masks all
// empty or all full). A thread loop's masks are nearly always one or the other, so the stores
// of one mask that follow one another (with only computations between them) get one test of
// the mask's bits: none set, the stores are skipped; all set, plain stores; otherwise the
// masked stores as before. Runs after the loop vectoriser; targets with AVX-512 (masked
// stores in one micro-operation) are left alone.
//   MIMIC_STORE_MASKS=0 turns it off (the JIT cache keys on it).
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

// "off", "auto" (targets without AVX-512) or "all", as MIMIC_STORE_MASKS says.
const char* store_masks_setting();

struct BranchOnStoreMasks : llvm::PassInfoMixin<BranchOnStoreMasks> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
