// Integer arithmetic and bit manipulation (PTX ISA "Integer Arithmetic Instructions",
// "Logic and Shift Instructions"), and the dispatch of every arithmetic family.
//
// Where PTX leaves a result unspecified, the lowering picks one and keeps it:
// - div/rem by zero: the quotient is all ones (unsigned) or -1 (signed), the remainder is
//   the dividend; what NVIDIA GPUs return, and never a host trap.
// - div.s/rem.s of INT_MIN by -1: the quotient wraps to INT_MIN, the remainder is 0.
#include "codegen/lower_arith.h"
#include "codegen/lower_impl.h"

#include <algorithm>

#include <llvm/IR/Intrinsics.h>

namespace mimic::codegen {

using namespace llvm;
using ptx::Modifier;
using ptx::Opcode;

namespace {

bool is_half_type(Modifier t) {
  return t == Modifier::F16 || t == Modifier::F16x2 || t == Modifier::Bf16 || t == Modifier::Bf16x2;
}

bool is_packed_int(Modifier t) {
  return t == Modifier::U16x2 || t == Modifier::S16x2;
}

} // namespace

bool FunctionLowering::lower_arithmetic(const ptx::Instruction& ins) {
  switch (ins.opcode) {
  case Opcode::Setp:
  case Opcode::Set:
    lower_compare(ins);
    return true;
  case Opcode::Selp:
  case Opcode::Slct:
    lower_select(ins);
    return true;
  case Opcode::Cvt:
    lower_cvt(ins);
    return true;
  case Opcode::Testp:
  case Opcode::Copysign:
  case Opcode::Rcp:
  case Opcode::Sqrt:
  case Opcode::Rsqrt:
  case Opcode::Sin:
  case Opcode::Cos:
  case Opcode::Lg2:
    lower_float(ins);
    return true;
  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Mul:
  case Opcode::Mad:
  case Opcode::Fma:
  case Opcode::Div:
  case Opcode::Min:
  case Opcode::Max:
  case Opcode::Abs:
  case Opcode::Neg:
  case Opcode::Ex2:
  case Opcode::Tanh: {
    Modifier t = instruction_type(ins);
    if (is_half_type(t))
      lower_half(ins);
    else if (is_float(t))
      lower_float(ins);
    else if (ins.opcode == Opcode::Fma || ins.opcode == Opcode::Ex2 || ins.opcode == Opcode::Tanh)
      unsupported(ins, "." + ptx::modifier_text(t) + " is not a type of this instruction");
    else
      lower_int(ins);
    return true;
  }
  case Opcode::Addc:
  case Opcode::Subc:
  case Opcode::Madc:
  case Opcode::Mul24:
  case Opcode::Mad24:
  case Opcode::Sad:
  case Opcode::Rem:
  case Opcode::And:
  case Opcode::Or:
  case Opcode::Xor:
  case Opcode::Not:
  case Opcode::Cnot:
  case Opcode::Shl:
  case Opcode::Shr:
    lower_int(ins);
    return true;
  case Opcode::Popc:
  case Opcode::Clz:
  case Opcode::Bfind:
  case Opcode::Brev:
  case Opcode::Bfe:
  case Opcode::Bfi:
  case Opcode::Fns:
  case Opcode::Lop3:
  case Opcode::Shf:
  case Opcode::Prmt:
  case Opcode::Dp4a:
  case Opcode::Dp2a:
  case Opcode::Bmsk:
  case Opcode::Szext:
  case Opcode::Vadd2:
  case Opcode::Vsub2:
  case Opcode::Vavrg2:
  case Opcode::Vabsdiff2:
  case Opcode::Vmin2:
  case Opcode::Vmax2:
  case Opcode::Vset2:
  case Opcode::Vadd4:
  case Opcode::Vsub4:
  case Opcode::Vavrg4:
  case Opcode::Vabsdiff4:
  case Opcode::Vmin4:
  case Opcode::Vmax4:
  case Opcode::Vset4:
  case Opcode::Vadd:
  case Opcode::Vsub:
  case Opcode::Vabsdiff:
  case Opcode::Vmin:
  case Opcode::Vmax:
  case Opcode::Vset:
  case Opcode::Vshl:
  case Opcode::Vshr:
    lower_int_bits(ins);
    return true;
  case Opcode::Vmad:
    lower_vmad(ins);
    return true;
  default:
    return false;
  }
}

Value* FunctionLowering::carry_flag() {
  if (!carry_) {
    IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    carry_ = entry.CreateAlloca(entry.getInt1Ty(), nullptr, "carry");
    entry.CreateStore(entry.getFalse(), carry_);
  }
  return carry_;
}

void FunctionLowering::lower_int(const ptx::Instruction& ins) {
  Modifier t = instruction_type(ins);
  Type* ty = type_of(t);
  if (!ty || !ty->isIntegerTy())
    unsupported(ins, "the type ." + ptx::modifier_text(t) + " is not supported here");
  const bool sgn = is_signed(t) || t == Modifier::S16x2;
  const unsigned bits = ty->getIntegerBitWidth();
  const bool packed = is_packed_int(t);
  Type* lanes = FixedVectorType::get(b_.getInt16Ty(), 2);
  auto in = [&](size_t i) { return value(ins, ins.operands[i], ty, sgn); };
  auto out = [&](Value* v) { store(ins, ins.operands[0], v, sgn); };
  auto vec = [&](Value* v) { return packed ? b_.CreateBitCast(v, lanes) : v; };
  auto unvec = [&](Value* v) { return packed ? b_.CreateBitCast(v, ty) : v; };
  auto ext = [&](Value* v, Type* to, bool s) {
    return s ? b_.CreateSExt(v, to) : b_.CreateZExt(v, to);
  };
  Type* wide = IntegerType::get(ctx(), bits * 2);
  auto cint = [&](uint64_t v) { return ConstantInt::get(ty, v); };
  const bool cc = ins.has(Modifier::Cc);

  switch (ins.opcode) {
  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Addc:
  case Opcode::Subc: {
    bool add = ins.opcode == Opcode::Add || ins.opcode == Opcode::Addc;
    bool carry_in = ins.opcode == Opcode::Addc || ins.opcode == Opcode::Subc;
    Value* a = vec(in(1));
    Value* c = vec(in(2));
    if (ins.has(Modifier::Sat)) {
      out(unvec(b_.CreateBinaryIntrinsic(add ? Intrinsic::sadd_sat : Intrinsic::ssub_sat, a, c)));
      return;
    }
    if (!cc && !carry_in) {
      out(unvec(add ? b_.CreateAdd(a, c) : b_.CreateSub(a, c)));
      return;
    }
    // Carry chains. CC.CF holds a carry in both directions, as on NVIDIA GPUs: a - b is
    // a + ~b + 1, so sub.cc leaves CF = 1 when nothing was borrowed and subc computes
    // a + ~b + CF (a - b - !CF). Chains of one kind give the same results under either
    // reading; mixing add and sub chains (or reading CF with addc) needs this one.
    Value* cin = carry_in ? b_.CreateZExt(b_.CreateLoad(b_.getInt1Ty(), carry_flag()), ty)
                          : ConstantInt::get(ty, add ? 0 : 1);
    Value* rhs = add ? c : b_.CreateNot(c);
    Value* r1 = b_.CreateBinaryIntrinsic(Intrinsic::uadd_with_overflow, a, rhs);
    Value* r2 =
        b_.CreateBinaryIntrinsic(Intrinsic::uadd_with_overflow, b_.CreateExtractValue(r1, 0), cin);
    Value* d = b_.CreateExtractValue(r2, 0);
    if (cc)
      b_.CreateStore(b_.CreateOr(b_.CreateExtractValue(r1, 1), b_.CreateExtractValue(r2, 1)),
                     carry_flag());
    out(d);
    return;
  }
  case Opcode::Mul:
  case Opcode::Mad:
  case Opcode::Madc: {
    bool mad = ins.opcode != Opcode::Mul;
    Value* a = vec(in(1));
    Value* c = vec(in(2));
    if (ins.has(Modifier::Wide)) {
      Value* p = b_.CreateMul(ext(a, wide, sgn), ext(c, wide, sgn));
      if (mad) p = b_.CreateAdd(p, value(ins, ins.operands[3], wide, sgn));
      store(ins, ins.operands[0], p, sgn);
      return;
    }
    Value* p;
    if (ins.has(Modifier::Hi)) {
      Value* full = b_.CreateMul(ext(a, wide, sgn), ext(c, wide, sgn));
      p = b_.CreateTrunc(b_.CreateLShr(full, bits), ty);
    } else {
      p = b_.CreateMul(a, c);
    }
    if (!mad) {
      out(unvec(p));
      return;
    }
    Value* addend = in(3);
    if (ins.has(Modifier::Sat)) { // mad.hi.sat.s32: the sum saturates
      out(b_.CreateBinaryIntrinsic(Intrinsic::sadd_sat, p, addend));
      return;
    }
    if (!cc && ins.opcode != Opcode::Madc) {
      out(b_.CreateAdd(p, addend));
      return;
    }
    Value* r1 = b_.CreateBinaryIntrinsic(Intrinsic::uadd_with_overflow, p, addend);
    Value* d = b_.CreateExtractValue(r1, 0);
    Value* flag = b_.CreateExtractValue(r1, 1);
    if (ins.opcode == Opcode::Madc) {
      Value* cf = b_.CreateZExt(b_.CreateLoad(b_.getInt1Ty(), carry_flag()), ty);
      Value* r2 = b_.CreateBinaryIntrinsic(Intrinsic::uadd_with_overflow, d, cf);
      d = b_.CreateExtractValue(r2, 0);
      flag = b_.CreateOr(flag, b_.CreateExtractValue(r2, 1));
    }
    if (cc) b_.CreateStore(flag, carry_flag());
    out(d);
    return;
  }
  case Opcode::Mul24:
  case Opcode::Mad24: {
    // 24-bit operands (sign-extended for .s32), 48-bit product; .hi is bits 47..16.
    Type* i64 = b_.getInt64Ty();
    auto low24 = [&](Value* v) {
      Value* shifted = b_.CreateShl(v, 8);
      return ext(sgn ? b_.CreateAShr(shifted, 8) : b_.CreateLShr(shifted, 8), i64, sgn);
    };
    Value* p = b_.CreateMul(low24(in(1)), low24(in(2)));
    Value* r = b_.CreateTrunc(ins.has(Modifier::Hi) ? b_.CreateAShr(p, 16) : p, ty);
    if (ins.opcode == Opcode::Mad24)
      r = ins.has(Modifier::Sat) ? b_.CreateBinaryIntrinsic(Intrinsic::sadd_sat, r, in(3))
                                 : b_.CreateAdd(r, in(3));
    out(r);
    return;
  }
  case Opcode::Sad: {
    Value* a = in(1);
    Value* c = in(2);
    Value* less = sgn ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c);
    Value* diff = b_.CreateSelect(less, b_.CreateSub(c, a), b_.CreateSub(a, c));
    out(b_.CreateAdd(in(3), diff));
    return;
  }
  case Opcode::Div:
  case Opcode::Rem: {
    bool div = ins.opcode == Opcode::Div;
    Value* a = in(1);
    Value* c = in(2);
    Value* zero = b_.CreateICmpEQ(c, cint(0));
    Value* safe = b_.CreateSelect(zero, cint(1), c);
    Value* by_zero = div ? ConstantInt::getAllOnesValue(ty) : a;
    if (!sgn) {
      Value* q = div ? b_.CreateUDiv(a, safe) : b_.CreateURem(a, safe);
      out(b_.CreateSelect(zero, by_zero, q));
      return;
    }
    Value* overflow =
        b_.CreateAnd(b_.CreateICmpEQ(a, ConstantInt::get(ty, APInt::getSignedMinValue(bits))),
                     b_.CreateICmpEQ(c, ConstantInt::getAllOnesValue(ty)));
    safe = b_.CreateSelect(overflow, cint(1), safe);
    Value* q = div ? b_.CreateSDiv(a, safe) : b_.CreateSRem(a, safe);
    q = b_.CreateSelect(overflow, div ? a : cint(0), q);
    out(b_.CreateSelect(zero, by_zero, q));
    return;
  }
  case Opcode::Min:
  case Opcode::Max: {
    bool is_min = ins.opcode == Opcode::Min;
    Intrinsic::ID id = is_min ? (sgn ? Intrinsic::smin : Intrinsic::umin)
                              : (sgn ? Intrinsic::smax : Intrinsic::umax);
    Value* r = b_.CreateBinaryIntrinsic(id, vec(in(1)), vec(in(2)));
    if (ins.num_operands == 4) // three-input form
      r = b_.CreateBinaryIntrinsic(id, r, vec(in(3)));
    if (ins.has(Modifier::Relu))
      r = b_.CreateBinaryIntrinsic(Intrinsic::smax, r, Constant::getNullValue(r->getType()));
    out(unvec(r));
    return;
  }
  case Opcode::And:
  case Opcode::Or:
  case Opcode::Xor: {
    Value* a = in(1);
    Value* c = in(2);
    out(ins.opcode == Opcode::And  ? b_.CreateAnd(a, c)
        : ins.opcode == Opcode::Or ? b_.CreateOr(a, c)
                                   : b_.CreateXor(a, c));
    return;
  }
  case Opcode::Not:
    out(b_.CreateNot(in(1)));
    return;
  case Opcode::Cnot:
    out(b_.CreateZExt(b_.CreateICmpEQ(in(1), cint(0)), ty));
    return;
  case Opcode::Shl:
  case Opcode::Shr: {
    // The shift amount is a .u32 whatever the type; amounts past the width clamp to it.
    Value* a = vec(in(1));
    Value* n = value(ins, ins.operands[2], b_.getInt32Ty(), false);
    unsigned lane_bits = packed ? 16 : bits;
    Value* big = b_.CreateICmpUGE(n, b_.getInt32(lane_bits));
    Type* lane_ty = packed ? static_cast<Type*>(b_.getInt16Ty()) : ty;
    Value* amount =
        b_.CreateZExtOrTrunc(b_.CreateSelect(big, b_.getInt32(lane_bits - 1), n), lane_ty);
    if (packed) amount = b_.CreateVectorSplat(2, amount);
    Value* zeros = Constant::getNullValue(a->getType());
    Value* r;
    if (ins.opcode == Opcode::Shl)
      r = b_.CreateSelect(big, zeros, b_.CreateShl(a, amount));
    else if (sgn)
      r = b_.CreateAShr(a, amount);
    else
      r = b_.CreateSelect(big, zeros, b_.CreateLShr(a, amount));
    out(unvec(r));
    return;
  }
  case Opcode::Neg:
    out(unvec(b_.CreateNeg(vec(in(1)))));
    return;
  case Opcode::Abs:
    out(unvec(b_.CreateBinaryIntrinsic(Intrinsic::abs, vec(in(1)), b_.getFalse())));
    return;
  default:
    unsupported(ins, "'" + std::string(ptx::opcode_name(ins.opcode)) +
                         "' is not an integer instruction");
  }
}

