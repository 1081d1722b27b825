// Half-precision arithmetic (.f16 .f16x2 .bf16 .bf16x2, PTX ISA "Half Precision
// Floating-Point Instructions") and the vector form of mov that packs and unpacks registers.
//
// Halves are held as integers of their width (x2 forms as i32, lane 0 in the low 16 bits).
// Each lane is decoded to f64 exactly, the operation is done in f64 with its residual
// (sums of two halves carry a TwoSum residual, products of halves are exact in f64, fma
// adds both) and rounded once to the half format (arith::round_to_format), so every
// result is the correctly rounded one, fma included.
#include "codegen/lower_arith.h"
#include "codegen/lower_impl.h"

#include <llvm/IR/Intrinsics.h>

namespace mimic::codegen {

using namespace llvm;
using arith::Round;
using ptx::Modifier;
using ptx::Opcode;

void FunctionLowering::lower_half(const ptx::Instruction& ins) {
  Modifier t = instruction_type(ins);
  const bool bf = t == Modifier::Bf16 || t == Modifier::Bf16x2;
  const arith::Format f = bf ? arith::kBF16 : arith::kF16;
  const unsigned lanes = (t == Modifier::F16x2 || t == Modifier::Bf16x2) ? 2 : 1;
  Type* ty = type_of(t);
  Type* i16 = b_.getInt16Ty();
  Type* f64 = b_.getDoubleTy();
  const bool ftz = ins.has(Modifier::Ftz);
  const Round mode = arith::rounding_of(ins, Round::Nearest);
  arith::RoundOptions opts;
  opts.relu = ins.has(Modifier::Relu);
  Value* zero64 = ConstantFP::get(f64, 0.0);

  auto lane_of = [&](Value* v, unsigned lane) {
    Value* h = b_.CreateTrunc(lane ? b_.CreateLShr(v, 16) : v, i16);
    return ftz ? arith::flush_subnormal_bits(b_, h, f) : h;
  };
  std::vector<Value*> operands;
  for (size_t i = 1; i < ins.num_operands; ++i)
    operands.push_back(value(ins, ins.operands[i], ty, false));

  auto finish = [&](Value* h) { // ftz and .sat on a result lane
    if (ftz) h = arith::flush_subnormal_bits(b_, h, f);
    if (ins.has(Modifier::Sat)) h = arith::saturate_bits(b_, h, f);
    return h;
  };

  Value* result = ConstantInt::get(ty, 0);
  for (unsigned lane = 0; lane < lanes; ++lane) {
    std::vector<Value*> bits, x;
    for (Value* v : operands) {
      bits.push_back(lane_of(v, lane));
      x.push_back(arith::decode_format(b_, bits.back(), f));
    }
    Value* h = nullptr;
    switch (ins.opcode) {
    case Opcode::Add:
    case Opcode::Sub: {
      Value* c = ins.opcode == Opcode::Sub ? b_.CreateFNeg(x[1]) : x[1];
      Value* s = b_.CreateFAdd(x[0], c);
      Value* err = arith::two_sum_error(b_, x[0], c, s);
      h = arith::round_to_format(b_, s, err, f, mode, opts);
      break;
    }
    case Opcode::Mul:
      h = arith::round_to_format(b_, b_.CreateFMul(x[0], x[1]), zero64, f, mode, opts);
      break;
    case Opcode::Fma: {
      Value* p = b_.CreateFMul(x[0], x[1]);
      Value* s = b_.CreateFAdd(p, x[2]);
      h = arith::round_to_format(b_, s, arith::two_sum_error(b_, p, x[2], s), f, mode, opts);
      break;
    }
    case Opcode::Neg:
      h = b_.CreateXor(bits[0], ConstantInt::get(i16, 0x8000));
      break;
    case Opcode::Abs:
      h = b_.CreateAnd(bits[0], ConstantInt::get(i16, 0x7fff));
      break;
    case Opcode::Min:
    case Opcode::Max: {
      bool is_min = ins.opcode == Opcode::Min;
      Intrinsic::ID id = ins.has(Modifier::NaN)
                             ? (is_min ? Intrinsic::minimum : Intrinsic::maximum)
                             : (is_min ? Intrinsic::minimumnum : Intrinsic::maximumnum);
      bool xorsign = ins.has(Modifier::Xorsign);
      Value* a = x[0];
      Value* c = x[1];
      if (xorsign) {
        a = b_.CreateUnaryIntrinsic(Intrinsic::fabs, a);
        c = b_.CreateUnaryIntrinsic(Intrinsic::fabs, c);
      }
      Value* r = b_.CreateBinaryIntrinsic(id, a, c);
      h = arith::round_to_format(b_, r, zero64, f, Round::Nearest);
      if (xorsign) {
        Value* sign = b_.CreateAnd(b_.CreateXor(bits[0], bits[1]), ConstantInt::get(i16, 0x8000));
        Value* nan = arith::is_nan(b_, r);
        h = b_.CreateSelect(nan, h, b_.CreateOr(h, sign));
      }
      break;
    }
    case Opcode::Ex2:
    case Opcode::Tanh: {
      Value* v = b_.CreateUnaryIntrinsic(
          ins.opcode == Opcode::Ex2 ? Intrinsic::exp2 : Intrinsic::tanh, x[0]);
      h = arith::round_to_format(b_, v, zero64, f, Round::Nearest);
      break;
    }
    default:
      unsupported(ins, "'" + std::string(ptx::opcode_name(ins.opcode)) + "' on ." +
                           ptx::modifier_text(t) + " is not supported");
    }
    h = finish(h);
    Value* widened = b_.CreateZExt(h, ty);
    result = b_.CreateOr(result, lane ? b_.CreateShl(widened, 16) : widened);
  }
  store(ins, ins.operands[0], result, false);
}

// mov.bN d, {a, b, ...} packs registers (the first element in the low bits);
// mov.bN {a, b, ...}, s unpacks, `_` skipping an element.
void FunctionLowering::lower_mov_vector(const ptx::Instruction& ins) {
  Modifier t = instruction_type(ins);
  Type* ty = type_of(t);
  if (!ty || ins.num_operands != 2) unsupported(ins, "this form of mov is not supported");
  unsigned total = ty->getPrimitiveSizeInBits();
  Type* it = b_.getIntNTy(total);
  const ptx::Operand& d = ins.operands[0];
  const ptx::Operand& s = ins.operands[1];
  if (s.kind == ptx::OperandKind::Vector && d.kind != ptx::OperandKind::Vector) {
    unsigned part = total / s.count;
    Type* pt = b_.getIntNTy(part);
    Value* r = ConstantInt::get(it, 0);
    for (unsigned i = 0; i < s.count; ++i) {
      Value* e = b_.CreateZExt(value(ins, s.elems[i], pt, false), it);
      r = b_.CreateOr(r, i ? b_.CreateShl(e, i * part) : e);
    }
    store(ins, d, r, false);
    return;
  }
  if (d.kind == ptx::OperandKind::Vector && s.kind != ptx::OperandKind::Vector) {
    unsigned part = total / d.count;
    Type* pt = b_.getIntNTy(part);
    Value* v = value(ins, s, it, false);
    for (unsigned i = 0; i < d.count; ++i)
      store(ins, d.elems[i], b_.CreateTrunc(i ? b_.CreateLShr(v, i * part) : v, pt), false);
    return;
  }
  unsupported(ins, "mov between two vector operands is not supported");
}

} // namespace mimic::codegen
