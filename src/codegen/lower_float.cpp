// f32/f64 arithmetic (PTX ISA "Floating-Point Instructions"), comparisons (setp, set) and
// selections (selp, slct) of every type.
//
// Rounding: round-to-nearest results are the host's IEEE operations. The directed modes
// (.rz .rm .rp) are exact: for f32 the exact result is formed in f64 with its residual
// (products of two f32 are exact in f64; sums and quotients carry a TwoSum/fma residual)
// and rounded by arith::round_to_format; for f64 the round-to-nearest result moves one ulp
// when the residual (TwoSum, fma(a, b, -r), a - r*b, a - r*r) says so. Operands are scaled
// by powers of two where a residual would otherwise underflow. The f64 fma
// residual of tiny products is formed from scaled operands (see the fma case).
//
// .approx: rcp/sqrt/rsqrt/div.full are computed exactly or to within 1 ulp (inside the ISA's
// bounds; rsqrt.f32 as a float sqrt and division); ex2.f32 is computed in line (exp2_f32); lg2/sin/cos/tanh and the f64 forms use
// the host's math library (well inside the bounds).
// div.approx.f32 is a * rcp(b) with the reciprocal flushed, as the ISA describes it
// (divisors beyond 2^126 give 0 for finite a).
#include "codegen/lower_arith.h"
#include "codegen/lower_impl.h"

#include <algorithm>
#include <cmath>

#include <llvm/IR/Intrinsics.h>

namespace mimic::codegen {

using namespace llvm;
using arith::Round;
using ptx::Modifier;
using ptx::Opcode;

namespace {

// 2^x for f32 in line, within 1 ulp (ex2.approx allows 2): x = n + f with n an integer
// and |f| <= 1/2; 2^f is a degree-6 polynomial (weighted least-squares fit for relative
// error, 1.9e-9 with exact coefficients, 0.94 ulp as evaluated in f32), and 2^n is
// applied as two exact powers of two so that results near overflow stay finite and
// subnormal results are rounded once. Unlike a call to the math library, it vectorises
// with the thread loop around it.
Value* exp2_f32(IRBuilder<>& b, Value* x) {
  Type* f32 = b.getFloatTy();
  Type* i32 = b.getInt32Ty();
  auto c = [&](const char* hex) { return ConstantFP::get(f32, APFloat(APFloat::IEEEsingle(), hex)); };
  // Beyond [-160, 130] the result is 0 or infinity either way; NaN is passed on below.
  Value* clamped = b.CreateBinaryIntrinsic(Intrinsic::minnum,
                                           b.CreateBinaryIntrinsic(Intrinsic::maxnum, x, ConstantFP::get(f32, -160.0)),
                                           ConstantFP::get(f32, 130.0));
  Value* n = b.CreateUnaryIntrinsic(Intrinsic::roundeven, clamped);
  Value* f = b.CreateFSub(clamped, n); // exact
  static const char* const kCoefficients[] = {"0x1.41d332p-13", "0x1.5f456ap-10", "0x1.3b2dbcp-7", "0x1.c6aed4p-5",
                                              "0x1.ebfbdap-3",  "0x1.62e430p-1",  "0x1p+0"};
  Value* p = c(kCoefficients[0]);
  for (size_t k = 1; k < std::size(kCoefficients); ++k)
    p = b.CreateIntrinsic(Intrinsic::fma, {f32}, {p, f, c(kCoefficients[k])});
  // 2^n = 2^h * 2^(n-h), each a normal f32 for n in [-160, 130].
  Value* ni = b.CreateFPToSI(n, i32);
  Value* h = b.CreateAShr(ni, 1);
  auto power = [&](Value* e) { return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, b.getInt32(127)), 23), f32); };
  Value* r = b.CreateFMul(b.CreateFMul(p, power(h)), power(b.CreateSub(ni, h)));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), b.CreateFAdd(x, x), r);
}


