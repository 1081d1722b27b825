#include "codegen/warp_indices.h"

#include <array>
#include <map>
#include <vector>

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PatternMatch.h>

#include "codegen/spill_remat.h"
#include "codegen/thread_interchange.h"

namespace mimic::codegen {

using namespace llvm;
using namespace llvm::PatternMatch;

namespace {

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

// The row setup's piece values (kPieceWarp, kPieceEnd, kRowEnd), in the block of `base`.
std::array<Instruction*, 3> piece_values(Instruction* base) {
  std::array<Instruction*, 3> out{};
  for (Instruction& i : *base->getParent())
    if (MDNode* md = i.getMetadata(kWarpMetadata))
      if (auto* k = mdconst::dyn_extract<ConstantInt>(md->getOperand(0)); k && k->getZExtValue() < 3)
        out[k->getZExtValue()] = &i;
  return out;
}

// Whether `v` is used, through arithmetic, in a loop inside its thread loop (one whose
// latch is not the thread loop's).
bool feeds_inner_loop(Instruction* v, LoopInfo& li) {
  SmallPtrSet<Instruction*, 32> seen{v};
  std::vector<Instruction*> work{v};
  while (!work.empty() && seen.size() < 256) {
    Instruction* i = work.back();
    work.pop_back();
    if (Loop* l = li.getLoopFor(i->getParent())) {
      BasicBlock* latch = l->getLoopLatch();
      Instruction* back = latch ? latch->getTerminator() : nullptr;
      if (back && !back->getMetadata(kThreadLatchMetadata) && l->getLoopDepth() > 1) {
        // Inside some loop that is not a thread loop: is a thread loop around it?
        for (Loop* p = l->getParentLoop(); p; p = p->getParentLoop())
          if (BasicBlock* pl = p->getLoopLatch(); pl && pl->getTerminator()->getMetadata(kThreadLatchMetadata))
            return true;
      }
    }
    for (User* u : i->users())
      if (auto* ui = dyn_cast<Instruction>(u); ui && !isa<StoreInst>(ui) && seen.insert(ui).second)
        work.push_back(ui);
  }
  return false;
}

// Whether `v` reaches, through arithmetic, the address of a load or store in a thread
// loop with no loop inside it. The vectoriser versions such a loop on the lane (an i5
// recurrence) not wrapping, which holds for 32 threads only: a row of 256 threads takes the
// scalar loop. Within a piece the lane is t minus the piece's first thread, affine.
bool feeds_address_in_flat_loop(Instruction* v, LoopInfo& li) {
  Loop* thread_loop = li.getLoopFor(v->getParent());
  while (thread_loop) {
    BasicBlock* latch = thread_loop->getLoopLatch();
    if (latch && latch->getTerminator()->getMetadata(kThreadLatchMetadata))
      break;
    thread_loop = thread_loop->getParentLoop();
  }
  if (!thread_loop || !thread_loop->getSubLoops().empty())
    return false;
  SmallPtrSet<Instruction*, 32> seen{v};
  std::vector<Instruction*> work{v};
  while (!work.empty() && seen.size() < 256) {
    Instruction* i = work.back();
    work.pop_back();
    for (User* u : i->users()) {
      auto* ui = dyn_cast<Instruction>(u);
      if (!ui)
        continue;
      if (isa<LoadInst>(ui) || (isa<StoreInst>(ui) && cast<StoreInst>(ui)->getPointerOperand() == i))
        return true;
      if (!isa<StoreInst>(ui) && seen.insert(ui).second)
        work.push_back(ui);
    }
  }
  return false;
}

} // namespace

PreservedAnalyses WarpIndices::run(Function& f, FunctionAnalysisManager& am) {
  struct Use {
    Instruction* at;
    Value* thread;
    bool warp; // >> 5 (else & 31)
  };
  std::map<Instruction*, std::vector<Use>> by_row; // by row base
  for (BasicBlock& bb : f)
    for (Instruction& i : bb) {
      if (i.getMetadata(kWarpMetadata))
        continue; // the row setup's own
      Value *t = nullptr, *base = nullptr;
      auto tid = m_Sub(m_Value(t), m_Value(base));
      bool warp = match(&i, m_LShr(tid, m_SpecificInt(5))) || match(&i, m_UDiv(tid, m_SpecificInt(32)));
      bool lane = !warp && (match(&i, m_And(tid, m_SpecificInt(31))) || match(&i, m_URem(tid, m_SpecificInt(32))));
      if ((warp || lane) && is_row_base(base))
        by_row[cast<Instruction>(base)].push_back({&i, t, warp});
    }
  if (by_row.empty())
    return PreservedAnalyses::all();
  LoopInfo& li = am.getResult<LoopAnalysis>(f);
  bool changed = false;
  for (auto& [base, uses] : by_row) {
    auto [warp, piece_end, row_end] = piece_values(base);
    if (!warp || !piece_end || !row_end)
      continue;
    bool worth = false;
    for (const Use& u : uses)
      worth = worth || feeds_inner_loop(u.at, li) || feeds_address_in_flat_loop(u.at, li);
    if (!worth)
      continue;
    // The thread loop goes piece by piece: it ends, and the next starts, at the piece's end.
    // (Not in the row setup itself, which computes the piece's end from the row's.)
    row_end->replaceUsesWithIf(piece_end, [&](llvm::Use& use) {
      return cast<Instruction>(use.getUser())->getParent() != row_end->getParent();
    });
    // The thread loops that now end at the piece's end (their header tests it; the back
    // edge carries the loop's properties) go one warp of threads at a time.
    for (llvm::User* test : piece_end->users())
      if (isa<ICmpInst>(test))
        for (llvm::User* u : test->users())
          if (auto* exit = dyn_cast<BranchInst>(u))
            for (BasicBlock* from : predecessors(exit->getParent()))
              if (Instruction* back = from->getTerminator(); back->getMetadata(kThreadLatchMetadata))
                one_warp_per_iteration(back);
    Value* first = nullptr;
    for (const Use& u : uses) {
      Value* replacement = warp;
      if (!u.warp) {
        if (!first) {
          IRBuilder<> b(warp->getNextNode());
          first = b.CreateAdd(base, b.CreateShl(warp, 5), "piece");
        }
        IRBuilder<> b(u.at);
        replacement = b.CreateSub(u.thread, first, "lane");
      }
      u.at->replaceAllUsesWith(replacement);
      u.at->eraseFromParent();
    }
    changed = true;
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
