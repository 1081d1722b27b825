// Prefetches for the next block's stores and loads (see block_prefetch.h).
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

// A vector access (plain or masked): the pointer, what it moves, and whether it writes.
struct VectorAccess {
  Value* pointer = nullptr;
  Type* type = nullptr;
  bool write = false;
};

VectorAccess vector_access(Instruction& i, bool stores, bool loads) {
  if (auto* store = dyn_cast<StoreInst>(&i); store && stores) {
    Type* t = store->getValueOperand()->getType();
    if (t->isVectorTy() && store->isSimple())
      return {store->getPointerOperand(), t, true};
  } else if (auto* load = dyn_cast<LoadInst>(&i); load && loads) {
    if (load->getType()->isVectorTy() && load->isSimple())
      return {load->getPointerOperand(), load->getType(), false};
  } else if (auto* call = dyn_cast<IntrinsicInst>(&i)) {
    if (call->getIntrinsicID() == Intrinsic::masked_store && stores)
      return {call->getArgOperand(1), call->getArgOperand(0)->getType(), true};
    if (call->getIntrinsicID() == Intrinsic::masked_load && loads)
      return {call->getArgOperand(0), call->getType(), false};
  }
  return {};
}

} // namespace

bool store_prefetch_enabled() {
  return config::switched_on("MIMIC_STORE_PREFETCH");
}

bool load_prefetch_enabled() {
  return config::switched_on("MIMIC_LOAD_PREFETCH");
}

PreservedAnalyses PrefetchNextBlock::run(Function& f, FunctionAnalysisManager& am) {
  const bool stores = store_prefetch_enabled(), loads = load_prefetch_enabled();
  if ((!stores && !loads) || !f.getName().starts_with("mimic_kernel_") || f.arg_size() < 2)
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
    Instruction* access;
    VectorAccess what;
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
      VectorAccess what = vector_access(i, stores, loads);
      if (!what.pointer || !se.isSCEVable(what.pointer->getType()))
        continue;
      const SCEV* here = se.getSCEV(what.pointer);
      const SCEV* there = SCEVParameterRewriter::rewrite(here, se, next_block);
      if (there == here)
        continue;
      const SCEV* stride = se.getMinusSCEV(there, here);
      if (isa<SCEVCouldNotCompute>(stride) || !se.isLoopInvariant(stride, outermost))
        continue;
      if (auto* c = dyn_cast<SCEVConstant>(stride); c && c->getAPInt().abs().slt(kFarStride))
        continue;
      sites.push_back({&i, what, stride, outermost});
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
    IRBuilder<> b(s.access);
    Value* target = b.CreateGEP(b.getInt8Ty(), s.what.pointer, stride, "next.block.line");
    // One prefetch per line the access covers (a joined run of 64 x i32 covers four):
    // for writing into L1 (prefetchw), for reading into L2 (prefetcht1).
    const uint64_t bytes = f.getDataLayout().getTypeStoreSize(s.what.type).getFixedValue();
    const int rw = s.what.write ? 1 : 0, locality = s.what.write ? 3 : 2;
    for (uint64_t line = 0; line < std::max<uint64_t>(1, bytes / kLine); ++line) {
      Value* at = line ? b.CreateConstGEP1_64(b.getInt8Ty(), target, line * kLine) : target;
      b.CreateIntrinsic(Intrinsic::prefetch, {at->getType()}, {at, b.getInt32(rw), b.getInt32(locality), b.getInt32(1)});
    }
    changed = true;
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