namespace {

// The bits a scalar video selector names: .b0-.b3 a byte, .h0/.h1 a half, none the word.
bool video_field(ptx::Component c, unsigned& shift, unsigned& width) {
  switch (c) {
  case ptx::Component::None:
    shift = 0, width = 32;
    return true;
  case ptx::Component::B0:
  case ptx::Component::B1:
  case ptx::Component::B2:
  case ptx::Component::B3:
    shift = 8 * unsigned(int(c) - int(ptx::Component::B0)), width = 8;
    return true;
  case ptx::Component::H0:
  case ptx::Component::H1:
    shift = 16 * unsigned(int(c) - int(ptx::Component::H0)), width = 16;
    return true;
  default:
    return false;
  }
}

} // namespace

// One source of a scalar video instruction: its selected byte or half (.b0-.b3, .h0/.h1)
// or the whole word, extended to 64 bits by its type.
Value* FunctionLowering::video_part(const ptx::Instruction& ins, const ptx::Operand& op, bool s) {
  Type* i32 = b_.getInt32Ty();
  Type* i64 = b_.getInt64Ty();
  Value* word;
  if (op.kind == ptx::OperandKind::Name && op.component != ptx::Component::None) {
    Register* r = reg(op.name_view());
    if (!r) unsupported(ins, "'" + std::string(op.name_view()) + "' is not a register");
    word = convert(b_.CreateLoad(r->type, r->storage), i32, false);
  } else {
    word = value(ins, op, i32, false);
  }
  unsigned shift = 0, width = 32;
  if (!video_field(op.component, shift, width))
    unsupported(ins, "a scalar video operand selects .b0-.b3 or .h0/.h1");
  Value* x = b_.CreateTrunc(b_.CreateLShr(word, shift), b_.getIntNTy(width));
  return s ? b_.CreateSExt(x, i64) : b_.CreateZExt(x, i64);
}

