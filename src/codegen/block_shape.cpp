#include "codegen/block_shape.h"

#include <cstddef>

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include "codegen/block_state.h"
#include "support/config.h"

namespace mimic::codegen {

using namespace llvm;

bool block_shape_enabled() {
  return config::switched_on("MIMIC_BLOCK_SHAPE");
}

std::string shaped_symbol(StringRef symbol, const BlockShape& shape) {
  return symbol.str() + ".block." + std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" +
         std::to_string(shape[2]);
}

void specialise_block_shape(Module& m, StringRef kernel, const BlockShape& shape) {
  Function* f = m.getFunction(kernel);
  if (!f || f->isDeclaration() || f->arg_size() < 2)
    return;
  Type* i32 = Type::getInt32Ty(m.getContext());
  const DataLayout& layout = m.getDataLayout();
  Value* block = f->getArg(1);
  const int64_t first = int64_t(offsetof(BlockState, block_dim));
  for (BasicBlock& bb : *f)
    for (Instruction& i : make_early_inc_range(bb)) {
      auto* load = dyn_cast<LoadInst>(&i);
      if (!load || load->getType() != i32 || load->isVolatile())
        continue;
      int64_t offset = 0;
      if (GetPointerBaseWithConstantOffset(load->getPointerOperand(), offset, layout) != block ||
          offset < first || offset >= first + 12 || (offset - first) % 4 != 0)
        continue;
      load->replaceAllUsesWith(ConstantInt::get(i32, shape[size_t(offset - first) / 4]));
      load->eraseFromParent();
    }
}

} // namespace mimic::codegen
