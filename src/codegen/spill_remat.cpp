#include "codegen/spill_remat.h"

#include <cstddef>

#include <array>
#include <map>
#include <set>
#include <utility>

#include <llvm/ADT/DepthFirstIterator.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/CFG.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Metadata.h>

#include "codegen/block_state.h"
#include "codegen/uniform_loads.h"

namespace mimic::codegen {

using namespace llvm;

std::optional<SpillKey> spill_key(const Instruction& i) {
  MDNode* md = i.getMetadata(kSpillMetadata);
  if (!md || md->getNumOperands() != 2)
    return std::nullopt;
  auto* split = mdconst::dyn_extract<ConstantInt>(md->getOperand(0));
  auto* slot = mdconst::dyn_extract<ConstantInt>(md->getOperand(1));
  if (!split || !slot)
    return std::nullopt;
  return SpillKey{uint32_t(split->getZExtValue()), uint32_t(slot->getZExtValue())};
}

namespace {

// The most instructions computed again for one restored value.
constexpr unsigned kBudget = 24;

using Key = SpillKey;

// The thread index a save or restore addresses its slot with (its thread loop's):
// `getelementptr T, base, zext t`.
Value* thread_of(Instruction* access) {
  Value* address = isa<StoreInst>(access) ? cast<StoreInst>(access)->getPointerOperand()
                                          : cast<LoadInst>(access)->getPointerOperand();
  auto* gep = dyn_cast<GetElementPtrInst>(address);
  if (!gep || gep->getNumIndices() != 1)
    return nullptr;
  auto* index = dyn_cast<ZExtInst>(gep->getOperand(1));
  return index ? index->getOperand(0) : nullptr;
}

// Whether `v` is computed from the thread index `thread` and values that are the same in
// every thread of the block and every call of the kernel for it, all at hand anywhere in
// the kernel: then the thread's value can be computed again from its index.
class Uniformity {
public:
  Uniformity(Function& f, Value* thread) : f_(f), thread_(thread) {}

  bool uniform(Value* v) {
    unsigned budget = kBudget;
    return check(v, budget);
  }

private:
  bool check(Value* v, unsigned& budget) {
    if (isa<Constant>(v) || (thread_ && v == thread_))
      return true;
    if (auto* i = dyn_cast<Instruction>(v); i && i->getMetadata(kRowMetadata))
      return true; // the row's value, the same for the thread in every call
    if (auto* a = dyn_cast<Argument>(v))
      return a->getParent() == &f_ && a->getArgNo() < 2; // the parameter buffer and the block state
    auto* i = dyn_cast<Instruction>(v);
    if (!i)
      return false;
    if (auto it = known_.find(i); it != known_.end())
      return it->second;
    bool result = false;
    if (budget > 0) {
      --budget;
      result = computable(i, budget);
    }
    known_[i] = result;
    return result;
  }

  bool computable(Instruction* i, unsigned& budget) {
    if (isa<PHINode>(i))
      return false;
    if (auto* l = dyn_cast<LoadInst>(i))
      return l->isSimple() && l->hasMetadata(LLVMContext::MD_invariant_load) && check(l->getPointerOperand(), budget);
    if (auto* call = dyn_cast<CallInst>(i)) {
      // A special register is a function of the block state and the thread index.
      Function* callee = call->getCalledFunction();
      bool sreg = callee && callee->getName() == "mimic.sreg";
      if (!sreg && (!isa<IntrinsicInst>(call) || !call->doesNotAccessMemory() || !call->willReturn() ||
                    call->mayHaveSideEffects()))
        return false;
      for (Value* a : call->args())
        if (!check(a, budget))
          return false;
      return true;
    }
    if (!(isa<BinaryOperator>(i) || isa<CastInst>(i) || isa<CmpInst>(i) || isa<SelectInst>(i) ||
          isa<GetElementPtrInst>(i) || isa<UnaryOperator>(i) || isa<FreezeInst>(i) || isa<ExtractElementInst>(i) ||
          isa<InsertElementInst>(i) || isa<ShuffleVectorInst>(i) || isa<ExtractValueInst>(i) ||
          isa<InsertValueInst>(i)))
      return false;
    if (i->mayReadOrWriteMemory() || i->mayHaveSideEffects())
      return false;
    for (Value* op : i->operands())
      if (!check(op, budget))
        return false;
    return true;
  }