// The rounding error of a*b (f64) as an f64 whose sign is exact: fma(a, b, -r), scaled
// by 2^110 when the product is small enough for the residual to underflow.
Value* product_error64(IRBuilder<>& b, Value* a, Value* c, Value* r) {
  Value* tiny = b.CreateFCmpOLT(b.CreateUnaryIntrinsic(Intrinsic::fabs, r), arith::pow2(b, -960));
  Value* scale = b.CreateSelect(tiny, arith::pow2(b, 110), ConstantFP::get(b.getDoubleTy(), 1.0));
  Value* as = b.CreateFMul(a, scale);
  Value* rs = b.CreateFMul(r, scale);
  Value* err = b.CreateIntrinsic(Intrinsic::fma, {b.getDoubleTy()}, {as, c, b.CreateFNeg(rs)});
  // A product below the scaled range: the residual is the product itself.
  Value* underflow = b.CreateAnd(b.CreateFCmpOEQ(r, ConstantFP::get(b.getDoubleTy(), 0.0)),
                                 b.CreateFCmpOEQ(err, ConstantFP::get(b.getDoubleTy(), 0.0)));
  Value* sign = b.CreateFMul(
      b.CreateBinaryIntrinsic(Intrinsic::copysign, ConstantFP::get(b.getDoubleTy(), 1.0), a),
      b.CreateBinaryIntrinsic(Intrinsic::copysign, ConstantFP::get(b.getDoubleTy(), 1.0), c));
  Value* nonzero = b.CreateAnd(b.CreateFCmpONE(a, ConstantFP::get(b.getDoubleTy(), 0.0)),
                               b.CreateFCmpONE(c, ConstantFP::get(b.getDoubleTy(), 0.0)));
  return b.CreateSelect(b.CreateAnd(underflow, nonzero), sign, err);
}

// Sign of the exact sum of four f64 values, as an f64 (Shewchuk's grow-expansion: the
// most significant nonzero component of the expansion has the sign of the sum).
Value* sum4_sign(IRBuilder<>& b, Value* x0, Value* x1, Value* x2, Value* x3) {
  std::vector<Value*> e{x0};
  for (Value* x : {x1, x2, x3}) {
    Value* q = x;
    std::vector<Value*> next;
    for (Value* c : e) {
      Value* s = b.CreateFAdd(q, c);
      next.push_back(arith::two_sum_error(b, q, c, s));
      q = s;
    }
    next.push_back(q);
    e = next;
  }
  Value* zero = ConstantFP::get(b.getDoubleTy(), 0.0);
  Value* sign = zero;
  for (Value* c : e) // later components are more significant
    sign = b.CreateSelect(b.CreateFCmpONE(c, zero), c, sign);
  return sign;
}

Value* sign_bit(IRBuilder<>& b, Value* v) {
  Type* it = b.getIntNTy(v->getType()->getPrimitiveSizeInBits());
  return b.CreateICmpSLT(b.CreateBitCast(v, it), ConstantInt::get(it, 0));
}

} // namespace

// An exact zero result in .rm is -0 unless both addends are +0 (IEEE 754 6.3).
static Value* zero_sign_down(IRBuilder<>& b, Value* s, Value* err, Value* x, Value* y, Round mode) {
  if (mode != Round::Down) return s;
  Type* t = s->getType();
  Value* exact_zero = b.CreateAnd(b.CreateFCmpOEQ(s, ConstantFP::get(t, 0.0)),
                                  b.CreateFCmpOEQ(err, ConstantFP::get(err->getType(), 0.0)));
  Value* neg = b.CreateOr(sign_bit(b, x), sign_bit(b, y));
  return b.CreateSelect(
      exact_zero, b.CreateSelect(neg, ConstantFP::getNegativeZero(t), ConstantFP::get(t, 0.0)), s);
}

// fma.{rm,rp,rz}.f32 x, b, c with x in [0, 1] (a .sat result of the same block) and b, c
// literals such that every x*b + c lies in one binade of unit ulp, [2^23, 2^24) or its
// negative (c an integer): the result is c + floor(x*b) or c + ceil(x*b), the product
// exact in f64. nvcc's expf computes its power of two this way (fma.rm.f32 of a saturated
// value, 252 and 0x1.800002p+23); the general rounding takes some 30 vector operations.
Value* FunctionLowering::fma_in_unit_binade(const ptx::Instruction& ins, Value* a, Value* b, Round mode) {
  if (mode != Round::Down && mode != Round::Up && mode != Round::Zero)
    return nullptr;
  const ptx::Operand* x = &ins.operands[1];
  std::optional<float> k = f32_literal(ins.operands[2]);
  Value* xv = a;
  if (!in_unit_interval(*x) || !k) { // the literal may come first
    x = &ins.operands[2];
    k = f32_literal(ins.operands[1]);
    xv = b;
  }
  std::optional<float> addend = f32_literal(ins.operands[3]);
  if (!in_unit_interval(*x) || !k || !addend || std::floor(*addend) != *addend)
    return nullptr;
  const double lo = double(*addend) + std::min(0.0, double(*k)), hi = double(*addend) + std::max(0.0, double(*k));
  const bool positive = lo >= 0x1p23 && hi < 0x1p24, negative = hi <= -0x1p23 && lo > -0x1p24;
  if (!positive && !negative)
    return nullptr;
  Type* f64 = b_.getDoubleTy();
  Value* p = b_.CreateFMul(b_.CreateFPExt(xv, f64), ConstantFP::get(f64, double(*k))); // exact
  bool down = mode == Round::Down || (mode == Round::Zero && positive);
  Value* q = b_.CreateUnaryIntrinsic(down ? Intrinsic::floor : Intrinsic::ceil, p);
  return b_.CreateFPTrunc(b_.CreateFAdd(q, ConstantFP::get(f64, double(*addend))), b_.getFloatTy()); // exact
}

