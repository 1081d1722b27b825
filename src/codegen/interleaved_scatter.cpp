// Interleaved scatters as one masked store (see interleaved_scatter.h).
#include "codegen/interleaved_scatter.h"
#include "codegen/vector_lanes.h"
#include "support/config.h"

#include <algorithm>
#include <map>
#include <optional>

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

namespace mimic::codegen {

using namespace llvm;

namespace {

// out[l * F + k] = parts[k][l]: the parts (F a power of two, one vector type) interleaved.
Value* interleave(IRBuilder<>& b, ArrayRef<Value*> parts) {
  const unsigned f = unsigned(parts.size());
  const unsigned n = cast<FixedVectorType>(parts[0]->getType())->getNumElements();
  SmallVector<Value*, 8> level(parts.begin(), parts.end());
  while (level.size() > 1) { // concatenate pairs until one vector holds part k at k * n
    SmallVector<Value*, 8> next;
    for (size_t i = 0; i < level.size(); i += 2) {
      const unsigned width = cast<FixedVectorType>(level[i]->getType())->getNumElements();
      SmallVector<int, 64> mask;
      for (unsigned e = 0; e < 2 * width; ++e)
        mask.push_back(int(e));
      next.push_back(b.CreateShuffleVector(level[i], level[i + 1], mask));
    }
    level = std::move(next);
  }
  SmallVector<int, 128> mask;
  for (unsigned l = 0; l < n; ++l)
    for (unsigned k = 0; k < f; ++k)
      mask.push_back(int(k * n + l));
  return b.CreateShuffleVector(level[0], mask, "interleaved");
}

struct Group {
  SmallVector<IntrinsicInst*, 8> calls; // in program order
  SmallVector<int64_t, 8> offsets;      // each call's constant byte offset
  Address address;                      // the first call's
  Lanes lanes;
};

// Joins one group's scatters into one masked store where the last one is, or returns
// false with the IR as it was. by_k[k] is the scatter at offset k * E in each lane's run.
bool join(const Group& g, ArrayRef<IntrinsicInst*> by_k) {
  IntrinsicInst* first = g.calls.front();
  IntrinsicInst* last = g.calls.back();
  // Nothing between the scatters may read or write memory: they all move to the last.
  for (auto it = std::next(first->getIterator()); &*it != last; ++it) {
    auto* call = dyn_cast<IntrinsicInst>(&*it);
    if ((!call || !llvm::is_contained(g.calls, call)) && it->mayReadOrWriteMemory())
      return false;
  }
  Value* pointers = by_k[0]->getArgOperand(1);
  const unsigned n = cast<FixedVectorType>(pointers->getType())->getNumElements();
  Align align = by_k[0]->getParamAlign(1).valueOrOne();
  for (IntrinsicInst* call : g.calls)
    align = std::min(align, call->getParamAlign(1).valueOrOne());

  IRBuilder<> b(last);
  Value* start = b.CreateExtractElement(pointers, uint64_t(0), "run.start");
  Instruction* slow_at = nullptr;
  if (g.lanes.may_wrap) {
    // The lanes are evenly spaced unless a narrower type wrapped before its extension; then
    // the last lane is not (n - 1) * S past the first, and the scatters run as they were.
    Value* end = b.CreateExtractElement(pointers, uint64_t(n - 1));
    Type* i64 = b.getInt64Ty();
    Value* span = b.CreateSub(b.CreatePtrToInt(end, i64), b.CreatePtrToInt(start, i64));
    Value* even = b.CreateICmpEQ(span, b.getInt64(uint64_t(int64_t(n - 1) * g.lanes.stride)), "run.even");
    Instruction* then_term = nullptr;
    SplitBlockAndInsertIfThenElse(even, last->getIterator(), &then_term, &slow_at);
    b.SetInsertPoint(then_term);
  }
  SmallVector<Value*, 8> masks, data;
  for (IntrinsicInst* call : by_k) {
    data.push_back(call->getArgOperand(0));
    masks.push_back(call->getArgOperand(2));
  }
  b.CreateMaskedStore(interleave(b, data), start, align, interleave(b, masks));
  for (IntrinsicInst* call : g.calls) {
    if (slow_at)
      call->moveBefore(slow_at->getIterator());
    else
      call->eraseFromParent();
  }
  return true;
}

} // namespace

bool interleaved_scatter_enabled() {
  return config::switched_on("MIMIC_INTERLEAVED_SCATTER");
}

PreservedAnalyses JoinInterleavedScatters::run(Function& f, FunctionAnalysisManager&) {
  if (!interleaved_scatter_enabled())
    return PreservedAnalyses::all();
  const DataLayout& dl = f.getDataLayout();
  SmallVector<Group, 8> groups;
  for (BasicBlock& bb : f) {
    // Scatters of this block by (base, index, scale, type), in program order.
    std::map<std::tuple<Value*, Value*, int64_t, Type*>, size_t> key_to_group;
    for (Instruction& i : bb) {
      auto* call = dyn_cast<IntrinsicInst>(&i);
      if (!call || call->getIntrinsicID() != Intrinsic::masked_scatter ||
          !isa<FixedVectorType>(call->getArgOperand(0)->getType()))
        continue;
      std::optional<Address> a = decompose(call->getArgOperand(1), dl);
      if (!a)
        continue;
      auto [it, added] = key_to_group.try_emplace({a->base, a->index, a->scale, call->getArgOperand(0)->getType()}, groups.size());
      if (added)
        groups.push_back(Group{{}, {}, *a, {}});
      groups[it->second].calls.push_back(call);
      groups[it->second].offsets.push_back(a->offset);
    }
  }
  bool changed = false;
  for (Group& g : groups) {
    const unsigned f = unsigned(g.calls.size());
    if (f != 2 && f != 4 && f != 8)
      continue;
    std::optional<Lanes> lanes = lanes_of(g.address.index);
    if (!lanes)
      continue;
    Type* element = g.calls[0]->getArgOperand(0)->getType()->getScalarType();
    const int64_t e = int64_t(dl.getTypeAllocSize(element));
    if (e != int64_t(dl.getTypeStoreSize(element)) || e == 0)
      continue;
    g.lanes = Lanes{lanes->stride * g.address.scale, lanes->may_wrap || g.address.widened};
    if (g.lanes.stride != int64_t(f) * e)
      continue;
    // The scatters' offsets: k * E past the least, each k once.
    const int64_t least = *std::min_element(g.offsets.begin(), g.offsets.end());
    SmallVector<IntrinsicInst*, 8> by_k(f, nullptr);
    bool complete = true;
    for (size_t m = 0; m < f && complete; ++m) {
      const int64_t d = g.offsets[m] - least, k = d / e;
      complete = d % e == 0 && k < int64_t(f) && !by_k[size_t(k)];
      if (complete)
        by_k[size_t(k)] = g.calls[m];
    }
    if (complete)
      changed |= join(g, by_k);
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
