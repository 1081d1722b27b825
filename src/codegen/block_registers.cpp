// Loads of the block's special registers (see block_registers.h).
#include "codegen/block_registers.h"

#include <cstddef>

#include <llvm/ADT/APInt.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Function.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Instructions.h>

namespace mimic::codegen {

using namespace llvm;

std::optional<SpecialRegister> block_register_read(const Value* v) {
  auto* load = dyn_cast<LoadInst>(v);
  if (!load || !load->getType()->isIntegerTy(32))
    return std::nullopt;
  const Function* f = load->getFunction();
  if (!f || f->arg_size() < 2)
    return std::nullopt;
  const DataLayout& dl = f->getDataLayout();
  APInt offset(dl.getIndexTypeSizeInBits(load->getPointerOperandType()), 0);
  const Value* base = load->getPointerOperand()->stripAndAccumulateConstantOffsets(dl, offset, true);
  const int64_t first = int64_t(offsetof(BlockState, sreg)), at = offset.getSExtValue();
  if (base != f->getArg(1) || at < first || (at - first) % int64_t(sizeof(uint32_t)) != 0 ||
      at - first >= int64_t(sizeof(BlockState::sreg)))
    return std::nullopt;
  return SpecialRegister((at - first) / int64_t(sizeof(uint32_t)));
}

bool in_shared_window(const Value* ptr) {
  auto* base = dyn_cast<LoadInst>(getUnderlyingObject(ptr));
  if (!base)
    return false;
  const Function* f = base->getFunction();
  APInt offset(64, 0);
  const Value* root = base->getPointerOperand()->stripAndAccumulateConstantOffsets(f->getDataLayout(), offset, true);
  return f->arg_size() >= 2 && root == f->getArg(1) && offset == offsetof(BlockState, shared);
}

} // namespace mimic::codegen