void FunctionLowering::lower_int_bits(const ptx::Instruction& ins) {
  Modifier t = instruction_type(ins);
  Type* ty = type_of(t);
  Type* i32 = b_.getInt32Ty();
  if (!ty || !ty->isIntegerTy())
    unsupported(ins, "the type ." + ptx::modifier_text(t) + " is not supported here");
  const bool sgn = is_signed(t);
  const unsigned bits = ty->getIntegerBitWidth();
  auto in = [&](size_t i, Type* want) { return value(ins, ins.operands[i], want, is_signed(t)); };
  auto u32 = [&](size_t i) { return value(ins, ins.operands[i], i32, false); };
  auto out = [&](Value* v) { store(ins, ins.operands[0], v, false); };
  auto cint = [&](Type* type, uint64_t v) { return ConstantInt::get(type, v); };
  // (1 << n) - 1 for n in [0, width], in `type`.
  auto low_mask = [&](Type* type, Value* n) {
    unsigned w = type->getIntegerBitWidth();
    Value* full = b_.CreateICmpUGE(n, cint(type, w));
    Value* safe = b_.CreateSelect(full, cint(type, 0), n);
    Value* m = b_.CreateSub(b_.CreateShl(cint(type, 1), safe), cint(type, 1));
    return b_.CreateSelect(full, ConstantInt::getAllOnesValue(type), m);
  };

  switch (ins.opcode) {
  case Opcode::Popc:
    out(b_.CreateZExtOrTrunc(b_.CreateUnaryIntrinsic(Intrinsic::ctpop, in(1, ty)), i32));
    return;
  case Opcode::Clz:
    out(b_.CreateZExtOrTrunc(b_.CreateBinaryIntrinsic(Intrinsic::ctlz, in(1, ty), b_.getFalse()),
                             i32));
    return;
  case Opcode::Brev:
    out(b_.CreateUnaryIntrinsic(Intrinsic::bitreverse, in(1, ty)));
    return;
  case Opcode::Bfind: {
    Value* a = in(1, ty);
    if (sgn) // the most significant bit that differs from the sign
      a = b_.CreateSelect(b_.CreateICmpSLT(a, cint(ty, 0)), b_.CreateNot(a), a);
    Value* lz =
        b_.CreateZExtOrTrunc(b_.CreateBinaryIntrinsic(Intrinsic::ctlz, a, b_.getFalse()), i32);
    Value* none = b_.CreateICmpEQ(a, cint(ty, 0));
    Value* pos = ins.has(Modifier::Shiftamt) ? lz : b_.CreateSub(b_.getInt32(bits - 1), lz);
    out(b_.CreateSelect(none, b_.getInt32(0xffffffff), pos));
    return;
  }
  case Opcode::Bfe: {
    // d[i] = (i < len && pos + i <= msb) ? a[pos + i] : sbit, pos and len in 0..255.
    Value* a = in(1, ty);
    Value* pos = b_.CreateZExtOrTrunc(b_.CreateAnd(u32(2), 0xff), ty);
    Value* len = b_.CreateZExtOrTrunc(b_.CreateAnd(u32(3), 0xff), ty);
    Value* inside = b_.CreateICmpULT(pos, cint(ty, bits));
    Value* field = b_.CreateSelect(
        inside, b_.CreateLShr(a, b_.CreateSelect(inside, pos, cint(ty, 0))), cint(ty, 0));
    // Bits of the field past the msb of a take the sign bit too.
    Value* room = b_.CreateSelect(inside, b_.CreateSub(cint(ty, bits), pos), cint(ty, 0));
    Value* mask = low_mask(ty, b_.CreateBinaryIntrinsic(Intrinsic::umin, len, room));
    Value* r = b_.CreateAnd(field, mask);
    if (sgn) {
      Value* top = b_.CreateBinaryIntrinsic(
          Intrinsic::umin, b_.CreateSub(b_.CreateAdd(pos, len), cint(ty, 1)), cint(ty, bits - 1));
      Value* sbit = b_.CreateTrunc(b_.CreateLShr(a, top), b_.getInt1Ty());
      sbit = b_.CreateAnd(sbit, b_.CreateICmpNE(len, cint(ty, 0)));
      r = b_.CreateSelect(sbit, b_.CreateOr(r, b_.CreateNot(mask)), r);
    }
    store(ins, ins.operands[0], r, sgn);
    return;
  }
  case Opcode::Bfi: {
    Value* a = in(1, ty);
    Value* base = in(2, ty);
    Value* pos = b_.CreateZExtOrTrunc(b_.CreateAnd(u32(3), 0xff), ty);
    Value* len = b_.CreateZExtOrTrunc(b_.CreateAnd(u32(4), 0xff), ty);
    Value* inside = b_.CreateICmpULT(pos, cint(ty, bits));
    Value* safe_pos = b_.CreateSelect(inside, pos, cint(ty, 0));
    Value* mask = b_.CreateShl(low_mask(ty, len), safe_pos);
    mask = b_.CreateSelect(inside, mask, cint(ty, 0));
    out(b_.CreateOr(b_.CreateAnd(base, b_.CreateNot(mask)),
                    b_.CreateAnd(b_.CreateShl(a, safe_pos), mask)));
    return;
  }
  case Opcode::Fns: {
    Value* mask = u32(1);
    Value* base = b_.CreateAnd(u32(2), 31);
    Value* offset = u32(3);
    Value* forward = b_.CreateICmpSGT(offset, b_.getInt32(0));
    Value* n =
        b_.CreateBinaryIntrinsic(Intrinsic::abs, offset, b_.getFalse()); // the n-th set bit, from 1
    // Forward: the set bits at or above base; backward: at or below base, bit-reversed.
    Value* above = b_.CreateAnd(mask, b_.CreateShl(b_.getInt32(0xffffffff), base));
    Value* below = b_.CreateAnd(
        mask, b_.CreateLShr(b_.getInt32(0xffffffff), b_.CreateSub(b_.getInt32(31), base)));
    Value* m =
        b_.CreateSelect(forward, above, b_.CreateUnaryIntrinsic(Intrinsic::bitreverse, below));
    // Select the n-th lowest set bit of m by halving the search window.
    Value* found = b_.CreateICmpULE(n, b_.CreateUnaryIntrinsic(Intrinsic::ctpop, m));
    found = b_.CreateAnd(found, b_.CreateICmpNE(n, b_.getInt32(0)));
    Value* k = n;
    Value* at = b_.getInt32(0);
    for (unsigned w : {16u, 8u, 4u, 2u, 1u}) {
      Value* window = b_.CreateAnd(b_.CreateLShr(m, at), b_.getInt32((1u << w) - 1));
      Value* cnt = b_.CreateUnaryIntrinsic(Intrinsic::ctpop, window);
      Value* skip = b_.CreateICmpUGT(k, cnt);
      k = b_.CreateSelect(skip, b_.CreateSub(k, cnt), k);
      at = b_.CreateSelect(skip, b_.CreateAdd(at, b_.getInt32(w)), at);
    }
    Value* position = b_.CreateSelect(forward, at, b_.CreateSub(b_.getInt32(31), at));
    Value* r = b_.CreateSelect(found, position, b_.getInt32(0xffffffff));
    Value* base_set = b_.CreateTrunc(b_.CreateLShr(mask, base), b_.getInt1Ty());
    Value* at_base = b_.CreateSelect(base_set, base, b_.getInt32(0xffffffff));
    out(b_.CreateSelect(b_.CreateICmpEQ(offset, b_.getInt32(0)), at_base, r));
    return;
  }
  case Opcode::Lop3: {
    // lop3[.op].b32 d[|p], a, b, c, immLut[, q]: bit i of immLut is the result for the
    // inputs (a, b, c) = (i >> 2, i >> 1, i) & 1 (so 0xF0 is a, 0xCC is b, 0xAA is c).
    if (ins.num_operands < 5 || ins.operands[4].kind != ptx::OperandKind::Int)
      unsupported(ins, "lop3 needs a constant immLut");
    uint64_t lut = ins.operands[4].u & 0xff;
    Value* a = in(1, ty);
    Value* bb = in(2, ty);
    Value* c = in(3, ty);
    Value* r = cint(ty, 0);
    for (unsigned i = 0; i < 8; ++i) {
      if (!(lut >> i & 1)) continue;
      Value* term =
          b_.CreateAnd(b_.CreateAnd(i & 4 ? a : b_.CreateNot(a), i & 2 ? bb : b_.CreateNot(bb)),
                       i & 1 ? c : b_.CreateNot(c));
      r = b_.CreateOr(r, term);
    }
    const ptx::Operand& d = ins.operands[0];
    if (d.kind != ptx::OperandKind::Pair) {
      store(ins, d, r, false);
      return;
    }
    Value* p = b_.CreateICmpNE(r, cint(ty, 0));
    Value* q = value(ins, ins.operands[5], b_.getInt1Ty(), false);
    p = ins.has(Modifier::And) ? b_.CreateAnd(p, q) : b_.CreateOr(p, q);
    store(ins, d.elems[0], r, false);
    store(ins, d.elems[1], p, false);
    return;
  }
  case Opcode::Shf: {
    // shf.l: the upper half of ({b, a} << n); shf.r: the lower half of ({b, a} >> n).
    // .clamp: n = min(c, 32); .wrap: n = c & 31.
    Type* i64 = b_.getInt64Ty();
    Value* a = in(1, i32);
    Value* bb = in(2, i32);
    Value* c = u32(3);
    Value* n = ins.has(Modifier::Clamp)
                   ? b_.CreateBinaryIntrinsic(Intrinsic::umin, c, b_.getInt32(32))
                   : b_.CreateAnd(c, 31);
    Value* pair = b_.CreateOr(b_.CreateShl(b_.CreateZExt(bb, i64), 32), b_.CreateZExt(a, i64));
    Value* n64 = b_.CreateZExt(n, i64);
    Value* r = ins.has(Modifier::L) ? b_.CreateLShr(b_.CreateShl(pair, n64), 32)
                                    : b_.CreateLShr(pair, n64);
    out(b_.CreateTrunc(r, i32));
    return;
  }
  case Opcode::Prmt: {
    Type* i64 = b_.getInt64Ty();
    Value* a = in(1, i32);
    Value* bb = in(2, i32);
    Value* c = u32(3);
    Value* src = b_.CreateOr(b_.CreateShl(b_.CreateZExt(bb, i64), 32), b_.CreateZExt(a, i64));
    auto byte = [&](Value* index) { // byte `index` (0..7) of {b, a}
      Value* shift = b_.CreateZExt(b_.CreateShl(index, 3), i64);
      return b_.CreateTrunc(b_.CreateLShr(src, shift), b_.getInt8Ty());
    };
    static const uint8_t modes[6][4][4] = {
        // selector value 0..3 -> source byte for d.b0, d.b1, d.b2, d.b3
        {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}}, // f4e
        {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}}, // b4e
        {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}}, // rc8
        {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}}, // ecl
        {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}}, // ecr
        {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}}, // rc16
    };
    int mode = ins.has(Modifier::F4e)    ? 0
               : ins.has(Modifier::B4e)  ? 1
               : ins.has(Modifier::Rc8)  ? 2
               : ins.has(Modifier::Ecl)  ? 3
               : ins.has(Modifier::Ecr)  ? 4
               : ins.has(Modifier::Rc16) ? 5
                                         : -1;
    Value* r = b_.getInt32(0);
    for (unsigned i = 0; i < 4; ++i) {
      Value* v;
      if (mode < 0) {
        Value* ctl = b_.CreateAnd(b_.CreateLShr(c, 4 * i), 0xf);
        v = byte(b_.CreateAnd(ctl, 7));
        Value* replicate = b_.CreateICmpNE(b_.CreateAnd(ctl, 8), b_.getInt32(0));
        Value* sign = b_.CreateAShr(v, 7);
        v = b_.CreateSelect(replicate, sign, v);
      } else {
        Value* sel = b_.CreateAnd(c, 3);
        Value* pick = b_.getInt32(modes[mode][0][i]);
        for (unsigned s = 1; s < 4; ++s)
          pick = b_.CreateSelect(b_.CreateICmpEQ(sel, b_.getInt32(s)),
                                 b_.getInt32(modes[mode][s][i]), pick);
        v = byte(pick);
      }
      r = b_.CreateOr(r, b_.CreateShl(b_.CreateZExt(v, i32), 8 * i));
    }
    out(r);
    return;
  }
  case Opcode::Dp4a:
  case Opcode::Dp2a: {
    // dp4a.atype.btype d, a, b, c: c + the four products of the bytes of a and b.
    // dp2a.mode.atype.btype: the 16-bit halves of a times bytes 0,1 (.lo) or 2,3 (.hi) of b.
    Modifier at = instruction_type(ins, 0), bt = instruction_type(ins, 1);
    bool as = is_signed(at), bs = is_signed(bt);
    Value* a = u32(1);
    Value* bb = u32(2);
    Value* sum = value(ins, ins.operands[3], i32, as || bs);
    auto part = [&](Value* v, unsigned index, unsigned width, bool s) {
      Value* x = b_.CreateTrunc(b_.CreateLShr(v, index * width), b_.getIntNTy(width));
      return s ? b_.CreateSExt(x, i32) : b_.CreateZExt(x, i32);
    };
    if (ins.opcode == Opcode::Dp4a) {
      for (unsigned i = 0; i < 4; ++i)
        sum = b_.CreateAdd(sum, b_.CreateMul(part(a, i, 8, as), part(bb, i, 8, bs)));
    } else {
      unsigned first = ins.has(Modifier::Hi) ? 2 : 0;
      for (unsigned i = 0; i < 2; ++i)
        sum = b_.CreateAdd(sum, b_.CreateMul(part(a, i, 16, as), part(bb, first + i, 8, bs)));
    }
    out(sum);
    return;
  }
  case Opcode::Bmsk: {
    Value* a = u32(1);
    Value* c = u32(2);
    Value* a1 = b_.CreateAnd(a, 31);
    Value* b1 = b_.CreateAnd(c, 31);
    Value* mask0 = b_.CreateShl(b_.getInt32(0xffffffff), a1);
    Value* sum = b_.CreateAdd(a1, b1);
    Value* overflow = b_.CreateICmpUGE(sum, b_.getInt32(32));
    if (ins.has(Modifier::Clamp)) {
      Value* pos_over = b_.CreateICmpUGE(a, b_.getInt32(32));
      mask0 = b_.CreateSelect(pos_over, b_.getInt32(0), mask0);
      overflow = b_.CreateOr(overflow, b_.CreateOr(pos_over, b_.CreateICmpUGE(c, b_.getInt32(32))));
    }
    Value* mask1 =
        b_.CreateShl(b_.getInt32(0xffffffff), b_.CreateSelect(overflow, b_.getInt32(0), sum));
    mask1 = b_.CreateSelect(
        overflow, b_.getInt32(0),
        b_.CreateSelect(b_.CreateICmpEQ(b1, b_.getInt32(0)), b_.getInt32(0xffffffff), mask1));
    out(b_.CreateAnd(mask0, b_.CreateNot(mask1)));
    return;
  }
  case Opcode::Szext: {
    Value* a = u32(1);
    Value* c = u32(2);
    Value* b1 = b_.CreateAnd(c, 31);
    Value* too_large =
        ins.has(Modifier::Clamp) ? b_.CreateICmpUGE(c, b_.getInt32(32)) : b_.getFalse();
    Value* mask =
        b_.CreateSelect(too_large, b_.getInt32(0), b_.CreateShl(b_.getInt32(0xffffffff), b1));
    Value* sign_pos = b_.CreateAnd(b_.CreateSub(b1, b_.getInt32(1)), 31);
    Value* sign = b_.getFalse();
    if (sgn)
      sign =
          b_.CreateAnd(b_.CreateAnd(b_.CreateICmpNE(b1, b_.getInt32(0)), b_.CreateNot(too_large)),
                       b_.CreateTrunc(b_.CreateLShr(a, sign_pos), b_.getInt1Ty()));
    out(b_.CreateOr(b_.CreateAnd(a, b_.CreateNot(mask)),
                    b_.CreateSelect(sign, mask, b_.getInt32(0))));
    return;
  }
  case Opcode::Vadd2:
  case Opcode::Vsub2:
  case Opcode::Vavrg2:
  case Opcode::Vabsdiff2:
  case Opcode::Vmin2:
  case Opcode::Vmax2:
  case Opcode::Vset2:
  case Opcode::Vadd4:
  case Opcode::Vsub4:
  case Opcode::Vavrg4:
  case Opcode::Vabsdiff4:
  case Opcode::Vmin4:
  case Opcode::Vmax4:
  case Opcode::Vset4: {
    // SIMD video instructions: vop2/vop4.dtype.atype.btype{.sat|.add} d{.mask}, a{.asel},
    // b{.bsel}, c (vset: .atype.btype.cmp). Lanes of each source come from the halves or
    // bytes of {b, a} (asel defaults to a's, bsel to b's); each result lane is clamped with
    // .sat, then merged into c under the mask, or (.add) the masked lanes are added to c.
    bool four = ins.opcode == Opcode::Vadd4 || ins.opcode == Opcode::Vsub4 ||
                ins.opcode == Opcode::Vavrg4 || ins.opcode == Opcode::Vabsdiff4 ||
                ins.opcode == Opcode::Vmin4 || ins.opcode == Opcode::Vmax4 ||
                ins.opcode == Opcode::Vset4;
    bool vset = ins.opcode == Opcode::Vset2 || ins.opcode == Opcode::Vset4;
    unsigned n = four ? 4 : 2, w = four ? 8 : 16;
    Modifier dt = vset ? Modifier::U32 : instruction_type(ins, 0);
    Modifier at = instruction_type(ins, vset ? 0 : 1), bt = instruction_type(ins, vset ? 1 : 2);
    if (ins.num_operands != 4) unsupported(ins, "a SIMD video instruction takes d, a, b, c");
    // Lane k (from the least significant) of a selector or mask written .hNN / .bNNNN.
    auto lanes = [&](ptx::Component c, const char* fallback) {
      std::string text = c == ptx::Component::None ? fallback : ptx::component_name(c);
      std::vector<unsigned> out;
      for (size_t i = text.size(); i-- > 1;)
        out.push_back(unsigned(text[i] - '0'));
      return out;
    };
    auto raw = [&](const ptx::Operand& op) -> Value* {
      if (op.kind != ptx::OperandKind::Name || op.component == ptx::Component::None)
        return value(ins, op, i32, false);
      Register* r = reg(op.name_view());
      if (!r) unsupported(ins, "'" + std::string(op.name_view()) + "' is not a register");
      return convert(b_.CreateLoad(r->type, r->storage), i32, false);
    };
    const ptx::Operand& d = ins.operands[0];
    Type* i64 = b_.getInt64Ty();
    Value* src = b_.CreateOr(b_.CreateShl(b_.CreateZExt(raw(ins.operands[2]), i64), 32),
                             b_.CreateZExt(raw(ins.operands[1]), i64));
    Value* c = raw(ins.operands[3]);
    std::vector<unsigned> asel = lanes(ins.operands[1].component, four ? "b3210" : "h10");
    std::vector<unsigned> bsel = lanes(ins.operands[2].component, four ? "b7654" : "h32");
    std::vector<unsigned> mask = lanes(d.component, four ? "b3210" : "h10");
    if (asel.size() != n || bsel.size() != n)
      unsupported(ins, "a source selector names one lane per SIMD lane");
    auto lane = [&](unsigned index, bool s) {
      Value* x = b_.CreateTrunc(b_.CreateLShr(src, index * w), b_.getIntNTy(w));
      return s ? b_.CreateSExt(x, i32) : b_.CreateZExt(x, i32);
    };
    Modifier cmp = Modifier::None;
    for (Modifier m : ins.mods())
      if (m == Modifier::Eq || m == Modifier::Ne || m == Modifier::Lt || m == Modifier::Le ||
          m == Modifier::Gt || m == Modifier::Ge)
        cmp = m;
    const bool dsigned = is_signed(dt), accumulate = ins.has(Modifier::Add);
    // Lanes are extended exactly to i32 by their own types, so one signed comparison (and
    // signed min/max) is right for every mix of signed and unsigned sources.
    Value* sum = c;
    Value* merged = c;
    for (unsigned k = 0; k < n; ++k) {
      Value* x = lane(asel[k], is_signed(at));
      Value* y = lane(bsel[k], is_signed(bt));
      Value* t;
      switch (ins.opcode) {
      case Opcode::Vadd2:
      case Opcode::Vadd4:
        t = b_.CreateAdd(x, y);
        break;
      case Opcode::Vsub2:
      case Opcode::Vsub4:
        t = b_.CreateSub(x, y);
        break;
      case Opcode::Vavrg2:
      case Opcode::Vavrg4: { // (x + y + 1) >> 1 for sums >= 0, (x + y) >> 1 below
        Value* s2 = b_.CreateAdd(x, y);
        Value* up = b_.CreateICmpSGE(s2, b_.getInt32(0));
        t = b_.CreateAShr(b_.CreateAdd(s2, b_.CreateZExt(up, i32)), 1);
        break;
      }
      case Opcode::Vabsdiff2:
      case Opcode::Vabsdiff4:
        t = b_.CreateBinaryIntrinsic(Intrinsic::abs, b_.CreateSub(x, y), b_.getFalse());
        break;
      case Opcode::Vmin2:
      case Opcode::Vmin4:
        t = b_.CreateBinaryIntrinsic(Intrinsic::smin, x, y);
        break;
      case Opcode::Vmax2:
      case Opcode::Vmax4:
        t = b_.CreateBinaryIntrinsic(Intrinsic::smax, x, y);
        break;
      default: { // vset
        Value* r;
        switch (cmp) {
        case Modifier::Eq:
          r = b_.CreateICmpEQ(x, y);
          break;
        case Modifier::Ne:
          r = b_.CreateICmpNE(x, y);
          break;
        case Modifier::Lt:
          r = b_.CreateICmpSLT(x, y);
          break;
        case Modifier::Le:
          r = b_.CreateICmpSLE(x, y);
          break;
        case Modifier::Gt:
          r = b_.CreateICmpSGT(x, y);
          break;
        case Modifier::Ge:
          r = b_.CreateICmpSGE(x, y);
          break;
        default:
          unsupported(ins, "vset needs a comparison");
        }
        t = b_.CreateZExt(r, i32);
      }
      }
      if (ins.has(Modifier::Sat)) {
        int64_t lo = dsigned ? -(int64_t(1) << (w - 1)) : 0;
        int64_t hi = dsigned ? (int64_t(1) << (w - 1)) - 1 : (int64_t(1) << w) - 1;
        t = b_.CreateBinaryIntrinsic(
            Intrinsic::smin,
            b_.CreateBinaryIntrinsic(Intrinsic::smax, t, b_.getInt32(uint32_t(lo))),
            b_.getInt32(uint32_t(hi)));
      }
      bool on = std::find(mask.begin(), mask.end(), k) != mask.end();
      if (!on) continue;
      if (accumulate) {
        sum = b_.CreateAdd(sum, t);
        continue;
      }
      uint32_t field = uint32_t(((uint64_t(1) << w) - 1) << (k * w));
      merged = b_.CreateOr(b_.CreateAnd(merged, b_.getInt32(~field)),
                           b_.CreateAnd(b_.CreateShl(t, k * w), b_.getInt32(field)));
    }
    ptx::Operand plain = d;
    plain.component = ptx::Component::None;
    store(ins, plain, accumulate ? sum : merged, false);
    return;
  }
  case Opcode::Vadd:
  case Opcode::Vsub:
  case Opcode::Vabsdiff:
  case Opcode::Vmin:
  case Opcode::Vmax:
  case Opcode::Vset:
  case Opcode::Vshl:
  case Opcode::Vshr: {
    // Scalar video instructions: vop.dtype.atype.btype{.sat}{.op2} d{.dsel}, a{.asel},
    // b{.bsel}{, c} (vset: .atype.btype.cmp). Each source is its selected byte or half (or
    // the whole word), extended by its type; the result is exact in 64 bits, clamped by .sat
    // to the destination type (to the merged subword with .dsel), then combined with c by
    // .add/.min/.max or merged into c at .dsel. vshl/vshr shift a by b clamped to 32
    // (.clamp) or taken mod 32 (.wrap).
    bool vset = ins.opcode == Opcode::Vset;
    Modifier dt = vset ? Modifier::U32 : instruction_type(ins, 0);
    Modifier at = instruction_type(ins, vset ? 0 : 1), bt = instruction_type(ins, vset ? 1 : 2);
    Type* i64 = b_.getInt64Ty();
    Value* x = video_part(ins, ins.operands[1], is_signed(at));
    Value* y = video_part(ins, ins.operands[2], is_signed(bt));
    if (ins.opcode == Opcode::Vshl ||
        ins.opcode == Opcode::Vshr) // b is a .u32 shift: .clamp at 32, .wrap mod 32
      y = ins.has(Modifier::Clamp) ? b_.CreateBinaryIntrinsic(Intrinsic::umin, y, b_.getInt64(32))
                                   : b_.CreateAnd(y, 31);
    Value* t;
    switch (ins.opcode) {
    case Opcode::Vshl:
      t = b_.CreateShl(x, y);
      break;
    case Opcode::Vshr:
      t = b_.CreateAShr(x, y);
      break; // x is extended by its type: arithmetic for .s32
    case Opcode::Vadd:
      t = b_.CreateAdd(x, y);
      break;
    case Opcode::Vsub:
      t = b_.CreateSub(x, y);
      break;
    case Opcode::Vabsdiff:
      t = b_.CreateBinaryIntrinsic(Intrinsic::abs, b_.CreateSub(x, y), b_.getFalse());
      break;
    case Opcode::Vmin:
      t = b_.CreateBinaryIntrinsic(Intrinsic::smin, x, y);
      break;
    case Opcode::Vmax:
      t = b_.CreateBinaryIntrinsic(Intrinsic::smax, x, y);
      break;
    default: {
      Value* r = nullptr;
      if (ins.has(Modifier::Eq))
        r = b_.CreateICmpEQ(x, y);
      else if (ins.has(Modifier::Ne))
        r = b_.CreateICmpNE(x, y);
      else if (ins.has(Modifier::Lt))
        r = b_.CreateICmpSLT(x, y);
      else if (ins.has(Modifier::Le))
        r = b_.CreateICmpSLE(x, y);
      else if (ins.has(Modifier::Gt))
        r = b_.CreateICmpSGT(x, y);
      else if (ins.has(Modifier::Ge))
        r = b_.CreateICmpSGE(x, y);
      else
        unsupported(ins, "vset needs a comparison");
      t = b_.CreateZExt(r, i64);
    }
    }
    const ptx::Operand& d = ins.operands[0];
    unsigned dshift = 0, dwidth = 32;
    if (!video_field(d.component, dshift, dwidth))
      unsupported(ins, "a scalar video destination selects .b0-.b3 or .h0/.h1");
    if (ins.has(Modifier::Sat)) {
      bool s = is_signed(dt);
      int64_t lo = s ? -(int64_t(1) << (dwidth - 1)) : 0;
      int64_t hi = s ? (int64_t(1) << (dwidth - 1)) - 1 : int64_t((uint64_t(1) << dwidth) - 1);
      t = b_.CreateBinaryIntrinsic(
          Intrinsic::smin, b_.CreateBinaryIntrinsic(Intrinsic::smax, t, b_.getInt64(uint64_t(lo))),
          b_.getInt64(uint64_t(hi)));
    }
    Value* r = b_.CreateTrunc(t, i32);
    if (ins.num_operands == 4) {
      Value* c = value(ins, ins.operands[3], i32, false);
      if (d.component != ptx::Component::None) {
        uint32_t field = uint32_t(((uint64_t(1) << dwidth) - 1) << dshift);
        r = b_.CreateOr(b_.CreateAnd(c, b_.getInt32(~field)),
                        b_.CreateAnd(b_.CreateShl(r, dshift), b_.getInt32(field)));
      } else if (ins.has(Modifier::Add)) {
        r = b_.CreateAdd(r, c);
      } else if (ins.has(Modifier::Min) || ins.has(Modifier::Max)) {
        Value* cw = is_signed(dt) ? b_.CreateSExt(c, i64) : b_.CreateZExt(c, i64);
        r = b_.CreateTrunc(b_.CreateBinaryIntrinsic(
                               ins.has(Modifier::Min) ? Intrinsic::smin : Intrinsic::smax, t, cw),
                           i32);
      } else {
        unsupported(ins, "a fourth operand needs .add, .min, .max or a destination selector");
      }
    }
    ptx::Operand plain = d;
    plain.component = ptx::Component::None;
    store(ins, plain, r, false);
    return;
  }
  default:
    unsupported(ins,
                "'" + std::string(ptx::opcode_name(ins.opcode)) + "' is not a bit instruction");
  }
}

