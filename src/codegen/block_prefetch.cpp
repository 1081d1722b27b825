// Prefetches for the next block's stores (see block_prefetch.h).
#include "codegen/block_prefetch.h"
#include "support/config.h"

#include <cstddef>
#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <llvm/ADT/DenseMap.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>

#include "codegen/block_state.h"

namespace mimic::codegen {

using namespace llvm;

namespace {

// Strides under a page are the hardware prefetcher's: the next block's lines follow this
// block's in the same run.
constexpr int64_t kFarStride = 4096;

// The loads of %ctaid.x: block->sreg[CtaidX], with %block the kernel's second argument.
SmallVector<LoadInst*, 4> ctaid_x_loads(Function& f) {
  SmallVector<LoadInst*, 4> loads;
  Argument* block = f.getArg(1);
  const DataLayout& dl = f.getDataLayout();
  const int64_t want = int64_t(offsetof(BlockState, sreg) + sizeof(uint32_t) * size_t(SpecialRegister::CtaidX));
  for (BasicBlock& bb : f)
    for (Instruction& i : bb)
      if (auto* load = dyn_cast<LoadInst>(&i); load && load->getType()->isIntegerTy(32)) {
        APInt offset(dl.getIndexTypeSizeInBits(load->getPointerOperandType()), 0);
        const Value* base = load->getPointerOperand()->stripAndAccumulateConstantOffsets(dl, offset, true);
        if (base == block && offset.getSExtValue() == want)
          loads.push_back(load);
      }
  return loads;
}

constexpr uint64_t kLine = 64;

// What a vector store (or masked store) writes.
Type* stored_type(Instruction& i) {
  if (auto* store = dyn_cast<StoreInst>(&i))
    return store->getValueOperand()->getType();
  return cast<IntrinsicInst>(i).getArgOperand(0)->getType();
}

// The pointer a vector store writes through, or null.
Value* vector_store_pointer(Instruction& i) {
  if (auto* store = dyn_cast<StoreInst>(&i))
    return store->getValueOperand()->getType()->isVectorTy() && store->isSimple() ? store->getPointerOperand() : nullptr;
  if (auto* call = dyn_cast<IntrinsicInst>(&i); call && call->getIntrinsicID() == Intrinsic::masked_store)
    return call->getArgOperand(1);
  return nullptr;
}

} // namespace

bool store_prefetch_enabled() {
  return config::switched_on("MIMIC_STORE_PREFETCH");
}

PreservedAnalyses PrefetchNextBlockStores::run(Function& f, FunctionAnalysisManager& am) {
  if (!store_prefetch_enabled() || !f.getName().starts_with("mimic_kernel_") || f.arg_size() < 2)
    return PreservedAnalyses::all();
  SmallVector<LoadInst*, 4> ctaids = ctaid_x_loads(f);
  if (ctaids.empty())
    return PreservedAnalyses::all();
  auto& se = am.getResult<ScalarEvolutionAnalysis>(f);
  auto& li = am.getResult<LoopAnalysis>(f);
  // %ctaid.x + 1 does not wrap: block indices are below 2^31.
  ValueToSCEVMapTy next_block;
  for (LoadInst* load : ctaids)
    next_block[load] = se.getAddExpr(se.getSCEV(load), se.getOne(load->getType()), SCEV::FlagNUW);

  struct Site {
    Instruction* store;
    Value* pointer;
    const SCEV* stride; // from this block's address to the next block's
    Loop* outermost;
  };
  SmallVector<Site, 16> sites;
  for (BasicBlock& bb : f) {
    Loop* loop = li.getLoopFor(&bb);
    if (!loop)
      continue;
    Loop* outermost = loop->getOutermostLoop();
    if (!outermost->getLoopPreheader())
      continue;
    for (Instruction& i : bb) {
      Value* pointer = vector_store_pointer(i);
      if (!pointer || !se.isSCEVable(pointer->getType()))
        continue;
      const SCEV* here = se.getSCEV(pointer);
      const SCEV* there = SCEVParameterRewriter::rewrite(here, se, next_block);
      if (there == here)
        continue;
      const SCEV* stride = se.getMinusSCEV(there, here);
      if (isa<SCEVCouldNotCompute>(stride) || !se.isLoopInvariant(stride, outermost))
        continue;
      if (auto* c = dyn_cast<SCEVConstant>(stride); c && c->getAPInt().abs().slt(kFarStride))
        continue;
      sites.push_back({&i, pointer, stride, outermost});
    }
  }
  if (sites.empty())
    return PreservedAnalyses::all();

  SCEVExpander expander(se, "next.block");
  DenseMap<std::pair<const SCEV*, Loop*>, Value*> far_strides; // the stride, or 0 when short
  bool changed = false;
  for (const Site& s : sites) {
    Instruction* at = s.outermost->getLoopPreheader()->getTerminator();
    Value*& stride = far_strides[{s.stride, s.outermost}];
    if (!stride) {
      if (!expander.isSafeToExpand(s.stride) || !expander.isSafeToExpandAt(s.stride, at))
        continue;
      Value* v = expander.expandCodeFor(s.stride, Type::getInt64Ty(f.getContext()), at);
      if (!isa<Constant>(v)) { // a stride known only at run time: short ones prefetch nothing new
        IRBuilder<> b(at);
        Value* magnitude = b.CreateBinaryIntrinsic(Intrinsic::abs, v, b.getFalse());
        v = b.CreateSelect(b.CreateICmpSGE(magnitude, b.getInt64(kFarStride)), v, b.getInt64(0), "next.block.stride");
      }
      stride = v;
    }
    IRBuilder<> b(s.store);
    Value* target = b.CreateGEP(b.getInt8Ty(), s.pointer, stride, "next.block.line");
    // One prefetch per line the store covers (a joined run of 64 x i32 covers four).
    const uint64_t bytes = f.getDataLayout().getTypeStoreSize(stored_type(*s.store)).getFixedValue();
    for (uint64_t line = 0; line < std::max<uint64_t>(1, bytes / kLine); ++line) {
      Value* at = line ? b.CreateConstGEP1_64(b.getInt8Ty(), target, line * kLine) : target;
      b.CreateIntrinsic(Intrinsic::prefetch, {at->getType()}, {at, b.getInt32(1), b.getInt32(3), b.getInt32(1)});
    }
    changed = true;
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
