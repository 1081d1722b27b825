// Thread loops unswitched on row-invariant conditions (see row_unswitch.h).
#include "codegen/row_unswitch.h"
#include "support/config.h"

#include "codegen/thread_interchange.h"

#include <llvm/Analysis/InstructionSimplify.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Transforms/Scalar/SimpleLoopUnswitch.h>
#include <llvm/Transforms/Utils/Local.h>

#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mimic::codegen {

namespace {

// LLVM's limits on the copies, for this pass alone, set while a Limits lives, except those
// MIMIC_LLVM_OPTIONS sets (compiles run one at a time, jit.cpp). Its defaults (a cost of 50,
// the cost scaled up past 8 candidate conditions) leave stencil's interior test on y
// (`y > 0 && y + 1 < rows`) masked in every row: unswitched at 150 (the caller's
// threshold; row_unswitch.h), stencil at four times the LLC took 149-164 ms instead of
// 164-177. Scaling from the third candidate on keeps transpose's four unrolled
// `y + j < rows` tests from making 10 vector loops (first launch 88-94 ms instead of 49-54;
// with the scaling 60-64, and its time as before).
class Limits {
public:
  explicit Limits(int threshold) {
    const std::pair<const char*, int> limits[] = {{"unswitch-threshold", threshold},
                                                  {"unswitch-num-initial-unscaled-candidates", 2}};
    for (auto [name, value] : limits) {
      llvm::cl::Option* option = llvm::cl::getRegisteredOptions().lookup(name);
      if (option && option->getNumOccurrences() == 0 && !option->addOccurrence(0, name, std::to_string(value)))
        set_.push_back(option);
    }
  }
  ~Limits() {
    for (llvm::cl::Option* option : set_)
      option->reset();
  }
  Limits(const Limits&) = delete;
  Limits& operator=(const Limits&) = delete;

private:
  std::vector<llvm::cl::Option*> set_;
};

} // namespace

bool row_unswitch_enabled() {
  return config::switched_on("MIMIC_ROW_UNSWITCH");
}

llvm::PreservedAnalyses UnswitchThreadLoops::run(llvm::Loop& loop, llvm::LoopAnalysisManager& am,
                                                 llvm::LoopStandardAnalysisResults& ar, llvm::LPMUpdater& updater) {
  if (!is_thread_loop(loop) || !row_unswitch_enabled())
    return llvm::PreservedAnalyses::all();
  // Trivial unswitching already ran in -O2's pipeline; this adds the copies.
  Limits limits(threshold_);
  return llvm::SimpleLoopUnswitchPass(/*NonTrivial=*/true, /*Trivial=*/false).run(loop, am, ar, updater);
}

llvm::PreservedAnalyses FoldSettledBranches::run(llvm::Function& f, llvm::FunctionAnalysisManager&) {
  using namespace llvm;
  bool changed = false;
  const SimplifyQuery query(f.getDataLayout());
  for (BasicBlock& bb : f) {
    auto* branch = dyn_cast<BranchInst>(bb.getTerminator());
    if (!branch || !branch->isConditional() || isa<Constant>(branch->getCondition()))
      continue;
    auto* cond = dyn_cast<Instruction>(branch->getCondition());
    Value* settled = cond ? simplifyInstruction(cond, query) : nullptr;
    if (!settled || !isa<ConstantInt>(settled))
      continue;
    branch->setCondition(settled);
    changed |= ConstantFoldTerminator(&bb, /*DeleteDeadConditions=*/true);
  }
  if (!changed)
    return PreservedAnalyses::all();
  removeUnreachableBlocks(f);
  return PreservedAnalyses::none();
}

} // namespace mimic::codegen
