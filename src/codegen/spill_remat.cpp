#include "codegen/spill_remat.h"

#include <cstddef>

#include <map>
#include <utility>

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Metadata.h>

#include "codegen/block_state.h"

namespace mimic::codegen {

using namespace llvm;

namespace {

// The most instructions computed again for one restored value.
constexpr unsigned kBudget = 24;

using Key = std::pair<uint32_t, uint32_t>; // split point, slot

std::optional<Key> spill_key(const Instruction& i) {
  MDNode* md = i.getMetadata(kSpillMetadata);
  if (!md || md->getNumOperands() != 2)
    return std::nullopt;
  auto* split = mdconst::dyn_extract<ConstantInt>(md->getOperand(0));
  auto* slot = mdconst::dyn_extract<ConstantInt>(md->getOperand(1));
  if (!split || !slot)
    return std::nullopt;
  return Key{uint32_t(split->getZExtValue()), uint32_t(slot->getZExtValue())};
}

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

// Whether two values are computed the same way from their thread indices (copies of one
// save, in the thread loops of different resume points).
bool same_computation(Value* a, Value* b, Value* ta, Value* tb, unsigned depth = 0) {
  if (a == b || (a == ta && b == tb))
    return true;
  auto* x = dyn_cast<Instruction>(a);
  auto* y = dyn_cast<Instruction>(b);
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

} // namespace

PreservedAnalyses RematerialiseSpills::run(Function& f, FunctionAnalysisManager&) {
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
        else
          untagged_restore |= reads_spill_area(l);
      }
    }
  if (saves.empty())
    return PreservedAnalyses::all();
  bool changed = false;
  for (auto& [key, stores] : saves) {
    auto r = restores.find(key);
    if (r == restores.end() || r->second.empty())
      continue;
    Value* v = stores.front()->getValueOperand();
    Value* thread = thread_of(stores.front());
    if (!Uniformity(f, thread).uniform(v))
      continue;
    bool same = true;
    for (StoreInst* s : stores)
      same &= same_computation(v, s->getValueOperand(), thread, thread_of(s));
    // Where the value depends on the thread, the restores must know theirs.
    for (LoadInst* l : r->second)
      same &= !thread || thread_of(l) != nullptr;
    if (!same)
      continue;
    for (LoadInst* l : r->second) {
      DenseMap<Value*, Value*> made;
      if (thread)
        made[thread] = thread_of(l);
      l->replaceAllUsesWith(compute_again(v, l, made));
      l->eraseFromParent();
    }
    r->second.clear();
    changed = true;
  }
  // A slot that nothing restores any more needs no saves. (Not per split point: where the
  // optimiser removed a save that stored back what was restored unchanged, a restore at
  // a later split point reads what an earlier one saved.)
  std::map<uint32_t, bool> restored;
  for (auto& [key, loads] : restores)
    restored[key.second] |= !loads.empty();
  for (auto& [key, stores] : saves)
    if (!untagged_restore && !restored[key.second]) {
      for (StoreInst* s : stores)
        s->eraseFromParent();
      changed = true;
    }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
