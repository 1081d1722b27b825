// Thread loops unswitched on row-invariant conditions (see row_unswitch.h).
#include "codegen/row_unswitch.h"
#include "support/config.h"

#include "codegen/thread_interchange.h"

#include <llvm/Transforms/Scalar/SimpleLoopUnswitch.h>

#include <cstdlib>
#include <string_view>

namespace mimic::codegen {

bool row_unswitch_enabled() {
  return config::switched_on("MIMIC_ROW_UNSWITCH");
}

llvm::PreservedAnalyses UnswitchThreadLoops::run(llvm::Loop& loop, llvm::LoopAnalysisManager& am,
                                                 llvm::LoopStandardAnalysisResults& ar, llvm::LPMUpdater& updater) {
  if (!is_thread_loop(loop) || !row_unswitch_enabled())
    return llvm::PreservedAnalyses::all();
  // Trivial unswitching already ran in -O2's pipeline; this adds the copies.
  return llvm::SimpleLoopUnswitchPass(/*NonTrivial=*/true, /*Trivial=*/false).run(loop, am, ar, updater);
}

} // namespace mimic::codegen