void FunctionLowering::lower_float(const ptx::Instruction& ins) {
  Modifier t = instruction_type(ins);
  Type* ty = type_of(t);
  if (!ty || !ty->isFloatingPointTy())
    unsupported(ins, "the type ." + ptx::modifier_text(t) + " is not supported here");
  const bool f32 = ty->isFloatTy();
  const bool ftz = ins.has(Modifier::Ftz); // f32, and rcp/rsqrt.approx.ftz.f64
  const bool approx = ins.has(Modifier::Approx);
  const Round mode = arith::rounding_of(ins, Round::Nearest);
  Type* f64 = b_.getDoubleTy();
  auto in = [&](size_t i) {
    Value* v = value(ins, ins.operands[i], ty, false);
    return ftz ? arith::flush_subnormal(b_, v) : v;
  };
  auto out = [&](Value* v) {
    if (ftz) v = arith::flush_subnormal(b_, v);
    if (ins.has(Modifier::Sat)) v = arith::saturate_float(b_, v);
    store(ins, ins.operands[0], v, false);
  };
  auto zero64 = ConstantFP::get(f64, 0.0);
  // f32 result of the exact value s + err (f64).
  // f32 result of a quotient or root s whose residual err has the sign of exact - s.
  auto round32 = [&](Value* s, Value* err) {
    return b_.CreateBitCast(arith::round_to_format(b_, s, err, arith::kF32, mode), ty);
  };
  // f32 result of the exact value s + err (f64; sums and products). s rounded to nearest
  // in f32 is within an ulp of it: the sign of exact - r = (s - r) + err (s - r is exact:
  // Sterbenz, or r is 0 or subnormal) says whether the directed result is r or its
  // neighbour. An overflow to infinity gives an infinite difference, which moves a result
  // rounded toward zero back to the largest finite value. A handful of vector
  // instructions rather than a rounding in bits.
  auto round32_sum = [&](Value* s, Value* err) {
    Value* r = b_.CreateFPTrunc(s, ty);
    Value* diff = b_.CreateFAdd(b_.CreateFSub(s, b_.CreateFPExt(r, f64)), err);
    return arith::adjust_directed(b_, r, b_.CreateFCmpOGT(diff, zero64), b_.CreateFCmpOLT(diff, zero64), mode);
  };
  // f64 result r moved by the residual err (inputs_finite: an infinite r is an overflow).
  auto adjust64 = [&](Value* r, Value* err, Value* inputs_finite) {
    Value* zero = ConstantFP::get(ty, 0.0);
    Value* overflow =
        b_.CreateAnd(inputs_finite, b_.CreateFCmpOEQ(b_.CreateUnaryIntrinsic(Intrinsic::fabs, r),
                                                     ConstantFP::getInfinity(ty)));
    Value* pos = b_.CreateOr(b_.CreateFCmpOGT(err, zero64),
                             b_.CreateAnd(overflow, b_.CreateFCmpOLT(r, zero)));
    Value* neg = b_.CreateOr(b_.CreateFCmpOLT(err, zero64),
                             b_.CreateAnd(overflow, b_.CreateFCmpOGT(r, zero)));
    return arith::adjust_directed(b_, r, pos, neg, mode);
  };
  auto finite = [&](Value* v) {
    return b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(Intrinsic::fabs, v),
                            ConstantFP::getInfinity(v->getType()));
  };
  auto ext = [&](Value* v) { return f32 ? b_.CreateFPExt(v, f64) : v; };

  switch (ins.opcode) {
  case Opcode::Add:
  case Opcode::Sub: {
    Value* a = in(1);
    Value* c = in(2);
    if (ins.opcode == Opcode::Sub) c = b_.CreateFNeg(c);
    if (mode == Round::Nearest) {
      out(b_.CreateFAdd(a, c));
      return;
    }
    Value* s = b_.CreateFAdd(ext(a), ext(c));
    Value* err = arith::two_sum_error(b_, ext(a), ext(c), s);
    s = zero_sign_down(b_, s, err, a, c, mode);
    if (f32) {
      out(round32_sum(s, err));
      return;
    }
    out(adjust64(s, err, b_.CreateAnd(finite(a), finite(c))));
    return;
  }
  case Opcode::Mul: {
    Value* a = in(1);
    Value* c = in(2);
    if (mode == Round::Nearest) {
      out(b_.CreateFMul(a, c));
      return;
    }
    if (f32) { // the product of two f32 is exact in f64
      out(round32_sum(b_.CreateFMul(ext(a), ext(c)), zero64));
      return;
    }
    Value* r = b_.CreateFMul(a, c);
    out(adjust64(r, product_error64(b_, a, c, r), b_.CreateAnd(finite(a), finite(c))));
    return;
  }
  case Opcode::Fma:
  case Opcode::Mad: {
    Value* a = in(1);
    Value* c = in(2);
    Value* d = in(3);
    Value* r = b_.CreateIntrinsic(Intrinsic::fma, {ty}, {a, c, d});
    if (mode == Round::Nearest) {
      out(r);
      return;
    }
    if (f32) {
      if (Value* v = fma_in_unit_binade(ins, a, c, mode)) {
        out(v);
        return;
      }
    }
    Value* p_sign_carrier =
        b_.CreateFMul(b_.CreateBinaryIntrinsic(Intrinsic::copysign, ConstantFP::get(ty, 1.0), a),
                      b_.CreateBinaryIntrinsic(Intrinsic::copysign, ConstantFP::get(ty, 1.0), c));
    if (f32) {
      Value* p = b_.CreateFMul(ext(a), ext(c)); // exact
      Value* s = b_.CreateFAdd(p, ext(d));
      Value* err = arith::two_sum_error(b_, p, ext(d), s);
      s = zero_sign_down(b_, s, err, p_sign_carrier, d, mode);
      out(round32_sum(s, err));
      return;
    }
    // f64: the sign of a*b + d - r. Products from 2^-900 up are split exactly (ph + pl);
    // below, d - r is formed exactly (u + e) and compared with the product scaled by 2^600
    // (the smaller factor is below 2^-450, so scaling it is exact).
    Value* ph = b_.CreateFMul(a, c);
    Value* pl = b_.CreateIntrinsic(Intrinsic::fma, {ty}, {a, c, b_.CreateFNeg(ph)});
    Value* err_normal = sum4_sign(b_, pl, d, ph, b_.CreateFNeg(r));
    Value* tiny =
        b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(Intrinsic::fabs, ph), arith::pow2(b_, -900));
    Value* u = b_.CreateFSub(d, r);
    Value* e = arith::two_sum_error(b_, d, b_.CreateFNeg(r), u);
    Value* a_smaller = b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(Intrinsic::fabs, a),
                                        b_.CreateUnaryIntrinsic(Intrinsic::fabs, c));
    Value* small = b_.CreateFMul(b_.CreateSelect(a_smaller, a, c), arith::pow2(b_, 600));
    Value* big = b_.CreateSelect(a_smaller, c, a);
    Value* sph = b_.CreateFMul(small, big);
    Value* spl = b_.CreateIntrinsic(Intrinsic::fma, {ty}, {small, big, b_.CreateFNeg(sph)});
    Value* err_tiny = sum4_sign(b_, spl, b_.CreateFMul(e, arith::pow2(b_, 600)),
                                b_.CreateFMul(u, arith::pow2(b_, 600)), sph);
    Value* p_sign =
        b_.CreateFMul(b_.CreateBinaryIntrinsic(Intrinsic::copysign, ConstantFP::get(ty, 1.0), a),
                      b_.CreateBinaryIntrinsic(Intrinsic::copysign, ConstantFP::get(ty, 1.0), c));
    Value* nonzero_product = b_.CreateAnd(b_.CreateFCmpONE(a, zero64), b_.CreateFCmpONE(c, zero64));
    Value* lost = b_.CreateAnd(b_.CreateFCmpOEQ(err_tiny, zero64), b_.CreateFCmpOEQ(sph, zero64));
    err_tiny = b_.CreateSelect(b_.CreateAnd(lost, nonzero_product), p_sign,
                               err_tiny); // a product below 2^-1674
    Value* u_dominates =
        b_.CreateFCmpOGE(b_.CreateUnaryIntrinsic(Intrinsic::fabs, u), arith::pow2(b_, -899));
    err_tiny = b_.CreateSelect(u_dominates, u, err_tiny);
    Value* err = b_.CreateSelect(tiny, err_tiny, err_normal);
    Value* all_finite =
        b_.CreateAnd(b_.CreateAnd(finite(a), finite(c)), b_.CreateAnd(finite(d), finite(ph)));
    err = b_.CreateSelect(all_finite, err, zero64);
    r = zero_sign_down(b_, r, err, p_sign_carrier, d, mode);
    out(adjust64(r, err, b_.CreateAnd(b_.CreateAnd(finite(a), finite(c)), finite(d))));
    return;
  }
  case Opcode::Div:
  case Opcode::Rcp: {
    bool rcp = ins.opcode == Opcode::Rcp;
    Value* a = rcp ? ConstantFP::get(ty, 1.0) : in(1);
    Value* c = in(rcp ? 1 : 2);
    if (approx && !rcp && f32) { // a * (1/b), the reciprocal flushed to zero
      Value* inv = arith::flush_subnormal(b_, b_.CreateFDiv(ConstantFP::get(ty, 1.0), c));
      out(b_.CreateFMul(a, inv));
      return;
    }
    if (mode == Round::Nearest || approx) {
      out(b_.CreateFDiv(a, c));
      return;
    }
    if (f32) {
      Value* q = b_.CreateFDiv(ext(a), ext(c));
      Value* resid = b_.CreateIntrinsic(Intrinsic::fma, {f64}, {b_.CreateFNeg(q), ext(c), ext(a)});
      Value* err = b_.CreateSelect(sign_bit(b_, c), b_.CreateFNeg(resid), resid);
      out(round32(q, err));
      return;
    }
    Value* r = b_.CreateFDiv(a, c);
    Value* small = b_.CreateAnd(
        b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(Intrinsic::fabs, a), arith::pow2(b_, -900)),
        b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(Intrinsic::fabs, c), arith::pow2(b_, 800)));
    Value* scale = b_.CreateSelect(small, arith::pow2(b_, 200), ConstantFP::get(f64, 1.0));
    Value* resid =
        b_.CreateIntrinsic(Intrinsic::fma, {f64},
                           {b_.CreateFNeg(r), b_.CreateFMul(c, scale), b_.CreateFMul(a, scale)});
    Value* err = b_.CreateSelect(sign_bit(b_, c), b_.CreateFNeg(resid), resid);
    Value* nonzero = b_.CreateFCmpONE(c, ConstantFP::get(ty, 0.0)); // x/0 is an exact infinity
    out(adjust64(r, err, b_.CreateAnd(b_.CreateAnd(finite(a), finite(c)), nonzero)));
    return;
  }
  case Opcode::Sqrt: {
    Value* a = in(1);
    if (mode == Round::Nearest || approx) {
      out(b_.CreateUnaryIntrinsic(Intrinsic::sqrt, a));
      return;
    }
    if (f32) {
      Value* s = b_.CreateUnaryIntrinsic(Intrinsic::sqrt, ext(a));
      Value* err = b_.CreateIntrinsic(Intrinsic::fma, {f64}, {b_.CreateFNeg(s), s, ext(a)});
      out(round32(s, err));
      return;
    }
    Value* r = b_.CreateUnaryIntrinsic(Intrinsic::sqrt, a);
    Value* small = b_.CreateFCmpOLT(a, arith::pow2(b_, -900));
    Value* rs =
        b_.CreateFMul(r, b_.CreateSelect(small, arith::pow2(b_, 100), ConstantFP::get(f64, 1.0)));
    Value* as =
        b_.CreateFMul(a, b_.CreateSelect(small, arith::pow2(b_, 200), ConstantFP::get(f64, 1.0)));
    Value* err = b_.CreateIntrinsic(Intrinsic::fma, {f64}, {b_.CreateFNeg(rs), rs, as});
    out(adjust64(r, err, finite(a)));
    return;
  }
  case Opcode::Rsqrt: {
    // f32: a correctly rounded sqrt, then a correctly rounded division: within 1 ulp of
    // 1/sqrt (the ISA allows 2^-22.9 relative), at the width of the program's floats. f64:
    // 1/sqrt in f64.
    Value* a = in(1);
    out(b_.CreateFDiv(ConstantFP::get(a->getType(), 1.0), b_.CreateUnaryIntrinsic(Intrinsic::sqrt, a)));
    return;
  }
  case Opcode::Ex2:
    if (f32) {
      out(exp2_f32(b_, in(1)));
      return;
    }
    [[fallthrough]];
  case Opcode::Lg2:
  case Opcode::Sin:
  case Opcode::Cos:
  case Opcode::Tanh: {
    Intrinsic::ID id = ins.opcode == Opcode::Ex2   ? Intrinsic::exp2
                       : ins.opcode == Opcode::Lg2 ? Intrinsic::log2
                       : ins.opcode == Opcode::Sin ? Intrinsic::sin
                       : ins.opcode == Opcode::Cos ? Intrinsic::cos
                                                   : Intrinsic::tanh;
    out(b_.CreateUnaryIntrinsic(id, in(1)));
    return;
  }
  case Opcode::Abs:
    out(b_.CreateUnaryIntrinsic(Intrinsic::fabs, in(1)));
    return;
  case Opcode::Neg:
    out(b_.CreateFNeg(in(1)));
    return;
  case Opcode::Min:
  case Opcode::Max: {
    bool is_min = ins.opcode == Opcode::Min;
    bool propagate = ins.has(Modifier::NaN);
    Intrinsic::ID id = propagate ? (is_min ? Intrinsic::minimum : Intrinsic::maximum)
                                 : (is_min ? Intrinsic::minimumnum : Intrinsic::maximumnum);
    bool xorsign = ins.has(Modifier::Xorsign);
    Value* a = in(1);
    Value* c = in(2);
    Value* sign = xorsign ? b_.CreateXor(sign_bit(b_, a), sign_bit(b_, c)) : nullptr;
    if (xorsign) {
      a = b_.CreateUnaryIntrinsic(Intrinsic::fabs, a);
      c = b_.CreateUnaryIntrinsic(Intrinsic::fabs, c);
    }
    Value* r = b_.CreateBinaryIntrinsic(id, a, c);
    if (ins.num_operands == 4) r = b_.CreateBinaryIntrinsic(id, r, in(3));
    if (xorsign) {
      Value* negated = b_.CreateFNeg(r);
      r = b_.CreateSelect(b_.CreateAnd(sign, b_.CreateNot(arith::is_nan(b_, r))), negated, r);
    }
    out(r);
    return;
  }
  case Opcode::Copysign: { // copysign d, a, b: the magnitude of b with the sign of a
    Value* a = value(ins, ins.operands[1], ty, false);
    Value* c = value(ins, ins.operands[2], ty, false);
    store(ins, ins.operands[0], b_.CreateBinaryIntrinsic(Intrinsic::copysign, c, a), false);
    return;
  }
  case Opcode::Testp: {
    Value* a = value(ins, ins.operands[1], ty, false);
    Value* mag = b_.CreateUnaryIntrinsic(Intrinsic::fabs, a);
    Value* inf = ConstantFP::getInfinity(ty);
    Value* smallest =
        ConstantFP::get(ty, f32 ? 1.17549435082228750797e-38 : 2.2250738585072014e-308);
    Value* r;
    if (ins.has(Modifier::Finite))
      r = b_.CreateFCmpOLT(mag, inf);
    else if (ins.has(Modifier::Infinite))
      r = b_.CreateFCmpOEQ(mag, inf);
    else if (ins.has(Modifier::Number))
      r = b_.CreateFCmpORD(a, a);
    else if (ins.has(Modifier::Notanumber))
      r = b_.CreateFCmpUNO(a, a);
    else if (ins.has(Modifier::Normal))
      r = b_.CreateAnd(b_.CreateFCmpOGE(mag, smallest), b_.CreateFCmpOLT(mag, inf));
    else if (ins.has(Modifier::Subnormal))
      r = b_.CreateAnd(b_.CreateFCmpOLT(mag, smallest),
                       b_.CreateFCmpONE(mag, ConstantFP::get(ty, 0.0)));
    else
      unsupported(ins,
                  "testp needs a class (.finite .infinite .number .notanumber .normal .subnormal)");
    store(ins, ins.operands[0], r, false);
    return;
  }
  default:
    unsupported(ins, "'" + std::string(ptx::opcode_name(ins.opcode)) +
                         "' is not a floating-point instruction");
  }
}

