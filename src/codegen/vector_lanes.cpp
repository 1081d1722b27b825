// Lanes and addresses of vectorised code (see vector_lanes.h).
#include "codegen/vector_lanes.h"

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Operator.h>

namespace mimic::codegen {

using namespace llvm;

namespace {

constexpr unsigned kDepth = 16;

std::optional<Lanes> lanes_in(Value* v, SmallPtrSetImpl<PHINode*>& phis, unsigned depth) {
  if (depth > kDepth || !v->getType()->isVectorTy() || !v->getType()->getScalarType()->isIntegerTy())
    return std::nullopt;
  if (getSplatValue(v) || isa<ConstantAggregateZero>(v))
    return Lanes{};
  if (auto* c = dyn_cast<ConstantDataVector>(v)) {
    if (c->getNumElements() < 2)
      return Lanes{};
    const int64_t step = int64_t(c->getElementAsInteger(1) - c->getElementAsInteger(0));
    for (unsigned l = 2; l < c->getNumElements(); ++l)
      if (int64_t(c->getElementAsInteger(l) - c->getElementAsInteger(l - 1)) != step)
        return std::nullopt;
    return Lanes{step, false};
  }
  if (auto* phi = dyn_cast<PHINode>(v)) {
    if (!phis.insert(phi).second)
      return std::nullopt;
    std::optional<Lanes> result;
    for (Value* in : phi->incoming_values()) {
      // The induction's step: the phi plus (or less) a splat keeps its lanes' spacing.
      if (auto* step = dyn_cast<BinaryOperator>(in);
          step && (step->getOpcode() == Instruction::Add || step->getOpcode() == Instruction::Sub) &&
          (step->getOperand(0) == phi || (step->getOpcode() == Instruction::Add && step->getOperand(1) == phi))) {
        Value* other = step->getOperand(0) == phi ? step->getOperand(1) : step->getOperand(0);
        if (getSplatValue(other))
          continue;
        return std::nullopt;
      }
      std::optional<Lanes> l = lanes_in(in, phis, depth + 1);
      if (!l || (result && result->stride != l->stride))
        return std::nullopt;
      result = Lanes{l->stride, l->may_wrap || (result && result->may_wrap)};
    }
    return result;
  }
  if (auto* cast = dyn_cast<CastInst>(v)) {
    if (cast->getOpcode() != Instruction::ZExt && cast->getOpcode() != Instruction::SExt &&
        cast->getOpcode() != Instruction::Trunc)
      return std::nullopt;
    std::optional<Lanes> l = lanes_in(cast->getOperand(0), phis, depth + 1);
    if (l && cast->getOpcode() != Instruction::Trunc)
      l->may_wrap = true;
    return l;
  }
  auto* op = dyn_cast<BinaryOperator>(v);
  if (!op)
    return std::nullopt;
  auto constant = [](Value* x) -> std::optional<int64_t> {
    if (auto* c = dyn_cast_or_null<ConstantInt>(getSplatValue(x)))
      return c->getSExtValue();
    return std::nullopt;
  };
  switch (op->getOpcode()) {
  case Instruction::Or:
    if (!cast<PossiblyDisjointInst>(op)->isDisjoint())
      return std::nullopt;
    [[fallthrough]];
  case Instruction::Add:
  case Instruction::Sub: {
    std::optional<Lanes> a = lanes_in(op->getOperand(0), phis, depth + 1);
    std::optional<Lanes> b = a ? lanes_in(op->getOperand(1), phis, depth + 1) : std::nullopt;
    if (!b)
      return std::nullopt;
    // A disjoint or adds only where one side is a splat (its bits then never meet the other's).
    if (op->getOpcode() == Instruction::Or && a->stride && b->stride)
      return std::nullopt;
    return Lanes{op->getOpcode() == Instruction::Sub ? a->stride - b->stride : a->stride + b->stride,
                 a->may_wrap || b->may_wrap};
  }
  case Instruction::Mul:
  case Instruction::Shl: {
    std::optional<int64_t> c = constant(op->getOperand(1));
    Value* x = op->getOperand(0);
    if (!c && op->getOpcode() == Instruction::Mul) {
      c = constant(op->getOperand(0));
      x = op->getOperand(1);
    }
    if (!c || (op->getOpcode() == Instruction::Shl && (*c < 0 || *c > 32)))
      return std::nullopt;
    std::optional<Lanes> l = lanes_in(x, phis, depth + 1);
    if (!l)
      return std::nullopt;
    const int64_t factor = op->getOpcode() == Instruction::Shl ? int64_t(1) << *c : *c;
    if (l->stride > (int64_t(1) << 30) || l->stride < -(int64_t(1) << 30) || factor > (int64_t(1) << 30))
      return std::nullopt;
    l->stride *= factor;
    return l;
  }
  default:
    return std::nullopt;
  }
}

} // namespace

std::optional<Lanes> lanes_of(Value* v) {
  SmallPtrSet<PHINode*, 4> phis;
  return lanes_in(v, phis, 0);
}

std::optional<Address> decompose(Value* p, const DataLayout& dl) {
  int64_t offset = 0;
  while (auto* gep = dyn_cast<GetElementPtrInst>(p)) {
    if (gep->getNumIndices() != 1)
      return std::nullopt;
    Value* index = gep->getOperand(1);
    const int64_t size = int64_t(dl.getTypeAllocSize(gep->getSourceElementType()));
    if (gep->getPointerOperand()->getType()->isVectorTy()) {
      auto* c = dyn_cast<ConstantInt>(index);
      if (!c)
        return std::nullopt;
      offset += c->getSExtValue() * size;
      p = gep->getPointerOperand();
      continue;
    }
    if (!index->getType()->isVectorTy())
      return std::nullopt;
    Value* base = gep->getPointerOperand();
    // Copies of one integer turned into a pointer are one base.
    if (auto* cast = dyn_cast<IntToPtrInst>(base))
      base = cast->getOperand(0);
    const bool widened = index->getType()->getScalarSizeInBits() < dl.getIndexTypeSizeInBits(gep->getType());
    return Address{base, index, size, offset, widened};
  }
  return std::nullopt;
}


} // namespace mimic::codegen