  Function& f_;
  Value* thread_;
  DenseMap<Instruction*, bool> known_;
};

// The block before the thread loop whose index is `thread` (its row setup).
BasicBlock* rows_of(Value* thread) {
  auto* phi = dyn_cast_or_null<PHINode>(thread);
  if (!phi)
    return nullptr;
  for (BasicBlock* p : predecessors(phi->getParent()))
    if (!p->getTerminator()->getMetadata(kThreadLatchMetadata))
      return p;
  return nullptr;
}

// The row values (!mimic.row, by kind) computed in `rows`.
std::array<Instruction*, 3> row_values(BasicBlock* rows) {
  std::array<Instruction*, 3> out{};
  for (BasicBlock* bb = rows; bb; bb = bb->getSinglePredecessor()) {
    for (Instruction& i : *bb)
      if (MDNode* md = i.getMetadata(kRowMetadata))
        if (auto* k = mdconst::dyn_extract<ConstantInt>(md->getOperand(0)); k && k->getZExtValue() < 3)
          out[k->getZExtValue()] = &i;
    if (out[0] && out[1] && out[2])
      break;
  }
  return out;
}

// Whether two values are computed the same way from their thread indices (copies of one
// save, in the thread loops of different resume points).
bool same_computation(Value* a, Value* b, Value* ta, Value* tb, unsigned depth = 0) {
  if (a == b || (a == ta && b == tb))
    return true;
  auto* x = dyn_cast<Instruction>(a);
  auto* y = dyn_cast<Instruction>(b);
  if (x && y && x->getMetadata(kRowMetadata) && y->getMetadata(kRowMetadata))
    return x->getMetadata(kRowMetadata) == y->getMetadata(kRowMetadata);
  if (!x || !y || depth > kBudget || !x->isSameOperationAs(y) || x->getNumOperands() != y->getNumOperands())
    return false;
  for (unsigned k = 0; k < x->getNumOperands(); ++k)
    if (!same_computation(x->getOperand(k), y->getOperand(k), ta, tb, depth + 1))
      return false;
  return true;
}

Value* compute_again(Value* v, Instruction* before, DenseMap<Value*, Value*>& made) {
  if (auto it = made.find(v); it != made.end())
    return it->second;
  auto* i = dyn_cast<Instruction>(v);
  if (!i)
    return v;
  Instruction* copy = i->clone();
  for (unsigned k = 0; k < copy->getNumOperands(); ++k)
    copy->setOperand(k, compute_again(copy->getOperand(k), before, made));
  copy->insertBefore(before->getIterator());
  copy->setName(i->getName());
  made[i] = copy;
  return copy;
}

// Which values may differ between the threads of one row in one call of the kernel (the
// row's values, !mimic.row, do not): the thread index, the call's range and resume point,
// what depends on them, memory the program writes, phis where paths from a branch on such
// a value join, and everything in a loop such a branch leaves. A restore is divergent
// when its slot is in `divergent_slots`. Everything here only grows with that set: after
// slots are added, update() goes on from the answer so far to the answer for the larger
// set (the same as computing it anew, which bitonic's 66 barriers made cost 15 ms).
class Divergence {
public:
  Divergence(Function& f, const std::set<uint32_t>& divergent_slots, const SmallPtrSetImpl<BasicBlock*>& heads,
             const std::vector<Loop*>& loops)
      : f_(f), divergent_slots_(divergent_slots), heads_(heads), loops_(loops) {
    if (f.arg_size() >= 5)
      for (unsigned a = 2; a < 5; ++a)
        divergent_.insert(f.getArg(a));
    update();
  }

  void update() {
    Function& f = f_;
    for (bool changed = true; changed;) {
      changed = false;
      for (BasicBlock& bb : f)
        for (Instruction& i : bb)
          if (!i.getType()->isVoidTy() && !divergent_.contains(&i) && decide(i)) {
            divergent_.insert(&i);
            changed = true;
          }
      for (BasicBlock& bb : f)
        if (Value* c = condition(bb.getTerminator()); c && divergent_.contains(c) && branched_.insert(&bb).second) {
          mark_joins(bb);
          changed = true;
        }
      for (Loop* l : loops_)
        if (!left_.contains(l))
          for (BasicBlock* exiting : l->blocks())
            if (l->isLoopExiting(exiting))
              if (Value* c = condition(exiting->getTerminator()); c && divergent_.contains(c)) {
                left_.insert(l);
                for (BasicBlock* bb : l->blocks())
                  for (Instruction& i : *bb)
                    if (!i.getType()->isVoidTy())
                      divergent_.insert(&i);
                changed = true;
                break;
              }
    }
  }

