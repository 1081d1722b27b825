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
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>

#include "codegen/block_registers.h"
#include "codegen/vector_lanes.h"

namespace mimic::codegen {

using namespace llvm;

namespace {

// A store's stride under a page is the hardware prefetcher's: the next block's lines
// follow this block's in the same run. A load's is left to it only under a quarter page: a
// block that reads its data a grid's width apart (reduce's grid-stride rounds, 1 MiB
// apart, its next block's 1 KiB beside each) jumps away from the next block's lines before
// the hardware sees them as a run; prefetched beside this block's, they come from DRAM in
// runs of twice the length (reduce at four times the LLC: 1.64-1.78x OpenMP -> 1.26-1.33x;
// triad 1.08-1.12 -> 0.88-0.94). A tile's next block 64 or 128 bytes on (tiled SGEMM, the
// stencil's halo tile) is in lines the hardware fetches with these.
constexpr int64_t kFarStore = 4096;
constexpr int64_t kFarLoad = 1024;

int64_t far_stride(bool write) {
  return write ? kFarStore : kFarLoad;
}

// The loads of %ctaid.x: block->sreg[CtaidX].
SmallVector<LoadInst*, 4> ctaid_x_loads(Function& f) {
  SmallVector<LoadInst*, 4> loads;
  for (BasicBlock& bb : f)
    for (Instruction& i : bb)
      if (block_register_read(&i) == SpecialRegister::CtaidX)
        loads.push_back(cast<LoadInst>(&i));
  return loads;
}

constexpr uint64_t kLine = 64;

// For the stride's sake only, extensions taken through the sums and products under them
// (zext(a + b) as zext(a) + zext(b)), as if the 32-bit index arithmetic did not wrap between
// a block and the next: stencil's x = 32 * %ctaid.x + %tid.x, extended, moves 128 bytes,
// where SCEV keeps zext(x + 32) - zext(x), a stride known only at run time, and every
// vector access had a prefetch that came out at a stride of 0, for nothing. Used only to
// leave such accesses without prefetches: a wrong guess costs a prefetch that was not made.
struct DistributeExtensions : SCEVRewriteVisitor<DistributeExtensions> {
  using SCEVRewriteVisitor::SCEVRewriteVisitor;
  const SCEV* distribute(const SCEV* op, Type* to, bool sign) {
    auto ext = [&](const SCEV* v) { return visit(sign ? SE.getSignExtendExpr(v, to) : SE.getZeroExtendExpr(v, to)); };
    SmallVector<const SCEV*, 4> ops;
    if (auto* add = dyn_cast<SCEVAddExpr>(op)) {
      for (const SCEV* o : add->operands())
        ops.push_back(ext(o));
      return SE.getAddExpr(ops);
    }
    if (auto* mul = dyn_cast<SCEVMulExpr>(op)) {
      for (const SCEV* o : mul->operands())
        ops.push_back(ext(o));
      return SE.getMulExpr(ops);
    }
    return nullptr;
  }
  const SCEV* visitZeroExtendExpr(const SCEVZeroExtendExpr* e) {
    if (const SCEV* d = distribute(e->getOperand(), e->getType(), false))
      return d;
    return SCEVRewriteVisitor::visitZeroExtendExpr(e);
  }
  const SCEV* visitSignExtendExpr(const SCEVSignExtendExpr* e) {
    if (const SCEV* d = distribute(e->getOperand(), e->getType(), true))
      return d;
    return SCEVRewriteVisitor::visitSignExtendExpr(e);
  }
};

// A vector access (plain or masked, or a gather or scatter): the pointer (a vector of
// pointers for a gather or scatter), what it moves, and whether it writes.
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
    if (call->getIntrinsicID() == Intrinsic::masked_scatter && stores)
      return {call->getArgOperand(1), call->getArgOperand(0)->getType(), true};
    if (call->getIntrinsicID() == Intrinsic::masked_gather && loads)
      return {call->getArgOperand(0), call->getType(), false};
  }
  return {};
}

// Lane 0 of a vector the vectoriser made, as SCEV: of integers (splats, constant vectors,
// sums, differences, constant multiples and shifts, extensions, the vector induction as an
// add recurrence over its loop), or of pointers (base + index * scale + offset, as a
// 64-bit integer). Null when it is anything else.
const SCEV* lane0(Value* v, ScalarEvolution& se, LoopInfo& li, unsigned depth);

