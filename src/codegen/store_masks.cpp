// Masked stores branched on their mask (see store_masks.h).
#include "codegen/store_masks.h"

#include <cstdlib>
#include <string_view>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/TargetParser/X86TargetParser.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

namespace mimic::codegen {

using namespace llvm;

namespace {

enum class Mode { Off, Auto, All };

// MIMIC_STORE_MASKS: 0 or off, never; all, on every target (the tests, which must not
// depend on the machine's vector extensions); otherwise on targets without AVX-512.
Mode mode() {
  const char* v = std::getenv("MIMIC_STORE_MASKS");
  const std::string_view s = v ? v : "";
  if (s == "0" || s == "off")
    return Mode::Off;
  return s == "all" ? Mode::All : Mode::Auto;
}

// A masked store of a fixed-length vector whose mask is not a constant (InstCombine folds
// those), with the mask as the last argument.
IntrinsicInst* masked_store(Instruction& i) {
  auto* call = dyn_cast<IntrinsicInst>(&i);
  if (!call || call->getIntrinsicID() != Intrinsic::masked_store)
    return nullptr;
  auto* type = dyn_cast<FixedVectorType>(call->getArgOperand(0)->getType());
  Value* mask = call->getArgOperand(call->arg_size() - 1);
  if (!type || type->getNumElements() > 64 || isa<Constant>(mask))
    return nullptr;
  return call;
}

// Stores of one mask in one block with nothing between them that touches memory or has
// effects (the address computations between are moved above the first).
struct Group {
  Value* mask = nullptr;
  SmallVector<IntrinsicInst*, 8> stores;
  SmallVector<Instruction*, 16> between;
};

SmallVector<Group, 8> groups_in(BasicBlock& bb) {
  SmallVector<Group, 8> groups;
  Group open;
  SmallVector<Instruction*, 16> pending;
  auto close = [&] {
    if (!open.stores.empty())
      groups.push_back(std::move(open));
    open = Group();
    pending.clear();
  };
  for (Instruction& i : bb) {
    if (IntrinsicInst* store = masked_store(i)) {
      Value* mask = store->getArgOperand(store->arg_size() - 1);
      if (open.mask != mask)
        close();
      open.mask = mask;
      open.between.append(pending.begin(), pending.end());
      pending.clear();
      open.stores.push_back(store);
    } else if (!open.stores.empty() && !isa<PHINode>(i) && !i.isTerminator() && !i.mayReadOrWriteMemory() &&
               !i.mayHaveSideEffects()) {
      pending.push_back(&i);
    } else {
      close();
    }
  }
  close();
  return groups;
}

// From the function's features, or where they do not say, its CPU's (`mimic compile --cpu`).
bool has_avx512(const Function& f) {
  const StringRef features = f.getFnAttribute("target-features").getValueAsString();
  if (features.contains("avx512f"))
    return features.contains("+avx512f");
  SmallVector<StringRef, 64> of_cpu;
  X86::getFeaturesForCPU(f.getFnAttribute("target-cpu").getValueAsString(), of_cpu);
  return is_contained(of_cpu, "avx512f");
}

void branch_on_mask(Group& g) {
  IntrinsicInst* first = g.stores.front();
  for (Instruction* i : g.between)
    i->moveBefore(first->getIterator());
  IRBuilder<> b(first);
  const unsigned lanes = cast<FixedVectorType>(g.mask->getType())->getNumElements();
  IntegerType* bits_type = b.getIntNTy(lanes);
  Value* bits = b.CreateBitCast(g.mask, bits_type, "store.lanes");
  Value* any = b.CreateICmpNE(bits, ConstantInt::get(bits_type, 0), "store.any");
  Value* all = b.CreateICmpEQ(bits, Constant::getAllOnesValue(bits_type), "store.all");
  Instruction* some = SplitBlockAndInsertIfThen(any, first->getIterator(), false);
  Instruction *full = nullptr, *part = nullptr;
  SplitBlockAndInsertIfThenElse(all, some->getIterator(), &full, &part);
  some->getParent()->setName("store.some");
  full->getParent()->setName("store.full");
  part->getParent()->setName("store.part");
  for (IntrinsicInst* store : g.stores) {
    b.SetInsertPoint(full);
    StoreInst* plain = b.CreateAlignedStore(store->getArgOperand(0), store->getArgOperand(1),
                                            store->getParamAlign(1).valueOrOne());
    plain->copyMetadata(*store, {LLVMContext::MD_alias_scope, LLVMContext::MD_noalias, LLVMContext::MD_tbaa,
                                 LLVMContext::MD_access_group, LLVMContext::MD_nontemporal});
    store->moveBefore(part->getIterator());
  }
}

} // namespace

const char* store_masks_setting() {
  switch (mode()) {
  case Mode::Off: return "off";
  case Mode::All: return "all";
  default: return "auto";
  }
}

PreservedAnalyses BranchOnStoreMasks::run(Function& f, FunctionAnalysisManager&) {
  const Mode m = mode();
  if (m == Mode::Off || (m == Mode::Auto && has_avx512(f)))
    return PreservedAnalyses::all();
  SmallVector<Group, 16> groups;
  for (BasicBlock& bb : f)
    for (Group& g : groups_in(bb))
      groups.push_back(std::move(g));
  for (Group& g : groups)
    branch_on_mask(g);
  return groups.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}

} // namespace mimic::codegen