  bool divergent(Value* v) const { return divergent_.contains(v); }

private:
  static Value* condition(Instruction* term) {
    if (auto* br = dyn_cast<BranchInst>(term); br && br->isConditional())
      return br->getCondition();
    if (auto* sw = dyn_cast<SwitchInst>(term))
      return sw->getCondition();
    return nullptr;
  }

  // Blocks reachable from two successors of `bb` (not around a thread loop).
  void mark_joins(BasicBlock& bb) {
    DenseMap<BasicBlock*, unsigned> first_reached_from;
    unsigned k = 0;
    for (BasicBlock* succ : successors(&bb)) {
      ++k;
      std::vector<BasicBlock*> work{succ};
      SmallPtrSet<BasicBlock*, 32> seen{succ};
      while (!work.empty()) {
        BasicBlock* b = work.back();
        work.pop_back();
        auto [it, fresh] = first_reached_from.try_emplace(b, k);
        if (!fresh && it->second != k)
          joins_.insert(b);
        if (b->getTerminator()->getMetadata(kThreadLatchMetadata))
          continue;
        for (BasicBlock* s : successors(b))
          if (seen.insert(s).second)
            work.push_back(s);
      }
    }
  }

  bool decide(Instruction& i) {
    if (i.getMetadata(kRowMetadata))
      return false; // the same for all threads of a row, in every call
    if (auto* phi = dyn_cast<PHINode>(&i)) {
      if (heads_.contains(phi->getParent()) || joins_.contains(phi->getParent()))
        return true;
      for (Value* v : phi->incoming_values())
        if (divergent_.contains(v))
          return true;
      return false;
    }
    if (auto* l = dyn_cast<LoadInst>(&i)) {
      if (auto key = spill_key(i))
        return divergent_slots_.count(key->second) != 0;
      if (l->getMetadata(kUniformMetadata)) // read once per row (codegen/uniform_loads.h)
        return divergent_.contains(l->getPointerOperand());
      return !l->isSimple() || !l->hasMetadata(LLVMContext::MD_invariant_load) ||
             divergent_.contains(l->getPointerOperand());
    }
    if (auto* call = dyn_cast<CallInst>(&i)) {
      Function* callee = call->getCalledFunction();
      if (callee && callee->getName() == "mimic.sreg") { // the block's, or the thread's own
        auto* which = dyn_cast<ConstantInt>(call->getArgOperand(2));
        if (!which)
          return true;
        switch (SpecialRegister(which->getZExtValue())) {
        case SpecialRegister::TidX: case SpecialRegister::TidY: case SpecialRegister::TidZ:
        case SpecialRegister::RowBase:
        case SpecialRegister::LaneId: case SpecialRegister::WarpId: case SpecialRegister::LanemaskEq:
        case SpecialRegister::LanemaskLe: case SpecialRegister::LanemaskLt: case SpecialRegister::LanemaskGe:
        case SpecialRegister::LanemaskGt: case SpecialRegister::SmId:
          return true;
        default:
          return false;
        }
      }
      if (!isa<IntrinsicInst>(call) || !call->doesNotAccessMemory() || call->mayHaveSideEffects())
        return true;
    } else if (i.mayReadOrWriteMemory() || i.mayHaveSideEffects() || isa<AllocaInst>(i)) {
      return true;
    }
    for (Value* op : i.operands())
      if (divergent_.contains(op))
        return true;
    return false;
  }