// A scalar integer's SCEV, or a pointer's as a 64-bit integer, where lane 0 of a vector
// (extractelement ..., 0: the start of a joined run, the address the vectoriser took from
// its vector of indices) and integers turned into pointers are seen through.
const SCEV* scalar(Value* v, ScalarEvolution& se, LoopInfo& li, unsigned depth) {
  struct SeeThrough : SCEVRewriteVisitor<SeeThrough> {
    LoopInfo& li;
    unsigned depth;
    SeeThrough(ScalarEvolution& se, LoopInfo& li, unsigned depth) : SCEVRewriteVisitor(se), li(li), depth(depth) {}
    // What an unknown value is, as an integer of `type`'s width, or null.
    const SCEV* known(Value* v, Type* type) {
      const SCEV* x = nullptr;
      if (auto* lane = dyn_cast<ExtractElementInst>(v)) {
        if (auto* index = dyn_cast<ConstantInt>(lane->getIndexOperand()); index && index->isZero())
          x = lane0(lane->getVectorOperand(), SE, li, depth + 1);
      } else if (auto* cast = dyn_cast<IntToPtrInst>(v)) {
        x = scalar(cast->getOperand(0), SE, li, depth + 1);
      }
      return x && x->getType()->isIntegerTy() ? SE.getTruncateOrZeroExtend(x, type) : nullptr;
    }
    const SCEV* visitUnknown(const SCEVUnknown* u) {
      if (!u->getType()->isIntegerTy())
        return u;
      const SCEV* x = known(u->getValue(), u->getType());
      return x ? x : u;
    }
    const SCEV* visitPtrToIntExpr(const SCEVPtrToIntExpr* e) {
      if (auto* u = dyn_cast<SCEVUnknown>(e->getOperand()))
        if (const SCEV* x = known(u->getValue(), e->getType()))
          return x;
      return SCEVRewriteVisitor::visitPtrToIntExpr(e);
    }
  };
  if (depth > 16 || !se.isSCEVable(v->getType()))
    return nullptr;
  const SCEV* x = se.getSCEV(v);
  if (x->getType()->isPointerTy())
    x = se.getPtrToIntExpr(x, Type::getInt64Ty(v->getContext()));
  if (isa<SCEVCouldNotCompute>(x))
    return nullptr;
  SeeThrough see(se, li, depth);
  return see.visit(x);
}

