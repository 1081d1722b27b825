// Gathers and scatters that run as vector loads and stores where their lanes line up (see
// contiguous_gathers.h).
#include "codegen/contiguous_gathers.h"
#include "support/config.h"

#include <optional>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "codegen/vector_lanes.h"

namespace mimic::codegen {

using namespace llvm;

namespace {

// <0, step, 2 * step, ...> of `n` lanes of `type`.
Constant* steps(Type* type, unsigned n, uint64_t step) {
  SmallVector<Constant*, 16> lanes;
  for (unsigned l = 0; l < n; ++l)
    lanes.push_back(ConstantInt::get(type, uint64_t(l) * step));
  return ConstantVector::get(lanes);
}

// An i1, true where lane l of `v` (integers) is lane 0 + l * step.
Value* evenly_spaced(IRBuilder<>& b, Value* v, uint64_t step) {
  const unsigned n = cast<FixedVectorType>(v->getType())->getNumElements();
  Value* first = b.CreateExtractElement(v, uint64_t(0), "contiguous.first");
  Value* expected = b.CreateAdd(b.CreateVectorSplat(n, first), steps(v->getType()->getScalarType(), n, step));
  return b.CreateAndReduce(b.CreateICmpEQ(v, expected));
}

// An i1, true where the `n` pointers `ptrs` address consecutive elements of `bytes` bytes.
// From the index the pointers were computed from where there is one (a narrower compare
// than of the pointers); an index the address sign-extends must not overflow on the way
// from lane 0 to the last, or the sign-extended lanes would not be consecutive.
Value* consecutive(IRBuilder<>& b, Value* ptrs, uint64_t bytes, const DataLayout& dl) {
  const unsigned n = cast<FixedVectorType>(ptrs->getType())->getNumElements();
  if (std::optional<Address> a = decompose(ptrs, dl); a && a->scale > 0 && bytes % uint64_t(a->scale) == 0) {
    auto* type = dyn_cast<IntegerType>(a->index->getType()->getScalarType());
    const uint64_t step = bytes / uint64_t(a->scale);
    if (type && type->getBitWidth() >= 16 && type->getBitWidth() <= 64 &&
        uint64_t(n - 1) * step < (uint64_t(1) << (type->getBitWidth() - 2))) {
      Value* lined_up = evenly_spaced(b, a->index, step);
      if (!a->widened)
        return lined_up;
      Value* first = b.CreateExtractElement(a->index, uint64_t(0));
      APInt last = APInt::getSignedMaxValue(type->getBitWidth()) - uint64_t(n - 1) * step;
      return b.CreateAnd(lined_up, b.CreateICmpSLE(first, ConstantInt::get(type, last)));
    }
  }
  Type* i64 = b.getInt64Ty();
  return evenly_spaced(b, b.CreatePtrToInt(ptrs, FixedVectorType::get(i64, n)), bytes);
}

} // namespace

bool contiguous_gathers_enabled() {
  return config::switched_on("MIMIC_CONTIGUOUS_GATHERS");
}

// The data vector a gather loads or a scatter stores.
static FixedVectorType* data_of(IntrinsicInst* call) {
  const bool gather = call->getIntrinsicID() == Intrinsic::masked_gather;
  return dyn_cast<FixedVectorType>((gather ? call : call->getArgOperand(0))->getType());
}

PreservedAnalyses ContiguousGathers::run(Function& f, FunctionAnalysisManager&) {
  if (!contiguous_gathers_enabled() || !f.getName().starts_with("mimic_kernel_"))
    return PreservedAnalyses::all();
  const DataLayout& dl = f.getDataLayout();
  // Gathers and scatters of packed elements (not i1 or x86_fp80, whose vectors are not an
  // array of them).
  SmallVector<IntrinsicInst*, 16> accesses;
  for (BasicBlock& bb : f)
    for (Instruction& i : bb)
      if (auto* call = dyn_cast<IntrinsicInst>(&i);
          call && (call->getIntrinsicID() == Intrinsic::masked_gather || call->getIntrinsicID() == Intrinsic::masked_scatter))
        if (FixedVectorType* data = data_of(call); data && data->getNumElements() >= 2) {
          TypeSize bytes = dl.getTypeAllocSize(data->getElementType());
          if (bytes.isFixed() && dl.getTypeStoreSize(data->getElementType()) == bytes)
            accesses.push_back(call);
        }
  for (IntrinsicInst* call : accesses) {
    const bool gather = call->getIntrinsicID() == Intrinsic::masked_gather;
    const unsigned ptr_arg = gather ? 0 : 1;
    Value* ptrs = call->getArgOperand(ptr_arg);
    FixedVectorType* data = data_of(call);
    const uint64_t bytes = dl.getTypeAllocSize(data->getElementType()).getFixedValue();
    const Align align = call->getParamAlign(ptr_arg).valueOrOne();
    IRBuilder<> b(call);
    Value* lined_up = consecutive(b, ptrs, bytes, dl);
    Value* first = b.CreateExtractElement(ptrs, uint64_t(0), "contiguous.address");
    Instruction *then_term = nullptr, *else_term = nullptr;
    SplitBlockAndInsertIfThenElse(lined_up, call->getIterator(), &then_term, &else_term);
    b.SetInsertPoint(then_term);
    Instruction* vector = nullptr;
    if (gather)
      vector = b.CreateMaskedLoad(data, first, align, call->getArgOperand(1), call->getArgOperand(2), "contiguous.load");
    else
      vector = b.CreateMaskedStore(call->getArgOperand(0), first, align, call->getArgOperand(2));
    vector->copyMetadata(*call);
    BasicBlock* tail = call->getParent();
    call->moveBefore(else_term->getIterator());
    if (gather) {
      PHINode* joined = PHINode::Create(data, 2, "contiguous.joined");
      joined->insertBefore(tail->begin());
      call->replaceAllUsesWith(joined);
      joined->addIncoming(vector, then_term->getParent());
      joined->addIncoming(call, else_term->getParent());
    }
  }
  return accesses.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}

} // namespace mimic::codegen
