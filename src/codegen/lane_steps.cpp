// Vectors put together lane by lane from one scalar plus constants (see lane_steps.h).
#include "codegen/lane_steps.h"
#include "support/config.h"

#include <optional>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Transforms/Utils/Local.h>

namespace mimic::codegen {

using namespace llvm;

namespace {

// A lane's value: `base + offset`; no base for a poison lane.
struct Lane {
  Value* base = nullptr;
  APInt offset;
};

Lane scalar(Value* v, unsigned bits) {
  using namespace PatternMatch;
  Value* x;
  const APInt* c;
  APInt offset(bits, 0);
  for (unsigned depth = 0; depth < 8 && match(v, m_Add(m_Value(x), m_APInt(c))); ++depth) {
    offset += *c;
    v = x;
  }
  return {v, offset};
}

// Lane `k` of `v`, through insertelement, shufflevector and adds of constant vectors;
// nullopt where it cannot tell. `inserts` gathers the insertelements passed.
std::optional<Lane> lane_of(Value* v, unsigned k, unsigned bits, SmallPtrSetImpl<Value*>& inserts,
                            unsigned depth = 0) {
  if (depth > 16)
    return std::nullopt;
  if (isa<PoisonValue>(v) || isa<UndefValue>(v))
    return Lane{nullptr, APInt(bits, 0)};
  if (auto* insert = dyn_cast<InsertElementInst>(v)) {
    auto* at = dyn_cast<ConstantInt>(insert->getOperand(2));
    if (!at)
      return std::nullopt;
    if (at->getZExtValue() == k) {
      inserts.insert(insert);
      return scalar(insert->getOperand(1), bits);
    }
    return lane_of(insert->getOperand(0), k, bits, inserts, depth + 1);
  }
  if (auto* shuffle = dyn_cast<ShuffleVectorInst>(v)) {
    const int m = shuffle->getMaskValue(k);
    if (m < 0)
      return Lane{nullptr, APInt(bits, 0)};
    const unsigned left = cast<FixedVectorType>(shuffle->getOperand(0)->getType())->getNumElements();
    return unsigned(m) < left ? lane_of(shuffle->getOperand(0), unsigned(m), bits, inserts, depth + 1)
                              : lane_of(shuffle->getOperand(1), unsigned(m) - left, bits, inserts, depth + 1);
  }
  if (auto* add = dyn_cast<BinaryOperator>(v); add && add->getOpcode() == Instruction::Add) {
    auto* constants = dyn_cast<Constant>(add->getOperand(1));
    if (!constants)
      return std::nullopt;
    std::optional<Lane> lane = lane_of(add->getOperand(0), k, bits, inserts, depth + 1);
    Constant* c = constants->getAggregateElement(k);
    if (!lane || !c)
      return std::nullopt;
    if (isa<PoisonValue>(c) || isa<UndefValue>(c))
      return Lane{nullptr, APInt(bits, 0)};
    auto* ci = dyn_cast<ConstantInt>(c);
    if (!ci)
      return std::nullopt;
    lane->offset += ci->getValue();
    return lane;
  }
  return std::nullopt;
}

} // namespace

bool lane_steps_enabled() {
  return config::switched_on("MIMIC_LANE_STEPS");
}

PreservedAnalyses SplatLaneSteps::run(Function& f, FunctionAnalysisManager&) {
  if (!lane_steps_enabled())
    return PreservedAnalyses::all();
  // The last vector of each build: one whose users are not builds of their own.
  SmallVector<Instruction*, 16> builds;
  for (BasicBlock& bb : f)
    for (Instruction& i : bb) {
      auto* type = dyn_cast<FixedVectorType>(i.getType());
      if (!type || !type->getElementType()->isIntegerTy() || type->getNumElements() < 4 ||
          !(isa<InsertElementInst>(i) || isa<ShuffleVectorInst>(i)))
        continue;
      bool last = true;
      for (User* u : i.users())
        if (isa<InsertElementInst>(u) || isa<ShuffleVectorInst>(u))
          last = false;
      if (last)
        builds.push_back(&i);
    }
  bool changed = false;
  for (Instruction* build : builds) {
    auto* type = cast<FixedVectorType>(build->getType());
    const unsigned lanes = type->getNumElements(), bits = type->getScalarSizeInBits();
    Value* base = nullptr;
    SmallVector<Constant*, 16> offsets;
    SmallPtrSet<Value*, 16> inserts;
    std::optional<APInt> first_offset;
    bool ok = true, differ = false;
    for (unsigned k = 0; k < lanes && ok; ++k) {
      std::optional<Lane> lane = lane_of(build, k, bits, inserts);
      if (!lane) {
        ok = false;
      } else if (!lane->base) {
        offsets.push_back(PoisonValue::get(type->getElementType()));
      } else {
        ok = !base || base == lane->base;
        base = lane->base;
        if (!first_offset)
          first_offset = lane->offset;
        differ |= *first_offset != lane->offset;
        offsets.push_back(ConstantInt::get(type->getElementType(), lane->offset));
      }
    }
    // Only builds of at least two inserted scalars whose lanes differ: a splat (plus
    // constants) is one already.
    if (!ok || !base || !differ || inserts.size() < 2 || isa<Constant>(base))
      continue;
    IRBuilder<> b(build);
    Value* splat = b.CreateVectorSplat(lanes, base, "lane.base");
    Value* steps = b.CreateAdd(splat, ConstantVector::get(offsets), "lane.steps");
    build->replaceAllUsesWith(steps);
    RecursivelyDeleteTriviallyDeadInstructions(build);
    changed = true;
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
