#include "codegen/uniform_loads.h"

#include <cstddef>
#include <cstdint>

#include <optional>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/AliasAnalysis.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/MemoryLocation.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Operator.h>

#include "codegen/block_state.h"
#include "codegen/spill_remat.h"

namespace mimic::codegen {

using namespace llvm;

namespace {

// Whether `address` is the block's shared window (the BlockState field, loaded invariant)
// plus a constant: then `offset` is that constant.
bool shared_offset(Value* address, Argument* block, const DataLayout& dl, int64_t& offset) {
  APInt delta(64, 0);
  auto* base = dyn_cast<LoadInst>(address->stripAndAccumulateConstantOffsets(dl, delta, true));
  if (!base || !base->hasMetadata(LLVMContext::MD_invariant_load))
    return false;
  APInt field(64, 0);
  if (base->getPointerOperand()->stripAndAccumulateConstantOffsets(dl, field, true) != block ||
      field != offsetof(BlockState, shared))
    return false;
  offset = delta.getSExtValue();
  return true;
}

// Saves reach the restores of their slot (`!mimic.spill`, codegen/spill_remat.h): a
// restored register is whatever its slot's saves store.
using Saves = DenseMap<uint64_t, SmallVector<Value*, 2>>;

// Whether `v` (an integer or a pointer) is a kernel parameter plus offsets: a sum (add, sub,
// or, getelementptr) whose terms are a parameter (read from the parameter buffer, or
// restored from a spill slot whose saves all are such sums) and values that are not
// addresses (products, shifts, narrower integers extended, constants); `found` says that a
// parameter was seen. A CUDA program's pointer arithmetic stays in the object it started
// from, and no parameter points into a block's shared memory.
bool parameter_plus_offsets(Value* v, Argument* params, const Saves& saves, SmallPtrSetImpl<Value*>& seen,
                            bool& found, unsigned depth = 0) {
  if (depth > 32)
    return false;
  if (isa<Constant>(v))
    return true;
  if (!seen.insert(v).second)
    return true; // around a loop: the other way in decides
  if (auto* l = dyn_cast<LoadInst>(v)) {
    if (auto key = spill_key(*l)) {
      auto it = saves.find(key->second);
      if (it == saves.end())
        return false;
      for (Value* saved : it->second)
        if (!parameter_plus_offsets(saved, params, saves, seen, found, depth + 1))
          return false;
      return true;
    }
    if (getUnderlyingObject(l->getPointerOperand()) != params)
      return false;
    found = true;
    return true;
  }
  if (auto* phi = dyn_cast<PHINode>(v)) {
    for (Value* in : phi->incoming_values())
      if (!parameter_plus_offsets(in, params, saves, seen, found, depth + 1))
        return false;
    return true;
  }
  if (auto* s = dyn_cast<SelectInst>(v))
    return parameter_plus_offsets(s->getTrueValue(), params, saves, seen, found, depth + 1) &&
           parameter_plus_offsets(s->getFalseValue(), params, saves, seen, found, depth + 1);
  if (isa<ZExtInst>(v) || isa<SExtInst>(v))
    return true; // a narrower integer: not an address
  if (auto* cast = dyn_cast<IntToPtrInst>(v))
    return parameter_plus_offsets(cast->getOperand(0), params, saves, seen, found, depth + 1);
  if (auto* gep = dyn_cast<GetElementPtrInst>(v))
    return parameter_plus_offsets(gep->getPointerOperand(), params, saves, seen, found, depth + 1);
  auto* op = dyn_cast<BinaryOperator>(v);
  if (!op)
    return false;
  switch (op->getOpcode()) {
  case Instruction::Add:
  case Instruction::Or:
    return parameter_plus_offsets(op->getOperand(0), params, saves, seen, found, depth + 1) &&
           parameter_plus_offsets(op->getOperand(1), params, saves, seen, found, depth + 1);
  case Instruction::Sub:
    return parameter_plus_offsets(op->getOperand(0), params, saves, seen, found, depth + 1);
  case Instruction::Mul:
  case Instruction::Shl:
  case Instruction::LShr:
  case Instruction::AShr:
  case Instruction::UDiv:
  case Instruction::SDiv:
  case Instruction::URem:
  case Instruction::SRem:
    return true; // scaled: an index, not an address
  default:
    return false;
  }
}

// Whether `address` is in a kernel parameter's object (global memory, never shared).
bool in_parameter_object(Value* address, Argument* params, const Saves& saves) {
  Value* root = getUnderlyingObject(address);
  if (root == params)
    return true;
  SmallPtrSet<Value*, 16> seen;
  bool found = false;
  return parameter_plus_offsets(root, params, saves, seen, found) && found;
}

// The thread loop's way in from its row setup, where the row's values are ready.
BasicBlock* row_entry(Loop& loop) {
  BasicBlock* head = loop.getHeader();
  BasicBlock* entry = nullptr;
  for (BasicBlock* p : predecessors(head)) {
    if (loop.contains(p))
      continue;
    if (entry)
      return nullptr;
    entry = p;
  }
  if (!entry)
    return nullptr;
  auto* br = dyn_cast<BranchInst>(entry->getTerminator());
  return br && br->isUnconditional() ? entry : nullptr;
}

} // namespace

PreservedAnalyses HoistUniformLoads::run(Function& f, FunctionAnalysisManager& am) {
  Attribute attribute = f.getFnAttribute(kStaticSharedAttribute);
  uint64_t static_shared = 0;
  if (!attribute.isStringAttribute() || attribute.getValueAsString().getAsInteger(10, static_shared) ||
      static_shared == 0 || f.arg_size() < 2)
    return PreservedAnalyses::all();
  Argument* params = f.getArg(0);
  Argument* block = f.getArg(1);
  const DataLayout& dl = f.getDataLayout();
  LoopInfo& li = am.getResult<LoopAnalysis>(f);
  AAResults& aa = am.getResult<AAManager>(f);
  std::vector<Loop*> thread_loops;
  for (Loop* top : li)
    for (Loop* l : top->getLoopsInPreorder())
      if (BasicBlock* latch = l->getLoopLatch(); latch && latch->getTerminator()->getMetadata(kThreadLatchMetadata))
        thread_loops.push_back(l);
  Saves saves;
  for (BasicBlock& bb : f)
    for (Instruction& i : bb)
      if (auto* s = dyn_cast<StoreInst>(&i))
        if (auto key = spill_key(*s))
          saves[key->second].push_back(s->getValueOperand());
  bool changed = false;
  MDNode* uniform = MDNode::get(f.getContext(), {});
  for (Loop* loop : thread_loops) {
    BasicBlock* entry = row_entry(*loop);
    if (!entry)
      continue;
    std::vector<std::pair<LoadInst*, int64_t>> candidates;
    std::vector<Instruction*> writes;
    for (BasicBlock* bb : loop->blocks())
      for (Instruction& i : *bb) {
        int64_t offset = 0;
        if (auto* l = dyn_cast<LoadInst>(&i); l && l->isSimple() && !l->hasMetadata(LLVMContext::MD_invariant_load) &&
                                              shared_offset(l->getPointerOperand(), block, dl, offset)) {
          TypeSize size = dl.getTypeStoreSize(l->getType());
          if (offset >= 0 && !size.isScalable() && uint64_t(offset) + size.getFixedValue() <= static_shared)
            candidates.push_back({l, offset});
        } else if (i.mayWriteToMemory()) {
          writes.push_back(&i);
        }
      }
    if (candidates.empty())
      continue;
    IRBuilder<> b(entry->getTerminator());
    Value* window = nullptr;
    for (auto [l, offset] : candidates) {
      const MemoryLocation where = MemoryLocation::get(l);
      bool written = false;
      for (Instruction* w : writes) {
        if (!isModSet(aa.getModRefInfo(w, where)))
          continue;
        if (auto* s = dyn_cast<StoreInst>(w); s && s->isSimple() && in_parameter_object(s->getPointerOperand(), params, saves))
          continue;
        written = true;
        break;
      }
      if (written)
        continue;
      if (!window) {
        LoadInst* base = b.CreateLoad(b.getPtrTy(), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), block,
                                                                                 offsetof(BlockState, shared)));
        base->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(f.getContext(), {}));
        window = base;
      }
      LoadInst* once = b.CreateAlignedLoad(l->getType(), b.CreateConstGEP1_64(b.getInt8Ty(), window, uint64_t(offset)),
                                           l->getAlign(), l->getName());
      once->copyMetadata(*l);
      once->setMetadata(kUniformMetadata, uniform);
      l->replaceAllUsesWith(once);
      l->eraseFromParent();
      changed = true;
    }
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