// vmad.dtype.atype.btype{.po}{.sat}{.shr7|.shr15} d, {-}a{.asel}, {-}b{.bsel}, {-}c: the
// product of the selected parts, negated when exactly one of a and b is, plus c (negated,
// or plus one with .po), computed exactly; the product is signed when either type is or it
// is negated, and the final result when c is negated too. .shr7/.shr15 shift the sum
// arithmetically; .sat clamps it to the final type's 32-bit range.
void FunctionLowering::lower_vmad(const ptx::Instruction& ins) {
  if (ins.num_operands != 4)
    unsupported(ins, "vmad needs d, a, b and c");
  auto negated = [](const ptx::Operand& op, ptx::Operand& inner) {
    if (op.kind == ptx::OperandKind::Expr && op.expr->op == ptx::ExprOp::Neg) {
      inner = op.expr->lhs;
      return true;
    }
    inner = op;
    return false;
  };
  ptx::Operand a, bop, c;
  bool na = negated(ins.operands[1], a), nb = negated(ins.operands[2], bop), nc = negated(ins.operands[3], c);
  bool po = ins.has(Modifier::Po);
  if (po && (na || nb || nc))
    unsupported(ins, "vmad.po takes no negated operands");
  if ((na != nb) && nc)
    unsupported(ins, "vmad negates either the product or c, not both");
  Modifier at = instruction_type(ins, 1), bt = instruction_type(ins, 2);
  bool product_negated = na != nb;
  bool signed_final = is_signed(at) || is_signed(bt) || product_negated || nc;
  Type* i128 = b_.getInt128Ty();
  Value* x = b_.CreateSExt(video_part(ins, a, is_signed(at)), i128);
  Value* y = b_.CreateSExt(video_part(ins, bop, is_signed(bt)), i128);
  Value* t = b_.CreateMul(x, y);
  Value* cw = value(ins, c, b_.getInt32Ty(), false);
  Value* c128 = signed_final ? b_.CreateSExt(cw, i128) : b_.CreateZExt(cw, i128);
  if (product_negated)
    t = b_.CreateNeg(t);
  else if (nc)
    c128 = b_.CreateNeg(c128);
  t = b_.CreateAdd(t, c128);
  if (po)
    t = b_.CreateAdd(t, ConstantInt::get(i128, 1));
  if (ins.has(Modifier::Shr7))
    t = b_.CreateAShr(t, 7);
  else if (ins.has(Modifier::Shr15))
    t = b_.CreateAShr(t, 15);
  if (ins.has(Modifier::Sat)) {
    int64_t lo = signed_final ? INT32_MIN : 0;
    int64_t hi = signed_final ? INT32_MAX : int64_t(UINT32_MAX);
    t = b_.CreateBinaryIntrinsic(Intrinsic::smax, t, ConstantInt::get(i128, uint64_t(lo), true));
    t = b_.CreateBinaryIntrinsic(Intrinsic::smin, t, ConstantInt::get(i128, uint64_t(hi), true));
  }
  store(ins, ins.operands[0], b_.CreateTrunc(t, b_.getInt32Ty()), false);
}

} // namespace mimic::codegen
