#include "codegen/warp_indices.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PatternMatch.h>

#include "codegen/spill_remat.h"

namespace mimic::codegen {

using namespace llvm;
using namespace llvm::PatternMatch;

namespace {

// The row base's piece warp: the !mimic.warp value of the block that computed `base`.
Instruction* piece_warp(Instruction* base) {
  for (Instruction& i : *base->getParent())
    if (i.getMetadata(kWarpMetadata))
      return &i;
  return nullptr;
}

bool is_row_base(Value* v) {
  auto* i = dyn_cast<Instruction>(v);
  if (!i)
    return false;
  MDNode* md = i->getMetadata(kRowMetadata);
  if (!md)
    return false;
  auto* kind = mdconst::dyn_extract<ConstantInt>(md->getOperand(0));
  return kind && kind->isZero();
}

} // namespace

PreservedAnalyses WarpIndices::run(Function& f, FunctionAnalysisManager&) {
  struct Use {
    Instruction* at;
    Value* thread;
    Instruction* base;
    bool warp; // >> 5 (else & 31)
  };
  std::vector<Use> uses;
  for (BasicBlock& bb : f)
    for (Instruction& i : bb) {
      if (i.getMetadata(kWarpMetadata))
        continue; // the piece's own warp
      Value *t = nullptr, *base = nullptr;
      auto tid = m_Sub(m_Value(t), m_Value(base));
      bool warp = match(&i, m_LShr(tid, m_SpecificInt(5))) || match(&i, m_UDiv(tid, m_SpecificInt(32)));
      bool lane = !warp && (match(&i, m_And(tid, m_SpecificInt(31))) || match(&i, m_URem(tid, m_SpecificInt(32))));
      if ((warp || lane) && is_row_base(base))
        uses.push_back({&i, t, cast<Instruction>(base), warp});
    }
  if (uses.empty())
    return PreservedAnalyses::all();
  DenseMap<Instruction*, Value*> first_of_piece; // by row base
  bool changed = false;
  for (const Use& u : uses) {
    Instruction* warp = piece_warp(u.base);
    if (!warp)
      continue;
    Value* replacement = warp;
    if (!u.warp) {
      Value*& first = first_of_piece[u.base];
      if (!first) {
        IRBuilder<> b(warp->getNextNode());
        first = b.CreateAdd(u.base, b.CreateShl(warp, 5), "piece");
      }
      IRBuilder<> b(u.at);
      replacement = b.CreateSub(u.thread, first, "lane");
    }
    u.at->replaceAllUsesWith(replacement);
    u.at->eraseFromParent();
    changed = true;
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