  Function& f_;
  const std::set<uint32_t>& divergent_slots_;
  const SmallPtrSetImpl<BasicBlock*>& heads_;
  const std::vector<Loop*>& loops_;
  DenseSet<Value*> divergent_;
  SmallPtrSet<BasicBlock*, 16> branched_, joins_;
  SmallPtrSet<Loop*, 8> left_;
};

} // namespace

PreservedAnalyses RematerialiseSpills::run(Function& f, FunctionAnalysisManager& am) {
  std::map<Key, SmallVector<StoreInst*, 2>> saves;
  std::map<Key, SmallVector<LoadInst*, 2>> restores;
  // A load from the spill area that has lost its tag (the optimiser rewrote it) may read
  // any slot.
  bool untagged_restore = false;
  const DataLayout& dl = f.getDataLayout();
  auto reads_spill_area = [&](LoadInst* l) {
    auto* base = dyn_cast<LoadInst>(getUnderlyingObject(l->getPointerOperand()));
    if (!base || f.arg_size() < 2)
      return false;
    APInt offset(64, 0);
    Value* root = base->getPointerOperand()->stripAndAccumulateConstantOffsets(dl, offset, true);
    return root == f.getArg(1) && offset == offsetof(BlockState, spill);
  };
  for (BasicBlock& bb : f)
    for (Instruction& i : bb) {
      auto key = spill_key(i);
      if (auto* s = dyn_cast<StoreInst>(&i); s && key)
        saves[*key].push_back(s);
      else if (auto* l = dyn_cast<LoadInst>(&i)) {
        if (key)
          restores[*key].push_back(l);
        else if (!l->getMetadata(kSlotMetadata)) // a warp chain's own slot is none of the registers'
          untagged_restore |= reads_spill_area(l);
      }
    }
  if (saves.empty())
    return PreservedAnalyses::all();
  bool changed = false;
  // Slot by slot: a register is computed again when every save stores the same
  // computation E(thread) or what was restored from the register's own slot (around a loop
  // with a barrier); then, by induction, the slot always holds E of its thread.
  std::map<uint32_t, SmallVector<StoreInst*, 4>> slot_saves;
  std::map<uint32_t, SmallVector<LoadInst*, 4>> slot_restores;
  for (auto& [key, stores] : saves)
    slot_saves[key.second].append(stores.begin(), stores.end());
  for (auto& [key, loads] : restores)
    slot_restores[key.second].append(loads.begin(), loads.end());
  // A predicate lives in its slot as a byte: saved again unchanged, it is the restore's
  // byte truncated to i1 and extended back.
  auto restore_of = [](Value* v, uint32_t slot) {
    if (auto* wide = dyn_cast<ZExtInst>(v))
      if (auto* narrow = dyn_cast<TruncInst>(wide->getOperand(0));
          narrow && narrow->getDestTy()->isIntegerTy(1) && narrow->getSrcTy() == wide->getDestTy())
        v = narrow->getOperand(0);
    auto* l = dyn_cast<LoadInst>(v);
    auto key = l ? spill_key(*l) : std::nullopt;
    return key && key->second == slot;
  };
  // The instructions that stand for a row's values, with which one (read once, not at
  // each of a kernel's restores).
  std::vector<std::pair<Instruction*, unsigned>> row_instructions;
  for (BasicBlock& bb : f)
    for (Instruction& i : bb)
      if (MDNode* row = i.getMetadata(kRowMetadata))
        row_instructions.emplace_back(&i, unsigned(mdconst::extract<ConstantInt>(row->getOperand(0))->getZExtValue()));
  std::set<uint32_t> recomputed;
  for (auto& [slot, stores] : slot_saves) {
    SmallVector<LoadInst*, 4>& loads = slot_restores[slot];
    if (loads.empty())
      continue;
    StoreInst* defining = nullptr;
    for (StoreInst* st : stores)
      if (!restore_of(st->getValueOperand(), slot)) {
        defining = st;
        break;
      }
    if (!defining)
      continue;
    Value* v = defining->getValueOperand();
    Value* thread = thread_of(defining);
    if (!Uniformity(f, thread).uniform(v))
      continue;
    bool same = true;
    for (StoreInst* st : stores)
      same &= restore_of(st->getValueOperand(), slot) ||
              same_computation(v, st->getValueOperand(), thread, thread_of(st));
    // Where the value depends on the thread or its row, the restores must know theirs.
    for (LoadInst* l : loads) {
      same &= !thread || thread_of(l) != nullptr;
      std::array<Instruction*, 3> rows = row_values(rows_of(thread_of(l)));
      same &= rows[0] && rows[1] && rows[2];
    }
    if (!same)
      continue;
    for (LoadInst* l : loads) {
      DenseMap<Value*, Value*> made;
      if (thread)
        made[thread] = thread_of(l);
      std::array<Instruction*, 3> rows = row_values(rows_of(thread_of(l)));
      for (auto [r, which] : row_instructions)
        made[r] = rows[which];
      l->replaceAllUsesWith(compute_again(v, l, made));
      l->eraseFromParent();
    }
    recomputed.insert(slot);
    changed = true;
  }
  for (auto& [key, loads] : restores)
    if (recomputed.count(key.second))
      loads.clear();
  // Registers that are the same in every thread of a row but are not computed again (a
  // loop counter around a barrier): every thread of a call resumes at the same point, so
  // the value is loaded once per row, before the thread loop, from the slot of the row's
  // first thread in the call (which has not run yet in this call), and the loop sees it
  // as invariant.
  std::set<uint32_t> hoisted_slots;
  if (f.arg_size() >= 5 && hoist_row_uniform) {
    SmallPtrSet<BasicBlock*, 16> heads;
    for (BasicBlock& bb : f)
      if (Instruction* term = bb.getTerminator(); term && term->getMetadata(kThreadLatchMetadata))
        heads.insert(term->getSuccessor(0));
    std::vector<Loop*> loops;
    LoopInfo& li = am.getResult<LoopAnalysis>(f);
    // The program's loops, inside a thread's code. The loops around the thread loops (a
    // call's rows, a call going on past split points: lower.cpp chain_in_step) are left by
    // branches on the call's range, but all threads of a row are in the same iteration.
    auto around_threads = [&](Loop* l) {
      return llvm::any_of(l->blocks(), [&](BasicBlock* bb) { return heads.contains(bb); });
    };
    for (Loop* top : li)
      for (Loop* l : depth_first(top))
        if (!around_threads(l))
          loops.push_back(l);
    std::set<uint32_t> divergent_slots;
    Divergence d(f, divergent_slots, heads, loops);
    for (bool grew = true; grew;) {
      grew = false;
      for (auto& [key, stores] : saves)
        for (StoreInst* st : stores)
          if (d.divergent(st->getValueOperand()) && divergent_slots.insert(key.second).second)
            grew = true;
      if (grew) d.update();
    }
    DenseMap<BasicBlock*, BasicBlock*> preheaders;
    for (auto& [key, loads] : restores) {
      if (divergent_slots.count(key.second) || loads.empty())
        continue;
      auto* thread = dyn_cast_or_null<PHINode>(thread_of(loads.front()));
      bool ok = true;
      for (LoadInst* l : loads)
        ok &= thread_of(l) && isa<PHINode>(thread_of(l)) && heads.contains(cast<PHINode>(thread_of(l))->getParent());
      if (!thread || !ok)
        continue;
      hoisted_slots.insert(key.second); // read before the loop, or (no way in found) still here
      for (LoadInst* l : loads) {
        BasicBlock* head = cast<PHINode>(thread_of(l))->getParent();
        BasicBlock*& pre = preheaders[head];
        if (!pre) {
          BasicBlock* from = nullptr;
          for (BasicBlock* p : predecessors(head))
            if (!p->getTerminator()->getMetadata(kThreadLatchMetadata))
              from = p;
          if (!from)
            continue;
          pre = SplitEdge(from, head);
        }
        DenseMap<Value*, Value*> made;
        auto* t = cast<PHINode>(thread_of(l));
        made[t] = t->getIncomingValueForBlock(pre); // the row's first thread in this call
        Instruction* at = pre->getTerminator();
        Value* address = compute_again(l->getPointerOperand(), at, made);
        LoadInst* once = new LoadInst(l->getType(), address, l->getName(), at->getIterator());
        once->copyMetadata(*l);
        l->replaceAllUsesWith(once);
        l->eraseFromParent();
      }
      loads.clear();
      changed = true;
    }
  }
  // A slot that nothing restores any more needs no saves. (Not per split point: where the
  // optimiser removed a save that stored back what was restored unchanged, a restore at
  // a later split point reads what an earlier one saved.)
  std::map<uint32_t, bool> restored;
  for (auto& [key, loads] : restores)
    restored[key.second] |= !loads.empty();
  for (uint32_t slot : hoisted_slots)
    restored[slot] = true;
  for (auto& [key, stores] : saves)
    if (!untagged_restore && !restored[key.second]) {
      for (StoreInst* s : stores)
        s->eraseFromParent();
      changed = true;
    }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
