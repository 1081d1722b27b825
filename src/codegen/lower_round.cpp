// Exact rounding sequences for the arithmetic families (see lower_arith.h).
#include "codegen/lower_arith.h"

#include <llvm/IR/Intrinsics.h>

namespace mimic::codegen::arith {

using namespace llvm;
using ptx::Modifier;

Round rounding_of(const ptx::Instruction& ins, Round otherwise) {
  for (Modifier m : ins.mods()) {
    switch (m) {
    case Modifier::Rn:
    case Modifier::Rni:
      return Round::Nearest;
    case Modifier::Rna:
      return Round::NearestAway;
    case Modifier::Rz:
    case Modifier::Rzi:
      return Round::Zero;
    case Modifier::Rm:
    case Modifier::Rmi:
      return Round::Down;
    case Modifier::Rp:
    case Modifier::Rpi:
      return Round::Up;
    default:
      break;
    }
  }
  return otherwise;
}

bool names_rounding(const ptx::Instruction& ins) {
  for (Modifier m : ins.mods())
    if (m == Modifier::Rn || m == Modifier::Rna || m == Modifier::Rz || m == Modifier::Rm ||
        m == Modifier::Rp || m == Modifier::Rni || m == Modifier::Rzi || m == Modifier::Rmi ||
        m == Modifier::Rpi)
      return true;
  return false;
}

uint64_t Format::max_finite() const {
  if (!has_inf) // e4m3: S.1111.110 is the largest finite value
    return (uint64_t(1) << (bits - 1)) - 2;
  return (((uint64_t(1) << exp_bits) - 2) << mant_bits) | ((uint64_t(1) << mant_bits) - 1);
}

uint64_t Format::inf() const {
  if (!has_inf) return nan();
  return ((uint64_t(1) << exp_bits) - 1) << mant_bits;
}

Value* pow2(IRBuilder<>& b, int k) {
  uint64_t bits = uint64_t(k + 1023) << 52;
  return ConstantFP::get(b.getDoubleTy(), bit_cast<double>(bits));
}

Value* is_nan(IRBuilder<>& b, Value* v) {
  return b.CreateFCmpUNO(v, v);
}

Value* round_to_format(IRBuilder<>& b, Value* s, Value* err, const Format& f, Round r,
                       RoundOptions o) {
  Type* i64 = b.getInt64Ty();
  auto c64 = [&](uint64_t v) { return ConstantInt::get(i64, v); };
  const int64_t bias = (int64_t(1) << (f.exp_bits - 1)) - 1;
  const int64_t emin = 1 - bias;
  const uint64_t mb = f.mant_bits;

  Value* bits = b.CreateBitCast(s, i64);
  Value* negative = b.CreateICmpSLT(bits, c64(0));
  Value* mag = b.CreateAnd(bits, c64(0x7fffffffffffffffull));
  Value* nan = b.CreateICmpUGT(mag, c64(0x7ff0000000000000ull));
  Value* inf = b.CreateICmpEQ(mag, c64(0x7ff0000000000000ull));
  Value* e_raw = b.CreateLShr(mag, 52);
  Value* frac = b.CreateAnd(mag, c64((uint64_t(1) << 52) - 1));
  Value* subnormal = b.CreateICmpEQ(e_raw, c64(0));
  Value* m = b.CreateSelect(subnormal, frac, b.CreateOr(frac, c64(uint64_t(1) << 52)));
  Value* e = b.CreateSelect(subnormal, ConstantInt::get(i64, -1022), b.CreateSub(e_raw, c64(1023)));
  Value* e_eff = b.CreateBinaryIntrinsic(Intrinsic::smax, e, ConstantInt::get(i64, emin));
  Value* shift = b.CreateAdd(c64(52 - mb), b.CreateSub(e_eff, e));
  shift = b.CreateBinaryIntrinsic(Intrinsic::umin, shift, c64(63));
  Value* q = b.CreateLShr(m, shift);
  Value* rem = b.CreateAnd(m, b.CreateSub(b.CreateShl(c64(1), shift), c64(1)));
  Value* half = b.CreateShl(c64(1), b.CreateSub(shift, c64(1)));
  Value* enc =
      b.CreateAdd(b.CreateShl(b.CreateSub(e_eff, ConstantInt::get(i64, emin)), c64(mb)), q);

  // Which side of s the exact value lies, in magnitude (NaN residuals say nothing).
  Value* zero = ConstantFP::get(b.getDoubleTy(), 0.0);
  Value* err_pos = b.CreateFCmpOGT(err, zero);
  Value* err_neg = b.CreateFCmpOLT(err, zero);
  Value* err_up = b.CreateSelect(negative, err_neg, err_pos);
  Value* err_down = b.CreateSelect(negative, err_pos, err_neg);
  Value* exact_err = b.CreateFCmpOEQ(err, zero);

  Value* rem_zero = b.CreateICmpEQ(rem, c64(0));
  Value* away = b.CreateOr(b.CreateNot(rem_zero), err_up); // round the magnitude up
  Value* toward = b.CreateAnd(rem_zero, err_down);         // round the magnitude down one step
  Value* inc = b.getFalse();
  Value* dec = b.getFalse();
  Value* to_zero_on_overflow = b.getFalse();
  switch (r) {
  case Round::Nearest: {
    Value* odd = b.CreateTrunc(q, b.getInt1Ty());
    Value* tie = b.CreateICmpEQ(rem, half);
    inc = b.CreateOr(b.CreateICmpUGT(rem, half),
                     b.CreateAnd(tie, b.CreateOr(err_up, b.CreateAnd(exact_err, odd))));
    break;
  }
  case Round::NearestAway:
    inc = b.CreateOr(b.CreateICmpUGT(rem, half),
                     b.CreateAnd(b.CreateICmpEQ(rem, half), b.CreateNot(err_down)));
    break;
  case Round::Zero:
    dec = toward;
    to_zero_on_overflow = b.getTrue();
    break;
  case Round::Up: // magnitude up for positive values, down for negative ones
    inc = b.CreateAnd(b.CreateNot(negative), away);
    dec = b.CreateAnd(negative, toward);
    to_zero_on_overflow = negative;
    break;
  case Round::Down:
    inc = b.CreateAnd(negative, away);
    dec = b.CreateAnd(b.CreateNot(negative), toward);
    to_zero_on_overflow = b.CreateNot(negative);
    break;
  }
  enc = b.CreateSub(b.CreateAdd(enc, b.CreateZExt(inc, i64)), b.CreateZExt(dec, i64));

  Value* overflow = b.CreateOr(inf, b.CreateICmpUGT(enc, c64(f.max_finite())));
  Value* finite_cap = o.satfinite ? static_cast<Value*>(b.getTrue())
                                  : b.CreateAnd(b.CreateNot(inf), to_zero_on_overflow);
  Value* big = b.CreateSelect(finite_cap, c64(f.max_finite()), c64(f.inf()));
  enc = b.CreateSelect(overflow, big, enc);
  Value* result = b.CreateOr(enc, b.CreateShl(b.CreateZExt(negative, i64), c64(f.bits - 1)));
  if (o.relu) result = b.CreateSelect(negative, c64(0), result);
  result = b.CreateSelect(nan, c64(f.nan()), result);
  unsigned width = f.bits <= 8 ? 8 : f.bits <= 16 ? 16 : 32;
  return b.CreateTrunc(result, b.getIntNTy(width));
}

Value* decode_format(IRBuilder<>& b, Value* bits, const Format& f) {
  Type* i64 = b.getInt64Ty();
  Type* f64 = b.getDoubleTy();
  auto c64 = [&](uint64_t v) { return ConstantInt::get(i64, v); };
  Value* x = b.CreateZExtOrTrunc(bits, i64);
  x = b.CreateAnd(x, c64((uint64_t(1) << f.bits) - 1));
  const int64_t bias = (int64_t(1) << (f.exp_bits - 1)) - 1;
  Value* negative = b.CreateICmpNE(b.CreateLShr(x, c64(f.bits - 1)), c64(0));
  Value* e_raw =
      b.CreateAnd(b.CreateLShr(x, c64(f.mant_bits)), c64((uint64_t(1) << f.exp_bits) - 1));
  Value* frac = b.CreateAnd(x, c64((uint64_t(1) << f.mant_bits) - 1));
  Value* subnormal = b.CreateICmpEQ(e_raw, c64(0));
  Value* sig = b.CreateSelect(subnormal, frac, b.CreateOr(frac, c64(uint64_t(1) << f.mant_bits)));
  // 2^(max(e_raw, 1) - bias - mant_bits), built from its f64 exponent field.
  Value* e = b.CreateSelect(subnormal, c64(1), e_raw);
  Value* scale_bits =
      b.CreateShl(b.CreateAdd(e, c64(uint64_t(1023 - bias - int64_t(f.mant_bits)))), c64(52));
  Value* v = b.CreateFMul(b.CreateUIToFP(sig, f64), b.CreateBitCast(scale_bits, f64));
  Value* all_ones = b.CreateICmpEQ(e_raw, c64((uint64_t(1) << f.exp_bits) - 1));
  if (f.has_inf) {
    Value* special = b.CreateSelect(b.CreateICmpEQ(frac, c64(0)), ConstantFP::getInfinity(f64),
                                    ConstantFP::getQNaN(f64));
    v = b.CreateSelect(all_ones, special, v);
  } else {
    Value* nan = b.CreateAnd(all_ones, b.CreateICmpEQ(frac, c64((uint64_t(1) << f.mant_bits) - 1)));
    v = b.CreateSelect(nan, ConstantFP::getQNaN(f64), v);
  }
  return b.CreateSelect(negative, b.CreateFNeg(v), v);
}

Value* two_sum_error(IRBuilder<>& b, Value* a, Value* c, Value* s) {
  Value* cc = b.CreateFSub(s, a);
  Value* aa = b.CreateFSub(s, cc);
  return b.CreateFAdd(b.CreateFSub(a, aa), b.CreateFSub(c, cc));
}

Value* adjust_directed(IRBuilder<>& b, Value* r, Value* err_pos, Value* err_neg, Round mode) {
  if (mode == Round::Nearest || mode == Round::NearestAway) return r;
  Type* ft = r->getType();
  unsigned width = ft->getPrimitiveSizeInBits();
  Type* it = b.getIntNTy(width);
  Value* bits = b.CreateBitCast(r, it);
  Value* zero = ConstantFP::get(ft, 0.0);
  Value* positive = b.CreateFCmpOGT(r, zero);
  Value* negative = b.CreateFCmpOLT(r, zero);
  Value* is_zero = b.CreateFCmpOEQ(r, zero);
  Value* one = ConstantInt::get(it, 1);
  Value* minus = b.CreateSub(bits, one); // one ulp toward zero
  Value* plus = b.CreateAdd(bits, one);  // one ulp away from zero
  Value* tiny = ConstantInt::get(it, 1);
  Value* neg_tiny = ConstantInt::get(it, (APInt::getSignMask(width) | APInt(width, 1)));
  Value* out = bits;
  switch (mode) {
  case Round::Zero:
    out = b.CreateSelect(b.CreateOr(b.CreateAnd(positive, err_neg), b.CreateAnd(negative, err_pos)),
                         minus, bits);
    break;
  case Round::Down:
    out = b.CreateSelect(
        err_neg, b.CreateSelect(positive, minus, b.CreateSelect(is_zero, neg_tiny, plus)), bits);
    break;
  case Round::Up:
    out = b.CreateSelect(
        err_pos, b.CreateSelect(negative, minus, b.CreateSelect(is_zero, tiny, plus)), bits);
    break;
  default:
    break;
  }
  Value* nan = is_nan(b, r);
  return b.CreateSelect(nan, r, b.CreateBitCast(out, ft));
}

Value* flush_subnormal(IRBuilder<>& b, Value* v) {
  Type* t = v->getType();
  double smallest = t->isFloatTy() ? 1.17549435082228750797e-38 : 2.2250738585072014e-308;
  Value* mag = b.CreateUnaryIntrinsic(Intrinsic::fabs, v);
  Value* tiny = b.CreateFCmpOLT(mag, ConstantFP::get(t, smallest));
  Value* zero = b.CreateBinaryIntrinsic(Intrinsic::copysign, ConstantFP::get(t, 0.0), v);
  return b.CreateSelect(tiny, zero, v);
}

Value* flush_subnormal_bits(IRBuilder<>& b, Value* bits, const Format& f) {
  Type* t = bits->getType();
  uint64_t exp_mask = ((uint64_t(1) << f.exp_bits) - 1) << f.mant_bits;
  Value* exp_zero =
      b.CreateICmpEQ(b.CreateAnd(bits, ConstantInt::get(t, exp_mask)), ConstantInt::get(t, 0));
  Value* sign_only = b.CreateAnd(bits, ConstantInt::get(t, uint64_t(1) << (f.bits - 1)));
  return b.CreateSelect(exp_zero, sign_only, bits);
}

Value* saturate_float(IRBuilder<>& b, Value* v) {
  Type* t = v->getType();
  Value* zero = ConstantFP::get(t, 0.0);
  Value* one = ConstantFP::get(t, 1.0);
  Value* low = b.CreateFCmpULE(v, zero); // NaN, negative values and -0 give +0
  Value* high = b.CreateFCmpOGT(v, one);
  return b.CreateSelect(low, zero, b.CreateSelect(high, one, v));
}

Value* saturate_bits(IRBuilder<>& b, Value* bits, const Format& f) {
  Type* t = bits->getType();
  uint64_t sign = uint64_t(1) << (f.bits - 1);
  Value* mag = b.CreateAnd(bits, ConstantInt::get(t, sign - 1));
  Value* negative =
      b.CreateICmpNE(b.CreateAnd(bits, ConstantInt::get(t, sign)), ConstantInt::get(t, 0));
  Value* nan = b.CreateICmpUGT(mag, ConstantInt::get(t, f.inf()));
  if (!f.has_inf) nan = b.CreateICmpEQ(mag, ConstantInt::get(t, f.nan()));
  Value* low = b.CreateOr(negative, nan);
  Value* high = b.CreateICmpUGT(mag, ConstantInt::get(t, f.one()));
  return b.CreateSelect(low, ConstantInt::get(t, 0),
                        b.CreateSelect(high, ConstantInt::get(t, f.one()), bits));
}

} // namespace mimic::codegen::arith
