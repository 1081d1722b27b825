// cvt between every pair of integer, f16, bf16, f32 and f64 types, and the packed and
// narrow forms: cvt.*.f16x2.f32 / .bf16x2.f32 (d, a, b: a goes to the upper half),
// tf32, and the fp8 pairs e4m3x2 / e5m2x2 from f32 pairs or f16x2 and back to f16x2.
//
// Every source is first made an exact f64 value s plus a residual err (64-bit integers
// split in two halves and summed with TwoSum), then rounded once to the destination with
// the instruction's rounding mode (arith::round_to_format), so each conversion is
// correctly rounded. Float to integer rounds to an integral value as asked (.rni .rzi
// .rmi .rpi; .rzi when none is named) and saturates, NaN giving 0, as PTX specifies.
#include "codegen/lower_arith.h"
#include "codegen/lower_impl.h"

#include <llvm/IR/Intrinsics.h>

namespace mimic::codegen {

using namespace llvm;
using arith::Round;
using ptx::Modifier;
using ptx::Opcode;

namespace {

const arith::Format* narrow_format(Modifier t) {
  switch (t) {
  case Modifier::F16:
  case Modifier::F16x2:
    return &arith::kF16;
  case Modifier::Bf16:
  case Modifier::Bf16x2:
    return &arith::kBF16;
  case Modifier::E4m3:
  case Modifier::E4m3x2:
    return &arith::kE4M3;
  case Modifier::E5m2:
  case Modifier::E5m2x2:
    return &arith::kE5M2;
  case Modifier::Tf32:
    return &arith::kTF32;
  default:
    return nullptr;
  }
}

Intrinsic::ID integral_rounding(Round r) {
  switch (r) {
  case Round::Nearest:
    return Intrinsic::roundeven;
  case Round::Down:
    return Intrinsic::floor;
  case Round::Up:
    return Intrinsic::ceil;
  case Round::NearestAway:
    return Intrinsic::round;
  case Round::Zero:
    return Intrinsic::trunc;
  }
  return Intrinsic::trunc;
}

bool integer_rounding(const ptx::Instruction& ins) {
  return ins.has(Modifier::Rni) || ins.has(Modifier::Rzi) || ins.has(Modifier::Rmi) ||
         ins.has(Modifier::Rpi);
}

} // namespace

void FunctionLowering::lower_cvt(const ptx::Instruction& ins) {
  Modifier to_t = instruction_type(ins, 0), from_t = instruction_type(ins, 1);
  Type* f64 = b_.getDoubleTy();
  Value* zero64 = ConstantFP::get(f64, 0.0);
  const Round mode = arith::rounding_of(ins, Round::Nearest);
  const bool ftz = ins.has(Modifier::Ftz);
  arith::RoundOptions opts;
  opts.satfinite = ins.has(Modifier::Satfinite);
  opts.relu = ins.has(Modifier::Relu);
  const arith::Format* to_narrow = narrow_format(to_t);
  const arith::Format* from_narrow = narrow_format(from_t);

  // ---- packed forms
  if (to_t == Modifier::F16x2 || to_t == Modifier::Bf16x2 || to_t == Modifier::E4m3x2 ||
      to_t == Modifier::E5m2x2) {
    unsigned half = ptx::type_bits(to_t) / 2;
    Type* dty = b_.getIntNTy(half * 2);
    Value* lo;
    Value* hi;
    if (from_t == Modifier::F32 && ins.num_operands == 3) { // d, a, b: a -> upper, b -> lower
      auto one = [&](size_t i) {
        Value* v = value(ins, ins.operands[i], b_.getFloatTy(), false);
        if (ftz) v = arith::flush_subnormal(b_, v);
        return arith::round_to_format(b_, b_.CreateFPExt(v, f64), zero64, *to_narrow, mode, opts);
      };
      hi = one(1);
      lo = one(2);
    } else if ((from_t == Modifier::F16x2 || from_t == Modifier::E4m3x2 ||
                from_t == Modifier::E5m2x2) &&
               ins.num_operands == 2) {
      unsigned from_half = ptx::type_bits(from_t) / 2;
      Value* a = value(ins, ins.operands[1], b_.getIntNTy(from_half * 2), false);
      auto lane = [&](unsigned i) {
        Value* bits = b_.CreateTrunc(i ? b_.CreateLShr(a, from_half) : a, b_.getIntNTy(from_half));
        Value* x = arith::decode_format(b_, bits, *from_narrow);
        return arith::round_to_format(b_, x, zero64, *to_narrow, mode, opts);
      };
      lo = lane(0);
      hi = lane(1);
    } else {
      unsupported(ins, "this packed conversion is not supported");
    }
    Value* r = b_.CreateOr(b_.CreateShl(b_.CreateZExt(hi, dty), half), b_.CreateZExt(lo, dty));
    store(ins, ins.operands[0], r, false);
    return;
  }
  if (ins.num_operands != 2) unsupported(ins, "this form of cvt is not supported");

  Type* to = type_of(to_t);
  Type* from = type_of(from_t);
  if (to_t == Modifier::Tf32) to = b_.getInt32Ty();
  if (!to || !from)
    unsupported(ins, "conversions between ." + ptx::modifier_text(to_t) + " and ." +
                         ptx::modifier_text(from_t) + " are not supported");
  const bool from_int = !from_narrow && !is_float(from_t);
  const bool to_int = !to_narrow && !is_float(to_t);
  const bool from_sgn = is_signed(from_t), to_sgn = is_signed(to_t);
  Value* a = value(ins, ins.operands[1], from, from_sgn);

  // ---- integer to integer: extend or truncate, or clamp with .sat
  if (from_int && to_int) {
    unsigned fb = from->getIntegerBitWidth(), tb = to->getIntegerBitWidth();
    Value* r;
    if (ins.has(Modifier::Sat)) {
      Type* i128 = b_.getInt128Ty();
      Value* v = from_sgn ? b_.CreateSExt(a, i128) : b_.CreateZExt(a, i128);
      APInt lo = to_sgn ? APInt::getSignedMinValue(tb).sext(128) : APInt(128, 0);
      APInt hi = to_sgn ? APInt::getSignedMaxValue(tb).sext(128) : APInt::getMaxValue(tb).zext(128);
      v = b_.CreateBinaryIntrinsic(Intrinsic::smax, v, ConstantInt::get(i128, lo));
      v = b_.CreateBinaryIntrinsic(Intrinsic::smin, v, ConstantInt::get(i128, hi));
      r = b_.CreateTrunc(v, to);
    } else {
      r = fb == tb  ? a
          : fb < tb ? (from_sgn ? b_.CreateSExt(a, to) : b_.CreateZExt(a, to))
                    : b_.CreateTrunc(a, to);
    }
    store(ins, ins.operands[0], r, to_sgn);
    return;
  }

  // ---- round-to-nearest conversions LLVM's own instructions do exactly (no .sat, .ftz,
  // .satfinite or .relu): integers to f32/f64 and f64 to f32. They stay plain instructions
  // the vectorisers understand. (Half-precision ones would need compiler-rt's helpers on
  // CPUs without F16C, so they keep the exact software rounding.)
  if (mode == Round::Nearest && !integer_rounding(ins) && !ins.has(Modifier::Sat) && !ftz && !opts.satfinite &&
      !opts.relu && !to_narrow && !from_narrow) {
    Value* r = nullptr;
    if (from_int && (to->isFloatTy() || to->isDoubleTy()))
      r = from_sgn ? b_.CreateSIToFP(a, to) : b_.CreateUIToFP(a, to);
    else if (from->isDoubleTy() && to->isFloatTy())
      r = b_.CreateFPTrunc(a, to);
    if (r) {
      store(ins, ins.operands[0], r, false);
      return;
    }
  }

  // ---- f32 to f32 (nvcc's __saturatef is cvt.sat.f32.f32): exact, a NaN the canonical one
  // as in the general path below.
  if (!integer_rounding(ins) && !to_narrow && !from_narrow && from->isFloatTy() && to->isFloatTy() &&
      !opts.satfinite && !opts.relu) {
    Value* r = ftz ? arith::flush_subnormal(b_, a) : a;
    Value* nan = b_.CreateBitCast(b_.getInt32(uint32_t(arith::kF32.nan())), to);
    r = b_.CreateSelect(arith::is_nan(b_, r), nan, r);
    if (ins.has(Modifier::Sat)) r = arith::saturate_float(b_, r);
    store(ins, ins.operands[0], r, false);
    return;
  }

  // ---- the source as an exact f64 plus residual
  Value* s;
  Value* err = zero64;
  if (from_int) {
    unsigned fb = from->getIntegerBitWidth();
    if (fb <= 32) {
      s = from_sgn ? b_.CreateSIToFP(a, f64) : b_.CreateUIToFP(a, f64);
    } else { // high and low 32-bit halves are each exact in f64
      Type* i64 = b_.getInt64Ty();
      Value* high = from_sgn ? b_.CreateAShr(a, 32) : b_.CreateLShr(a, 32);
      Value* h = b_.CreateFMul(from_sgn ? b_.CreateSIToFP(high, f64) : b_.CreateUIToFP(high, f64),
                               arith::pow2(b_, 32));
      Value* l = b_.CreateUIToFP(b_.CreateAnd(a, ConstantInt::get(i64, 0xffffffffu)), f64);
      s = b_.CreateFAdd(h, l);
      err = arith::two_sum_error(b_, h, l, s);
    }
  } else if (from_narrow) {
    Value* bits = a;
    if (ftz && from_narrow == &arith::kF16)
      bits = arith::flush_subnormal_bits(b_, bits, *from_narrow);
    s = arith::decode_format(b_, bits, *from_narrow);
  } else {
    if (ftz && from->isFloatTy()) a = arith::flush_subnormal(b_, a);
    s = from->isFloatTy() ? b_.CreateFPExt(a, f64) : a;
  }

  // ---- float to integer: round to an integral value, saturate, NaN -> 0
  if (to_int) {
    Round r = arith::rounding_of(ins, Round::Zero);
    Value* integral = b_.CreateUnaryIntrinsic(integral_rounding(r), s);
    Value* v = b_.CreateIntrinsic(to_sgn ? Intrinsic::fptosi_sat : Intrinsic::fptoui_sat, {to, f64},
                                  {integral});
    store(ins, ins.operands[0], v, to_sgn);
    return;
  }

  // ---- to a float type
  Value* result;
  if (integer_rounding(ins)) { // cvt.rni.f32.f32 and kin: an integral value of the same type
    Value* integral = b_.CreateUnaryIntrinsic(integral_rounding(mode), s);
    if (to_narrow)
      result = arith::round_to_format(b_, integral, zero64, *to_narrow, Round::Nearest, opts);
    else
      result = to->isFloatTy() ? b_.CreateFPTrunc(integral, to) : integral;
  } else if (to_narrow) {
    result = arith::round_to_format(b_, s, err, *to_narrow, mode, opts);
    if (to_t == Modifier::Tf32) // the 19-bit encoding in the top bits of an f32
      result = b_.CreateShl(b_.CreateZExt(result, b_.getInt32Ty()), 13);
  } else if (to->isFloatTy()) {
    result = b_.CreateBitCast(arith::round_to_format(b_, s, err, arith::kF32, mode), to);
  } else { // f64: exact unless the source is a 64-bit integer
    Value* pos = b_.CreateFCmpOGT(err, zero64);
    Value* neg = b_.CreateFCmpOLT(err, zero64);
    result = arith::adjust_directed(b_, s, pos, neg, mode);
  }
  if (to_narrow && to_narrow != &arith::kTF32) {
    if (ftz && to_narrow == &arith::kF16)
      result = arith::flush_subnormal_bits(b_, result, *to_narrow);
    if (ins.has(Modifier::Sat)) result = arith::saturate_bits(b_, result, *to_narrow);
  } else if (!to_narrow) {
    if (ftz && to->isFloatTy()) result = arith::flush_subnormal(b_, result);
    if (ins.has(Modifier::Sat)) result = arith::saturate_float(b_, result);
  }
  store(ins, ins.operands[0], result, false);
}

} // namespace mimic::codegen