const SCEV* lane0(Value* v, ScalarEvolution& se, LoopInfo& li, unsigned depth) {
  Type* t = v->getType();
  if (depth > 16)
    return nullptr;
  if (!t->isVectorTy())
    return scalar(v, se, li, depth);
  Type* i64 = Type::getInt64Ty(v->getContext());
  if (t->getScalarType()->isPointerTy()) {
    auto* gep = dyn_cast<GetElementPtrInst>(v);
    std::optional<Address> address = gep ? decompose(gep, gep->getDataLayout()) : std::nullopt;
    const SCEV* index = address ? lane0(address->index, se, li, depth + 1) : nullptr;
    const SCEV* base = index ? scalar(address->base, se, li, depth + 1) : nullptr;
    if (!base)
      return nullptr;
    index = se.getTruncateOrSignExtend(index, i64);
    const SCEV* bytes = se.getMulExpr(index, se.getConstant(i64, uint64_t(address->scale)));
    return se.getAddExpr(se.getAddExpr(se.getTruncateOrZeroExtend(base, i64), bytes), se.getConstant(i64, uint64_t(address->offset)));
  }
  if (!t->getScalarType()->isIntegerTy())
    return nullptr;
  if (Value* splat = getSplatValue(v))
    return lane0(splat, se, li, depth + 1);
  if (auto* c = dyn_cast<Constant>(v)) {
    auto* first = dyn_cast_or_null<ConstantInt>(c->getAggregateElement(0u));
    return first ? se.getConstant(first) : nullptr;
  }
  auto operand = [&](Instruction* i, unsigned k) { return lane0(i->getOperand(k), se, li, depth + 1); };
  if (auto* cast = dyn_cast<CastInst>(v)) {
    const SCEV* x = operand(cast, 0);
    if (!x || !x->getType()->isIntegerTy())
      return nullptr;
    switch (cast->getOpcode()) {
    case Instruction::ZExt: return se.getZeroExtendExpr(x, t->getScalarType());
    case Instruction::SExt: return se.getSignExtendExpr(x, t->getScalarType());
    case Instruction::Trunc: return se.getTruncateExpr(x, t->getScalarType());
    default: return nullptr;
    }
  }
  if (auto* phi = dyn_cast<PHINode>(v)) { // the vector induction: start, then + step each trip
    Loop* loop = li.getLoopFor(phi->getParent());
    if (!loop || loop->getHeader() != phi->getParent() || phi->getNumIncomingValues() != 2 ||
        !loop->getLoopPreheader() || !loop->getLoopLatch())
      return nullptr;
    auto* next = dyn_cast<BinaryOperator>(phi->getIncomingValueForBlock(loop->getLoopLatch()));
    if (!next || next->getOpcode() != Instruction::Add || (next->getOperand(0) != phi && next->getOperand(1) != phi))
      return nullptr;
    const SCEV* start = lane0(phi->getIncomingValueForBlock(loop->getLoopPreheader()), se, li, depth + 1);
    const SCEV* step = operand(next, next->getOperand(0) == phi ? 1 : 0);
    if (!start || !step || start->getType() != step->getType() || !se.isLoopInvariant(step, loop))
      return nullptr;
    return se.getAddRecExpr(start, step, loop, SCEV::FlagAnyWrap);
  }
  auto* op = dyn_cast<BinaryOperator>(v);
  const SCEV* a = op ? operand(op, 0) : nullptr;
  const SCEV* b = a ? operand(op, 1) : nullptr;
  if (!b || a->getType() != b->getType())
    return nullptr;
  switch (op->getOpcode()) {
  case Instruction::Or:
    return cast<PossiblyDisjointInst>(op)->isDisjoint() ? se.getAddExpr(a, b) : nullptr;
  case Instruction::Add: return se.getAddExpr(a, b);
  case Instruction::Sub: return se.getMinusSCEV(a, b);
  case Instruction::Mul: return se.getMulExpr(a, b);
  case Instruction::Shl:
    if (auto* c = dyn_cast<SCEVConstant>(b); c && c->getAPInt().ult(a->getType()->getIntegerBitWidth()))
      return se.getMulExpr(a, se.getConstant(APInt::getOneBitSet(a->getType()->getIntegerBitWidth(),
                                                                 unsigned(c->getAPInt().getZExtValue()))));
    return nullptr;
  default:
    return nullptr;
  }
}

// Where an access starts (a 64-bit integer SCEV) and how many bytes from there it covers:
// a plain or masked vector access from its pointer; a gather or scatter from its lane 0
// and its lanes' spacing, where that is known, not negative and at most a line (sparser
// lanes would want a prefetch each, not the lines between them).
struct Extent {
  const SCEV* start = nullptr;
  uint64_t bytes = 0;
};

