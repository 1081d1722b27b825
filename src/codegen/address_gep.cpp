#include "codegen/address_gep.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

namespace mimic::codegen {

using namespace llvm;

namespace {

// The terms of a sum of i64 adds (a few levels deep).
void flatten(Value* v, SmallVectorImpl<Value*>& terms, unsigned depth) {
  auto* add = dyn_cast<BinaryOperator>(v);
  if (add && add->getOpcode() == Instruction::Add && depth < 4) {
    flatten(add->getOperand(0), terms, depth + 1);
    flatten(add->getOperand(1), terms, depth + 1);
    return;
  }
  terms.push_back(v);
}

// Where a value defined outside `loop` can be used from: right after its definition.
BasicBlock::iterator after_definition(Value* v, Function& f) {
  if (auto* i = dyn_cast<Instruction>(v)) {
    if (isa<PHINode>(i))
      return i->getParent()->getFirstInsertionPt();
    return std::next(i->getIterator());
  }
  return f.getEntryBlock().getFirstInsertionPt();
}

} // namespace

PreservedAnalyses AddressesToGep::run(Function& f, FunctionAnalysisManager& am) {
  LoopInfo& loops = am.getResult<LoopAnalysis>(f);
  DominatorTree& dominators = am.getResult<DominatorTreeAnalysis>(f);
  SmallVector<IntToPtrInst*, 32> work;
  for (BasicBlock& bb : f)
    for (Instruction& i : bb)
      if (auto* c = dyn_cast<IntToPtrInst>(&i))
        if (auto* add = dyn_cast<BinaryOperator>(c->getOperand(0)); add && add->getOpcode() == Instruction::Add)
          if (loops.getLoopFor(&bb))
            work.push_back(c);
  bool changed = false;
  // One conversion per base used alone (the kernel's parameters): accesses through the
  // same base then have the same pointer to scalar evolution, so the vectoriser sees a
  // thread's four stores to out[4 * i + k] as one interleaved group.
  DenseMap<std::pair<Value*, Type*>, Value*> single_bases;
  for (IntToPtrInst* conversion : work) {
    Loop* loop = loops.getLoopFor(conversion->getParent());
    SmallVector<Value*, 8> terms, invariant, varying;
    flatten(conversion->getOperand(0), terms, 0);
    for (Value* t : terms)
      (loop->isLoopInvariant(t) ? invariant : varying).push_back(t);
    if (invariant.empty() || varying.empty())
      continue;
    // The base: one invariant term as it is, or their sum in the preheader.
    Value* base = invariant.front();
    BasicBlock::iterator at;
    if (invariant.size() == 1) {
      at = after_definition(base, f);
    } else {
      // Summed where the loop is entered from: its preheader, or (a thread loop entered
      // from two unswitched copies has none yet) the block that dominates its header, which
      // the invariant terms' definitions dominate (they are used in the loop).
      BasicBlock* preheader = loop->getLoopPreheader();
      if (!preheader)
        if (DomTreeNode* node = dominators.getNode(loop->getHeader()); node && node->getIDom())
          preheader = node->getIDom()->getBlock();
      if (!preheader)
        continue;
      IRBuilder<> pb(preheader->getTerminator());
      for (size_t i = 1; i < invariant.size(); ++i)
        base = pb.CreateAdd(base, invariant[i]);
      at = std::next(cast<Instruction>(base)->getIterator());
    }
    Value* base_ptr = invariant.size() == 1 ? single_bases.lookup({base, conversion->getType()}) : nullptr;
    if (!base_ptr) {
      IRBuilder<> bb(at->getParent(), at);
      base_ptr = bb.CreateIntToPtr(base, conversion->getType(), "base");
      if (invariant.size() == 1)
        single_bases[{base, conversion->getType()}] = base_ptr;
    }
    IRBuilder<> ib(conversion);
    Value* offset = varying.front();
    for (size_t i = 1; i < varying.size(); ++i)
      offset = ib.CreateAdd(offset, varying[i]);
    Value* address = ib.CreateGEP(ib.getInt8Ty(), base_ptr, offset, "address");
    conversion->replaceAllUsesWith(address);
    conversion->eraseFromParent();
    changed = true;
  }
  if (!changed)
    return PreservedAnalyses::all();
  PreservedAnalyses kept;
  kept.preserveSet<CFGAnalyses>();
  return kept;
}

} // namespace mimic::codegen