// ---------------------------------------------------------------- comparisons

namespace {

bool is_half_format(Modifier t, arith::Format& f, unsigned& lanes) {
  switch (t) {
  case Modifier::F16:
    f = arith::kF16;
    lanes = 1;
    return true;
  case Modifier::F16x2:
    f = arith::kF16;
    lanes = 2;
    return true;
  case Modifier::Bf16:
    f = arith::kBF16;
    lanes = 1;
    return true;
  case Modifier::Bf16x2:
    f = arith::kBF16;
    lanes = 2;
    return true;
  default:
    return false;
  }
}

Value* compare(IRBuilder<>& b, Modifier cmp, Value* a, Value* c, bool fp, bool sgn) {
  switch (cmp) {
  case Modifier::Eq:
    return fp ? b.CreateFCmpOEQ(a, c) : b.CreateICmpEQ(a, c);
  case Modifier::Ne:
    return fp ? b.CreateFCmpONE(a, c) : b.CreateICmpNE(a, c);
  case Modifier::Lt:
    return fp ? b.CreateFCmpOLT(a, c) : sgn ? b.CreateICmpSLT(a, c) : b.CreateICmpULT(a, c);
  case Modifier::Le:
    return fp ? b.CreateFCmpOLE(a, c) : sgn ? b.CreateICmpSLE(a, c) : b.CreateICmpULE(a, c);
  case Modifier::Gt:
    return fp ? b.CreateFCmpOGT(a, c) : sgn ? b.CreateICmpSGT(a, c) : b.CreateICmpUGT(a, c);
  case Modifier::Ge:
    return fp ? b.CreateFCmpOGE(a, c) : sgn ? b.CreateICmpSGE(a, c) : b.CreateICmpUGE(a, c);
  case Modifier::Lo:
    return b.CreateICmpULT(a, c);
  case Modifier::Ls:
    return b.CreateICmpULE(a, c);
  case Modifier::Hi:
    return b.CreateICmpUGT(a, c);
  case Modifier::Hs:
    return b.CreateICmpUGE(a, c);
  case Modifier::Equ:
    return b.CreateFCmpUEQ(a, c);
  case Modifier::Neu:
    return b.CreateFCmpUNE(a, c);
  case Modifier::Ltu:
    return b.CreateFCmpULT(a, c);
  case Modifier::Leu:
    return b.CreateFCmpULE(a, c);
  case Modifier::Gtu:
    return b.CreateFCmpUGT(a, c);
  case Modifier::Geu:
    return b.CreateFCmpUGE(a, c);
  case Modifier::Num:
    return b.CreateFCmpORD(a, c);
  case Modifier::Nan:
    return b.CreateFCmpUNO(a, c);
  default:
    return nullptr;
  }
}

bool is_compare(Modifier m) {
  switch (m) {
  case Modifier::Eq:
  case Modifier::Ne:
  case Modifier::Lt:
  case Modifier::Le:
  case Modifier::Gt:
  case Modifier::Ge:
  case Modifier::Lo:
  case Modifier::Ls:
  case Modifier::Hi:
  case Modifier::Hs:
  case Modifier::Equ:
  case Modifier::Neu:
  case Modifier::Ltu:
  case Modifier::Leu:
  case Modifier::Gtu:
  case Modifier::Geu:
  case Modifier::Num:
  case Modifier::Nan:
    return true;
  default:
    return false;
  }
}

} // namespace