Extent extent_of(const VectorAccess& a, ScalarEvolution& se, LoopInfo& li, const DataLayout& dl) {
  if (!a.pointer->getType()->isVectorTy())
    return {scalar(a.pointer, se, li, 0), dl.getTypeStoreSize(a.type).getFixedValue()};
  std::optional<Address> address = decompose(a.pointer, dl);
  std::optional<Lanes> spacing = address ? lanes_of(address->index) : std::nullopt;
  if (!spacing || spacing->stride < 0 || spacing->stride * address->scale > int64_t(kLine)) // dense ones only
    return {};
  const uint64_t element = dl.getTypeStoreSize(a.type->getScalarType()).getFixedValue();
  const uint64_t lanes = cast<FixedVectorType>(a.type)->getNumElements();
  return {lane0(a.pointer, se, li, 0), uint64_t(spacing->stride * address->scale) * (lanes - 1) + element};
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
    Extent extent;
    const SCEV* stride; // from this block's address to the next block's
    Loop* outermost;
  };
  const DataLayout& dl = f.getDataLayout();
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
      if (!what.pointer)
        continue;
      Extent extent = extent_of(what, se, li, dl);
      if (!extent.start)
        continue;
      const SCEV* here = extent.start;
      const SCEV* there = SCEVParameterRewriter::rewrite(here, se, next_block);
      if (there == here)
        continue;
      const SCEV* stride = se.getMinusSCEV(there, here);
      if (isa<SCEVCouldNotCompute>(stride) || !se.isLoopInvariant(stride, outermost))
        continue;
      const int64_t far = far_stride(what.write);
      if (auto* c = dyn_cast<SCEVConstant>(stride); c && c->getAPInt().abs().slt(far))
        continue;
      // A stride SCEV knows only at run time may be a short one with the extensions taken
      // through: then there is nothing to prefetch.
      DistributeExtensions distribute(se);
      const SCEV* hint = se.getMinusSCEV(distribute.visit(there), distribute.visit(here));
      if (auto* c = dyn_cast<SCEVConstant>(hint); c && c->getAPInt().abs().slt(far))
        continue;
      sites.push_back({&i, what, extent, stride, outermost});
    }
  }
  if (sites.empty())
    return PreservedAnalyses::all();

  SCEVExpander expander(se, "next.block");
  // The stride, or 0 where it is short for the kind of access (known only at run time).
  DenseMap<std::tuple<const SCEV*, Loop*, unsigned>, Value*> far_strides;
  // Lines another site of the same block prefetches already: a scan's four gathers of a
  // thread's four items cover the same lines, and the first one's prefetches serve all
  // four; a prefetch for writing serves the loads of the lines too (`out[i] += x`).
  SmallVector<const Site*, 16> done;
  auto covered = [&](const Site& s) {
    SmallVector<const Site*, 16> others(done);
    if (!s.what.write)
      for (const Site& w : sites)
        if (w.what.write)
          others.push_back(&w);
    for (const Site* d : others) {
      if (d->access->getParent() != s.access->getParent() || (d->what.write != s.what.write && !d->what.write) ||
          d->stride != s.stride)
        continue;
      auto* shift = dyn_cast<SCEVConstant>(se.getMinusSCEV(s.extent.start, d->extent.start));
      if (shift && shift->getAPInt().sge(0) && shift->getAPInt().getSExtValue() + s.extent.bytes <= d->extent.bytes + kLine - 1)
        return true;
    }
    return false;
  };
  bool changed = false;
  for (const Site& s : sites) {
    if (covered(s))
      continue;
    Instruction* at = s.outermost->getLoopPreheader()->getTerminator();
    Value*& stride = far_strides[{s.stride, s.outermost, unsigned(s.what.write)}];
    if (!stride) {
      if (!expander.isSafeToExpand(s.stride) || !expander.isSafeToExpandAt(s.stride, at))
        continue;
      Value* v = expander.expandCodeFor(s.stride, Type::getInt64Ty(f.getContext()), at);
      if (!isa<Constant>(v)) { // a stride known only at run time: short ones prefetch nothing new
        IRBuilder<> b(at);
        Value* magnitude = b.CreateBinaryIntrinsic(Intrinsic::abs, v, b.getFalse());
        v = b.CreateSelect(b.CreateICmpSGE(magnitude, b.getInt64(far_stride(s.what.write))), v, b.getInt64(0), "next.block.stride");
      }
      stride = v;
    }
    IRBuilder<> b(s.access);
    Value* pointer = s.what.pointer;
    if (pointer->getType()->isVectorTy()) // a gather's or scatter's lane 0
      pointer = b.CreateExtractElement(pointer, uint64_t(0));
    Value* target = b.CreateGEP(b.getInt8Ty(), pointer, stride, "next.block.line");
    // One prefetch per line the access covers (a joined run of 64 x i32 covers four):
    // for writing into L1 (prefetchw), for reading into L2 (prefetcht1).
    const int rw = s.what.write ? 1 : 0, locality = s.what.write ? 3 : 2;
    for (uint64_t line = 0; line < std::max<uint64_t>(1, (s.extent.bytes + kLine - 1) / kLine); ++line) {
      Value* at = line ? b.CreateConstGEP1_64(b.getInt8Ty(), target, line * kLine) : target;
      b.CreateIntrinsic(Intrinsic::prefetch, {at->getType()}, {at, b.getInt32(rw), b.getInt32(locality), b.getInt32(1)});
    }
    done.push_back(&s);
    changed = true;
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
