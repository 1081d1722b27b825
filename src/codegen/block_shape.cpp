#include "codegen/block_shape.h"

#include <cstddef>
#include <cstdio>

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

namespace {

constexpr const char* kShapeAttribute = "mimic-block-shape";

// Replaces `f`'s i32 loads from its block state (argument 1) at the offsets of `fields`.
bool fold_loads(Function& f, ArrayRef<std::pair<int64_t, uint32_t>> fields) {
  Type* i32 = Type::getInt32Ty(f.getContext());
  const DataLayout& layout = f.getParent()->getDataLayout();
  Value* block = f.getArg(1);
  bool changed = false;
  for (BasicBlock& bb : f)
    for (Instruction& i : make_early_inc_range(bb)) {
      auto* load = dyn_cast<LoadInst>(&i);
      if (!load || load->getType() != i32 || load->isVolatile())
        continue;
      int64_t offset = 0;
      if (GetPointerBaseWithConstantOffset(load->getPointerOperand(), offset, layout) != block)
        continue;
      for (auto [at, value] : fields)
        if (at == offset) {
          load->replaceAllUsesWith(ConstantInt::get(i32, value));
          load->eraseFromParent();
          changed = true;
          break;
        }
    }
  return changed;
}

} // namespace

void specialise_block_shape(Module& m, StringRef kernel, const BlockShape& shape) {
  Function* f = m.getFunction(kernel);
  if (!f || f->isDeclaration() || f->arg_size() < 2)
    return;
  const int64_t dims = int64_t(offsetof(BlockState, block_dim));
  fold_loads(*f, {{dims, shape[0]}, {dims + 4, shape[1]}, {dims + 8, shape[2]}});
  f->addFnAttr(kShapeAttribute, std::to_string(shape[0]) + "," + std::to_string(shape[1]) + "," +
                                    std::to_string(shape[2]));
}

PreservedAnalyses FoldBlockShape::run(Function& f, FunctionAnalysisManager&) {
  Attribute a = f.getFnAttribute(kShapeAttribute);
  if (!a.isStringAttribute() || f.arg_size() < 2)
    return PreservedAnalyses::all();
  BlockShape shape{};
  if (sscanf(a.getValueAsString().str().c_str(), "%u,%u,%u", &shape[0], &shape[1], &shape[2]) != 3)
    return PreservedAnalyses::all();
  auto sreg = [](SpecialRegister r) { return int64_t(offsetof(BlockState, sreg) + 4 * size_t(r)); };
  const int64_t dims = int64_t(offsetof(BlockState, block_dim));
  const std::pair<int64_t, uint32_t> fields[] = {
      {dims, shape[0]},
      {dims + 4, shape[1]},
      {dims + 8, shape[2]},
      {int64_t(offsetof(BlockState, nthreads)), shape[0] * shape[1] * shape[2]},
      {sreg(SpecialRegister::NtidX), shape[0]},
      {sreg(SpecialRegister::NtidY), shape[1]},
      {sreg(SpecialRegister::NtidZ), shape[2]}};
  return fold_loads(f, fields) ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