// setp.cmp[.bool].type p[|q], a, b[, {!}c] and set.cmp[.bool].dtype.stype d, a, b[, {!}c].
// Packed halves compare lane by lane: setp gives p for the low lane and q for the high one.
void FunctionLowering::lower_compare(const ptx::Instruction& ins) {
  bool setp = ins.opcode == Opcode::Setp;
  Modifier dt = setp ? Modifier::Pred : instruction_type(ins, 0);
  Modifier st = setp ? instruction_type(ins, 0) : instruction_type(ins, 1);
  if (!setp && st == Modifier::None) // set.cmp.dtype.stype always names both
    unsupported(ins, "set needs a destination and a source type");
  Modifier cmp = Modifier::None;
  for (Modifier m : ins.mods())
    if (is_compare(m)) {
      cmp = m;
      break;
    }
  if (cmp == Modifier::None) unsupported(ins, "a comparison needs an operator (.eq .lt ...)");
  arith::Format hf{};
  unsigned lanes = 1;
  bool half = is_half_format(st, hf, lanes);
  bool fp = half || is_float(st);
  bool sgn = is_signed(st);
  bool ftz = ins.has(Modifier::Ftz);
  Type* sty = type_of(st);
  if (!sty) unsupported(ins, "the type ." + ptx::modifier_text(st) + " is not supported here");
  Value* a = value(ins, ins.operands[1], sty, sgn);
  Value* c = value(ins, ins.operands[2], sty, sgn);
  std::vector<Value*> results;
  for (unsigned lane = 0; lane < lanes; ++lane) {
    Value* x = a;
    Value* y = c;
    if (half) {
      auto lane_bits = [&](Value* v) {
        Value* shifted = lane ? b_.CreateLShr(v, 16) : v;
        Value* h = b_.CreateTrunc(shifted, b_.getInt16Ty());
        return ftz && hf.exp_bits == 5 ? arith::flush_subnormal_bits(b_, h, hf) : h;
      };
      x = arith::decode_format(b_, lane_bits(a), hf);
      y = arith::decode_format(b_, lane_bits(c), hf);
    } else if (fp && ftz && sty->isFloatTy()) {
      x = arith::flush_subnormal(b_, x);
      y = arith::flush_subnormal(b_, y);
    }
    Value* r = compare(b_, cmp, x, y, fp, sgn);
    if (!r) unsupported(ins, "this comparison does not apply to ." + ptx::modifier_text(st));
    results.push_back(r);
  }
  if (ins.num_operands == 4) { // .and/.or/.xor with a predicate
    Value* q = value(ins, ins.operands[3], b_.getInt1Ty(), false);
    for (Value*& r : results) {
      if (ins.has(Modifier::And))
        r = b_.CreateAnd(r, q);
      else if (ins.has(Modifier::Or))
        r = b_.CreateOr(r, q);
      else if (ins.has(Modifier::Xor))
        r = b_.CreateXor(r, q);
      else
        unsupported(ins, "a fourth operand needs .and, .or or .xor");
    }
  }
  const ptx::Operand& d = ins.operands[0];
  if (setp) {
    if (d.kind == ptx::OperandKind::Pair) {
      if (lanes == 2) {
        store(ins, d.elems[0], results[0], false);
        store(ins, d.elems[1], results[1], false);
      } else {
        store(ins, d.elems[0], results[0], false);
        store(ins, d.elems[1], b_.CreateNot(results[0]), false);
      }
      return;
    }
    store(ins, d, results[0], false);
    return;
  }
  // set: 0xffffffff / 0 for integers, 1.0 / 0.0 for floats, per lane for packed types.
  arith::Format df{};
  unsigned dlanes = 1;
  Type* dty = type_of(dt);
  if (!dty) unsupported(ins, "the type ." + ptx::modifier_text(dt) + " is not supported here");
  if (is_half_format(dt, df, dlanes)) {
    Value* r = ConstantInt::get(dty, 0);
    for (unsigned lane = 0; lane < dlanes; ++lane) {
      Value* bit = results[lanes == dlanes ? lane : 0];
      Value* one = b_.CreateSelect(bit, ConstantInt::get(dty, df.one()), ConstantInt::get(dty, 0));
      r = b_.CreateOr(r, lane ? b_.CreateShl(one, 16) : one);
    }
    store(ins, d, r, false);
    return;
  }
  Value* bit = results[0];
  if (is_float(dt))
    store(ins, d, b_.CreateSelect(bit, ConstantFP::get(dty, 1.0), ConstantFP::get(dty, 0.0)),
          false);
  else
    store(ins, d, b_.CreateSelect(bit, ConstantInt::getAllOnesValue(dty), ConstantInt::get(dty, 0)),
          false);
}

