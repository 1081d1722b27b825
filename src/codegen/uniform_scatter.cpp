// Scatters to one address, stored as their last active lane (see uniform_scatter.h).
#include "codegen/uniform_scatter.h"
#include "support/config.h"

#include <cstdlib>
#include <string_view>

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

namespace mimic::codegen {

using namespace llvm;

bool uniform_scatter_enabled() {
  return config::switched_on("MIMIC_UNIFORM_SCATTER");
}

namespace {

// `data` when it is a gather from one address (a splat of pointers) under `mask`, the
// scatter's own, used by the scatter alone, with nothing that writes memory between the two:
// the value the scatter stores is then that address's, loaded once where the scatter stores.
IntrinsicInst* uniform_gather_for(Value* data, Value* mask, IntrinsicInst* scatter) {
  auto* gather = dyn_cast<IntrinsicInst>(data);
  if (!gather || gather->getIntrinsicID() != Intrinsic::masked_gather || !gather->hasOneUse() ||
      gather->getArgOperand(1) != mask || !getSplatValue(gather->getArgOperand(0)) ||
      gather->getParent() != scatter->getParent())
    return nullptr;
  for (Instruction* i = gather->getNextNode(); i != scatter; i = i->getNextNode())
    if (i->mayWriteToMemory())
      return nullptr;
  return gather;
}

} // namespace

PreservedAnalyses UniformScatters::run(Function& f, FunctionAnalysisManager&) {
  if (!uniform_scatter_enabled())
    return PreservedAnalyses::all();
  SmallVector<IntrinsicInst*, 8> scatters;
  for (BasicBlock& bb : f)
    for (Instruction& i : bb)
      if (auto* call = dyn_cast<IntrinsicInst>(&i); call && call->getIntrinsicID() == Intrinsic::masked_scatter)
        if (getSplatValue(call->getArgOperand(1)) && isa<FixedVectorType>(call->getArgOperand(0)->getType()))
          scatters.push_back(call);
  for (IntrinsicInst* scatter : scatters) {
    Value* data = scatter->getArgOperand(0);
    Value* address = getSplatValue(scatter->getArgOperand(1));
    Value* mask = scatter->getArgOperand(2);
    IntrinsicInst* gather = uniform_gather_for(data, mask, scatter);
    const unsigned lanes = cast<FixedVectorType>(data->getType())->getNumElements();
    IRBuilder<> b(scatter);
    Type* bits_type = b.getIntNTy(lanes);
    Value* bits = b.CreateBitCast(mask, bits_type, "scatter.lanes");
    Value* any = b.CreateICmpNE(bits, ConstantInt::get(bits_type, 0), "scatter.any");
    Instruction* then = SplitBlockAndInsertIfThen(any, scatter->getIterator(), false);
    b.SetInsertPoint(then);
    Value* element = nullptr;
    if (gather) { // every active lane loaded the same address: one load of it
      LoadInst* load = b.CreateLoad(data->getType()->getScalarType(), getSplatValue(gather->getArgOperand(0)),
                                    "scatter.loaded");
      load->setAlignment(gather->getParamAlign(0).valueOrOne());
      load->copyMetadata(*gather, {LLVMContext::MD_noalias, LLVMContext::MD_alias_scope,
                                   LLVMContext::MD_access_group, LLVMContext::MD_tbaa});
      element = load;
    } else {
      // The highest set bit of a non-zero mask: lanes - 1 - its leading zeros.
      Value* zeros = b.CreateBinaryIntrinsic(Intrinsic::ctlz, bits, b.getTrue());
      Value* last = b.CreateSub(ConstantInt::get(bits_type, lanes - 1), zeros, "scatter.last");
      element = b.CreateExtractElement(data, last);
    }
    StoreInst* store = b.CreateStore(element, address);
    store->setAlignment(scatter->getParamAlign(1).valueOrOne());
    store->copyMetadata(*scatter, {LLVMContext::MD_noalias, LLVMContext::MD_alias_scope,
                                   LLVMContext::MD_access_group, LLVMContext::MD_tbaa});
    scatter->eraseFromParent();
    if (gather)
      gather->eraseFromParent();
  }
  return scatters.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}

} // namespace mimic::codegen