// selp.type d, a, b, p: p ? a : b. slct.dtype.s32/f32 d, a, b, c: c >= 0 ? a : b.
void FunctionLowering::lower_select(const ptx::Instruction& ins) {
  Modifier t = instruction_type(ins, 0);
  Type* ty = type_of(t);
  if (!ty) unsupported(ins, "the type ." + ptx::modifier_text(t) + " is not supported here");
  bool sgn = is_signed(t);
  Value* a = value(ins, ins.operands[1], ty, sgn);
  Value* c = value(ins, ins.operands[2], ty, sgn);
  Value* cond;
  if (ins.opcode == Opcode::Selp) {
    cond = value(ins, ins.operands[3], b_.getInt1Ty(), false);
  } else {
    Modifier ct = instruction_type(ins, 1);
    Type* cty = type_of(ct);
    if (!cty) unsupported(ins, "slct needs a .s32 or .f32 selector");
    Value* sel = value(ins, ins.operands[3], cty, true);
    if (cty->isFloatTy()) {
      if (ins.has(Modifier::Ftz)) sel = arith::flush_subnormal(b_, sel);
      cond = b_.CreateFCmpOGE(sel, ConstantFP::get(cty, 0.0));
    } else {
      cond = b_.CreateICmpSGE(sel, ConstantInt::get(cty, 0));
    }
  }
  store(ins, ins.operands[0], b_.CreateSelect(cond, a, c), sgn);
}

} // namespace mimic::codegen
