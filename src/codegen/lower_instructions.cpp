// Lowering of individual PTX instructions (the scalar subset: integer and float
// arithmetic, comparisons, conversions, loads and stores, branches). Everything else is
// refused by name, so a kernel that uses it fails at load with the line that did.
#include "codegen/lower_impl.h"

#include <llvm/IR/Intrinsics.h>

namespace mimic::codegen {

using namespace llvm;
using ptx::Modifier;
using ptx::Opcode;

namespace {

bool has(const ptx::Instruction& ins, Modifier m) { return ins.has(m); }

} // namespace

ptx::Modifier FunctionLowering::instruction_type(const ptx::Instruction& ins, size_t nth) {
  size_t seen = 0;
  for (Modifier m : ins.mods())
    if (ptx::is_type(m) && seen++ == nth)
      return m;
  return Modifier::None;
}

Value* FunctionLowering::flush_denormal(Value* v) {
  if (!v->getType()->isFloatTy())
    return v;
  Value* mag = b_.CreateUnaryIntrinsic(Intrinsic::fabs, v);
  Value* tiny = b_.CreateFCmpOLT(mag, ConstantFP::get(v->getType(), 1.17549435e-38));
  Value* zero = b_.CreateBinaryIntrinsic(Intrinsic::copysign, ConstantFP::get(v->getType(), 0.0), v);
  return b_.CreateSelect(tiny, zero, v);
}

// .sat on floats: clamp to [0, 1], NaN to 0.
Value* FunctionLowering::saturate(Value* v) {
  Type* t = v->getType();
  Value* lo = b_.CreateBinaryIntrinsic(Intrinsic::maxnum, v, ConstantFP::get(t, 0.0));
  Value* clamped = b_.CreateBinaryIntrinsic(Intrinsic::minnum, lo, ConstantFP::get(t, 1.0));
  return b_.CreateSelect(b_.CreateFCmpUNO(v, v), ConstantFP::get(t, 0.0), clamped);
}

void FunctionLowering::lower_instruction(const ptx::Instruction& ins) {
  switch (ins.opcode) {
  case Opcode::Mov: {
    Modifier t = instruction_type(ins);
    Type* ty = type_of(t);
    if (!ty || ins.num_operands != 2 || ins.operands[1].kind == ptx::OperandKind::Vector ||
        ins.operands[0].kind == ptx::OperandKind::Vector)
      unsupported(ins, "this form of mov is not supported yet");
    store(ins, ins.operands[0], value(ins, ins.operands[1], ty, false), false);
    return;
  }
  case Opcode::Cvta: {
    // One address space on the CPU: converting between generic and global is the identity.
    if (has(ins, Modifier::Shared) || has(ins, Modifier::Local) || has(ins, Modifier::Const) ||
        has(ins, Modifier::Param))
      unsupported(ins, "cvta for this state space is not supported yet");
    Type* ty = type_of(instruction_type(ins));
    store(ins, ins.operands[0], value(ins, ins.operands[1], ty, false), false);
    return;
  }
  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Mul:
  case Opcode::Mad:
  case Opcode::Fma:
  case Opcode::Div:
  case Opcode::Rem:
  case Opcode::And:
  case Opcode::Or:
  case Opcode::Xor:
  case Opcode::Not:
  case Opcode::Cnot:
  case Opcode::Shl:
  case Opcode::Shr:
  case Opcode::Neg:
  case Opcode::Abs:
  case Opcode::Min:
  case Opcode::Max:
  case Opcode::Selp:
  case Opcode::Sqrt:
  case Opcode::Rcp:
  case Opcode::Rsqrt:
  case Opcode::Ex2:
  case Opcode::Lg2:
  case Opcode::Sin:
  case Opcode::Cos:
    return lower_integer_or_float(ins);
  case Opcode::Setp:
    return lower_setp(ins);
  case Opcode::Cvt:
    return lower_cvt(ins);
  case Opcode::Ld:
  case Opcode::Ldu:
  case Opcode::St:
    return lower_memory(ins);
  case Opcode::Atom:
  case Opcode::Red:
    return lower_atomic(ins);
  case Opcode::Membar:
  case Opcode::Fence:
    // Blocks run on several host threads: a fence is a sequentially consistent fence.
    b_.CreateFence(AtomicOrdering::SequentiallyConsistent);
    return;
  case Opcode::Bra: {
    if (ins.num_operands != 1 || ins.operands[0].kind != ptx::OperandKind::Name)
      unsupported(ins, "bra needs a label");
    BasicBlock* target = label(ins, ins.operands[0].name_view());
    if (ins.guard.empty()) {
      b_.CreateBr(target);
      return;
    }
    Register* g = reg(ins.guard);
    if (!g || !g->type->isIntegerTy(1))
      unsupported(ins, "guard is not a predicate register");
    Value* cond = b_.CreateLoad(g->type, g->storage);
    if (ins.guard_negated)
      cond = b_.CreateNot(cond);
    BasicBlock* next = BasicBlock::Create(ctx(), "fallthrough", fn_);
    b_.CreateCondBr(cond, target, next);
    b_.SetInsertPoint(next);
    return;
  }
  case Opcode::Ret:
  case Opcode::Exit:
    b_.CreateRetVoid();
    return;
  default:
    unsupported(ins, "'" + std::string(ptx::opcode_name(ins.opcode)) + "' is not supported by the code generator yet");
  }
}

void FunctionLowering::lower_integer_or_float(const ptx::Instruction& ins) {
  Modifier t = instruction_type(ins);
  Type* ty = type_of(t);
  if (!ty)
    unsupported(ins, "the type ." + ptx::modifier_text(t) + " is not supported yet");
  bool fp = is_float(t);
  bool sgn = is_signed(t);
  bool ftz = has(ins, Modifier::Ftz);
  auto in = [&](size_t i, Type* want = nullptr) {
    Value* v = value(ins, ins.operands[i], want ? want : ty, sgn);
    return fp && ftz ? flush_denormal(v) : v;
  };
  auto out = [&](Value* v) {
    if (fp && ftz)
      v = flush_denormal(v);
    if (fp && has(ins, Modifier::Sat))
      v = saturate(v);
    store(ins, ins.operands[0], v, sgn);
  };
  unsigned bits = ty->getPrimitiveSizeInBits();
  Type* wide = IntegerType::get(ctx(), bits * 2);

  switch (ins.opcode) {
  case Opcode::Add:
  case Opcode::Sub: {
    if (has(ins, Modifier::Cc) || (!fp && has(ins, Modifier::Sat)))
      unsupported(ins, "carry and saturating integer add/sub are not supported yet");
    Value* a = in(1);
    Value* c = in(2);
    bool add = ins.opcode == Opcode::Add;
    out(fp ? (add ? b_.CreateFAdd(a, c) : b_.CreateFSub(a, c)) : (add ? b_.CreateAdd(a, c) : b_.CreateSub(a, c)));
    return;
  }
  case Opcode::Mul:
  case Opcode::Mad: {
    bool mad = ins.opcode == Opcode::Mad;
    if (fp) {
      Value* a = in(1);
      Value* c = in(2);
      Value* r = mad ? b_.CreateIntrinsic(Intrinsic::fma, {ty}, {a, c, in(3)}) : b_.CreateFMul(a, c);
      out(r);
      return;
    }
    Value* a = in(1);
    Value* c = in(2);
    if (has(ins, Modifier::Wide)) {
      Value* p = b_.CreateMul(sgn ? b_.CreateSExt(a, wide) : b_.CreateZExt(a, wide),
                              sgn ? b_.CreateSExt(c, wide) : b_.CreateZExt(c, wide));
      if (mad)
        p = b_.CreateAdd(p, value(ins, ins.operands[3], wide, sgn));
      store(ins, ins.operands[0], p, sgn);
      return;
    }
    Value* p;
    if (has(ins, Modifier::Hi)) {
      Value* full = b_.CreateMul(sgn ? b_.CreateSExt(a, wide) : b_.CreateZExt(a, wide),
                                 sgn ? b_.CreateSExt(c, wide) : b_.CreateZExt(c, wide));
      p = b_.CreateTrunc(b_.CreateLShr(full, bits), ty);
    } else {
      p = b_.CreateMul(a, c);
    }
    if (mad) {
      if (has(ins, Modifier::Sat) || has(ins, Modifier::Cc))
        unsupported(ins, "mad with .sat or .cc is not supported yet");
      p = b_.CreateAdd(p, in(3));
    }
    out(p);
    return;
  }
  case Opcode::Fma:
    out(b_.CreateIntrinsic(Intrinsic::fma, {ty}, {in(1), in(2), in(3)}));
    return;
  case Opcode::Div:
  case Opcode::Rem: {
    Value* a = in(1);
    Value* c = in(2);
    if (fp) {
      if (ins.opcode == Opcode::Rem)
        unsupported(ins, "rem on floats does not exist");
      out(b_.CreateFDiv(a, c));
      return;
    }
    // PTX leaves x/0 machine-defined; LLVM makes it undefined. Divide by 1 instead and
    // give the all-ones quotient (and the dividend as remainder) that NVIDIA GPUs return.
    Value* zero = b_.CreateICmpEQ(c, ConstantInt::get(ty, 0));
    Value* safe = b_.CreateSelect(zero, ConstantInt::get(ty, 1), c);
    if (sgn) { // INT_MIN / -1 overflows: the result wraps
      Value* overflow = b_.CreateAnd(b_.CreateICmpEQ(a, ConstantInt::get(ty, APInt::getSignedMinValue(bits))),
                                     b_.CreateICmpEQ(c, ConstantInt::getAllOnesValue(ty)));
      safe = b_.CreateSelect(overflow, ConstantInt::get(ty, 1), safe);
      Value* q = ins.opcode == Opcode::Div ? b_.CreateSDiv(a, safe) : b_.CreateSRem(a, safe);
      q = b_.CreateSelect(overflow, ins.opcode == Opcode::Div ? a : ConstantInt::get(ty, 0), q);
      out(b_.CreateSelect(zero, ins.opcode == Opcode::Div ? ConstantInt::getAllOnesValue(ty) : a, q));
      return;
    }
    Value* q = ins.opcode == Opcode::Div ? b_.CreateUDiv(a, safe) : b_.CreateURem(a, safe);
    out(b_.CreateSelect(zero, ins.opcode == Opcode::Div ? ConstantInt::getAllOnesValue(ty) : a, q));
    return;
  }
  case Opcode::And:
  case Opcode::Or:
  case Opcode::Xor: {
    Value* a = in(1);
    Value* c = in(2);
    out(ins.opcode == Opcode::And ? b_.CreateAnd(a, c) : ins.opcode == Opcode::Or ? b_.CreateOr(a, c) : b_.CreateXor(a, c));
    return;
  }
  case Opcode::Not:
    out(b_.CreateNot(in(1)));
    return;
  case Opcode::Cnot:
    out(b_.CreateZExt(b_.CreateICmpEQ(in(1), ConstantInt::get(ty, 0)), ty));
    return;
  case Opcode::Shl:
  case Opcode::Shr: {
    Value* a = in(1);
    Value* n = value(ins, ins.operands[2], b_.getInt32Ty(), false);
    n = convert(n, ty, false);
    // Shift amounts past the width: shl and shr.u give 0, shr.s the sign fill.
    Value* big = b_.CreateICmpUGE(n, ConstantInt::get(ty, bits));
    Value* clamped = b_.CreateSelect(big, ConstantInt::get(ty, bits - 1), n);
    Value* r;
    if (ins.opcode == Opcode::Shl)
      r = b_.CreateSelect(big, ConstantInt::get(ty, 0), b_.CreateShl(a, clamped));
    else if (sgn)
      r = b_.CreateAShr(a, clamped);
    else
      r = b_.CreateSelect(big, ConstantInt::get(ty, 0), b_.CreateLShr(a, clamped));
    out(r);
    return;
  }
  case Opcode::Neg:
    out(fp ? b_.CreateFNeg(in(1)) : b_.CreateNeg(in(1)));
    return;
  case Opcode::Abs:
    out(fp ? b_.CreateUnaryIntrinsic(Intrinsic::fabs, in(1))
           : b_.CreateBinaryIntrinsic(Intrinsic::abs, in(1), b_.getFalse()));
    return;
  case Opcode::Min:
  case Opcode::Max: {
    bool is_min = ins.opcode == Opcode::Min;
    if (ins.num_operands != 3 || has(ins, Modifier::Relu))
      unsupported(ins, "this form of min/max is not supported yet");
    Value* a = in(1);
    Value* c = in(2);
    Value* r;
    if (fp) // PTX min/max return the other operand when one is NaN (minNum/maxNum); .NaN propagates
      r = has(ins, Modifier::NaN) ? b_.CreateBinaryIntrinsic(is_min ? Intrinsic::minimum : Intrinsic::maximum, a, c)
                                  : b_.CreateBinaryIntrinsic(is_min ? Intrinsic::minnum : Intrinsic::maxnum, a, c);
    else
      r = b_.CreateBinaryIntrinsic(is_min ? (sgn ? Intrinsic::smin : Intrinsic::umin) : (sgn ? Intrinsic::smax : Intrinsic::umax),
                                   a, c);
    out(r);
    return;
  }
  case Opcode::Selp: {
    Value* cond = value(ins, ins.operands[3], b_.getInt1Ty(), false);
    out(b_.CreateSelect(cond, in(1), in(2)));
    return;
  }
  case Opcode::Sqrt:
    out(b_.CreateUnaryIntrinsic(Intrinsic::sqrt, in(1)));
    return;
  case Opcode::Rcp:
    out(b_.CreateFDiv(ConstantFP::get(ty, 1.0), in(1)));
    return;
  case Opcode::Rsqrt:
    out(b_.CreateFDiv(ConstantFP::get(ty, 1.0), b_.CreateUnaryIntrinsic(Intrinsic::sqrt, in(1))));
    return;
  case Opcode::Ex2:
    out(b_.CreateUnaryIntrinsic(Intrinsic::exp2, in(1)));
    return;
  case Opcode::Lg2:
    out(b_.CreateUnaryIntrinsic(Intrinsic::log2, in(1)));
    return;
  case Opcode::Sin:
    out(b_.CreateUnaryIntrinsic(Intrinsic::sin, in(1)));
    return;
  case Opcode::Cos:
    out(b_.CreateUnaryIntrinsic(Intrinsic::cos, in(1)));
    return;
  default:
    unsupported(ins, "not supported yet");
  }
}

void FunctionLowering::lower_setp(const ptx::Instruction& ins) {
  Modifier t = instruction_type(ins);
  Type* ty = type_of(t);
  if (!ty || ins.num_operands < 3)
    unsupported(ins, "this form of setp is not supported yet");
  bool fp = is_float(t), sgn = is_signed(t);
  Value* a = value(ins, ins.operands[1], ty, sgn);
  Value* c = value(ins, ins.operands[2], ty, sgn);
  if (fp && has(ins, Modifier::Ftz)) {
    a = flush_denormal(a);
    c = flush_denormal(c);
  }
  Value* r = nullptr;
  for (Modifier m : ins.mods()) {
    switch (m) {
    case Modifier::Eq: r = fp ? b_.CreateFCmpOEQ(a, c) : b_.CreateICmpEQ(a, c); break;
    case Modifier::Ne: r = fp ? b_.CreateFCmpONE(a, c) : b_.CreateICmpNE(a, c); break;
    case Modifier::Lt: r = fp ? b_.CreateFCmpOLT(a, c) : sgn ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c); break;
    case Modifier::Le: r = fp ? b_.CreateFCmpOLE(a, c) : sgn ? b_.CreateICmpSLE(a, c) : b_.CreateICmpULE(a, c); break;
    case Modifier::Gt: r = fp ? b_.CreateFCmpOGT(a, c) : sgn ? b_.CreateICmpSGT(a, c) : b_.CreateICmpUGT(a, c); break;
    case Modifier::Ge: r = fp ? b_.CreateFCmpOGE(a, c) : sgn ? b_.CreateICmpSGE(a, c) : b_.CreateICmpUGE(a, c); break;
    case Modifier::Lo: r = b_.CreateICmpULT(a, c); break;
    case Modifier::Ls: r = b_.CreateICmpULE(a, c); break;
    case Modifier::Hi: r = b_.CreateICmpUGT(a, c); break;
    case Modifier::Hs: r = b_.CreateICmpUGE(a, c); break;
    case Modifier::Equ: r = b_.CreateFCmpUEQ(a, c); break;
    case Modifier::Neu: r = b_.CreateFCmpUNE(a, c); break;
    case Modifier::Ltu: r = b_.CreateFCmpULT(a, c); break;
    case Modifier::Leu: r = b_.CreateFCmpULE(a, c); break;
    case Modifier::Gtu: r = b_.CreateFCmpUGT(a, c); break;
    case Modifier::Geu: r = b_.CreateFCmpUGE(a, c); break;
    case Modifier::Num: r = b_.CreateFCmpORD(a, c); break;
    case Modifier::Nan: r = b_.CreateFCmpUNO(a, c); break;
    default: continue;
    }
    break;
  }
  if (!r)
    unsupported(ins, "setp needs a comparison");
  if (ins.num_operands == 4) { // setp.cmp.bool.type p, a, b, c
    Value* q = value(ins, ins.operands[3], b_.getInt1Ty(), false);
    if (has(ins, Modifier::And))
      r = b_.CreateAnd(r, q);
    else if (has(ins, Modifier::Or))
      r = b_.CreateOr(r, q);
    else if (has(ins, Modifier::Xor))
      r = b_.CreateXor(r, q);
  }
  const ptx::Operand& d = ins.operands[0];
  if (d.kind == ptx::OperandKind::Pair) {
    store(ins, d.elems[0], r, false);
    store(ins, d.elems[1], b_.CreateNot(r), false);
    return;
  }
  store(ins, d, r, false);
}

void FunctionLowering::lower_cvt(const ptx::Instruction& ins) {
  Modifier to_t = instruction_type(ins, 0), from_t = instruction_type(ins, 1);
  Type* to = type_of(to_t);
  Type* from = type_of(from_t);
  if (!to || !from || ins.num_operands != 2 || to_t == Modifier::F16 || from_t == Modifier::F16 ||
      to_t == Modifier::Bf16 || from_t == Modifier::Bf16)
    unsupported(ins, "this conversion is not supported yet");
  bool to_fp = is_float(to_t), from_fp = is_float(from_t);
  Value* v = value(ins, ins.operands[1], from, is_signed(from_t));
  if (from_fp && has(ins, Modifier::Ftz))
    v = flush_denormal(v);
  Value* r;
  if (!to_fp && !from_fp) {
    if (has(ins, Modifier::Sat)) {
      unsupported(ins, "saturating integer conversions are not supported yet");
    }
    unsigned fb = from->getPrimitiveSizeInBits(), tb = to->getPrimitiveSizeInBits();
    r = fb == tb ? v : fb < tb ? (is_signed(from_t) ? b_.CreateSExt(v, to) : b_.CreateZExt(v, to)) : b_.CreateTrunc(v, to);
  } else if (to_fp && from_fp) {
    if (to->getPrimitiveSizeInBits() > from->getPrimitiveSizeInBits()) {
      r = b_.CreateFPExt(v, to);
    } else if (to == from) { // cvt.rni.f32.f32 etc: round to an integral value
      Intrinsic::ID id = has(ins, Modifier::Rzi) ? Intrinsic::trunc
                         : has(ins, Modifier::Rmi) ? Intrinsic::floor
                         : has(ins, Modifier::Rpi) ? Intrinsic::ceil
                         : has(ins, Modifier::Rni) ? Intrinsic::roundeven
                                                   : Intrinsic::not_intrinsic;
      r = id == Intrinsic::not_intrinsic ? v : b_.CreateUnaryIntrinsic(id, v);
    } else {
      if (has(ins, Modifier::Rz) || has(ins, Modifier::Rm) || has(ins, Modifier::Rp))
        unsupported(ins, "directed rounding of f64 to f32 is not supported yet");
      r = b_.CreateFPTrunc(v, to);
    }
    if (has(ins, Modifier::Sat))
      r = saturate(r);
  } else if (to_fp) { // integer -> float, round to nearest
    if (has(ins, Modifier::Rz) || has(ins, Modifier::Rm) || has(ins, Modifier::Rp))
      unsupported(ins, "directed rounding of integer to float is not supported yet");
    r = is_signed(from_t) ? b_.CreateSIToFP(v, to) : b_.CreateUIToFP(v, to);
  } else { // float -> integer: round as asked, saturate, NaN -> 0 (PTX semantics)
    Intrinsic::ID id = has(ins, Modifier::Rni) ? Intrinsic::roundeven
                       : has(ins, Modifier::Rmi) ? Intrinsic::floor
                       : has(ins, Modifier::Rpi) ? Intrinsic::ceil
                                                 : Intrinsic::trunc;
    Value* rounded = b_.CreateUnaryIntrinsic(id, v);
    r = b_.CreateIntrinsic(is_signed(to_t) ? Intrinsic::fptosi_sat : Intrinsic::fptoui_sat, {to, from}, {rounded});
  }
  store(ins, ins.operands[0], r, is_signed(to_t));
}

void FunctionLowering::lower_memory(const ptx::Instruction& ins) {
  Modifier space = Modifier::None;
  for (Modifier m : ins.mods())
    if (ptx::is_state_space(m))
      space = m;
  if (space == Modifier::Shared || space == Modifier::SharedCta || space == Modifier::SharedCluster ||
      space == Modifier::Local || has(ins, Modifier::Volatile) || has(ins, Modifier::Relaxed) ||
      has(ins, Modifier::Acquire) || has(ins, Modifier::Release))
    unsupported(ins, "this state space or memory order is not supported yet");
  if (space == Modifier::Param && !info_.function)
    unsupported(ins, "ld.param outside a kernel");
  Modifier t = instruction_type(ins);
  Type* ty = type_of(t);
  if (!ty)
    unsupported(ins, "the type ." + ptx::modifier_text(t) + " is not supported yet");
  unsigned lanes = has(ins, Modifier::V2) ? 2 : has(ins, Modifier::V4) ? 4 : 1;
  if (has(ins, Modifier::V8))
    unsupported(ins, ".v8 is not supported yet");
  size_t size = ty->getPrimitiveSizeInBits() / 8;
  bool load = ins.opcode != Opcode::St;
  const ptx::Operand& data = load ? ins.operands[0] : ins.operands[1];
  Value* base = address(ins, load ? ins.operands[1] : ins.operands[0], space);
  auto element_ptr = [&](unsigned i) {
    return i == 0 ? base : b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt64(i * size));
  };
  if (lanes == 1) {
    if (load) {
      LoadInst* v = b_.CreateLoad(ty, base);
      v->setAlignment(Align(size));
      store(ins, data, v, is_signed(t));
    } else {
      StoreInst* s = b_.CreateStore(value(ins, data, ty, is_signed(t)), base);
      s->setAlignment(Align(size));
    }
    return;
  }
  if (data.kind != ptx::OperandKind::Vector || data.count != lanes)
    unsupported(ins, "a vector access needs a vector operand of as many elements");
  for (unsigned i = 0; i < lanes; ++i) {
    const ptx::Operand& e = data.elems[i];
    if (load) {
      LoadInst* v = b_.CreateLoad(ty, element_ptr(i));
      v->setAlignment(Align(i == 0 ? size * lanes : size));
      store(ins, e, v, is_signed(t));
    } else {
      StoreInst* s = b_.CreateStore(value(ins, e, ty, is_signed(t)), element_ptr(i));
      s->setAlignment(Align(i == 0 ? size * lanes : size));
    }
  }
}

} // namespace mimic::codegen

namespace mimic::codegen {

// atom / red on global or generic memory: native atomic read-modify-write instructions,
// sequentially consistent (stronger than any PTX scope and ordering asks for).
void FunctionLowering::lower_atomic(const ptx::Instruction& ins) {
  using llvm::AtomicRMWInst;
  for (Modifier m : ins.mods())
    if (m == Modifier::Shared || m == Modifier::SharedCta || m == Modifier::SharedCluster || ptx::is_vector(m))
      unsupported(ins, "this form of atomic is not supported yet");
  Modifier t = instruction_type(ins);
  Type* ty = type_of(t);
  if (!ty || t == Modifier::F16 || t == Modifier::Bf16 || t == Modifier::F16x2 || t == Modifier::Bf16x2 ||
      ty->getPrimitiveSizeInBits() < 32)
    unsupported(ins, "atomics on this type are not supported yet");
  bool red = ins.opcode == Opcode::Red;
  size_t first = red ? 0 : 1;
  if (ins.num_operands < first + 2)
    unsupported(ins, "missing operands");
  Value* ptr = address(ins, ins.operands[first], Modifier::Global);
  bool fp = is_float(t), sgn = is_signed(t);
  Value* v = value(ins, ins.operands[first + 1], ty, sgn);
  auto ordering = AtomicOrdering::SequentiallyConsistent;
  Value* old = nullptr;
  if (has(ins, Modifier::Cas)) {
    Value* desired = value(ins, ins.operands[first + 2], ty, sgn);
    Type* it = IntegerType::get(ctx(), ty->getPrimitiveSizeInBits());
    auto* cx = b_.CreateAtomicCmpXchg(ptr, convert(v, it, false), convert(desired, it, false), MaybeAlign(),
                                      ordering, ordering);
    old = convert(b_.CreateExtractValue(cx, 0), ty, false);
  } else {
    AtomicRMWInst::BinOp op;
    if (has(ins, Modifier::Add))
      op = fp ? AtomicRMWInst::FAdd : AtomicRMWInst::Add;
    else if (has(ins, Modifier::Min))
      op = fp ? AtomicRMWInst::FMin : sgn ? AtomicRMWInst::Min : AtomicRMWInst::UMin;
    else if (has(ins, Modifier::Max))
      op = fp ? AtomicRMWInst::FMax : sgn ? AtomicRMWInst::Max : AtomicRMWInst::UMax;
    else if (has(ins, Modifier::Exch))
      op = AtomicRMWInst::Xchg;
    else if (has(ins, Modifier::And))
      op = AtomicRMWInst::And;
    else if (has(ins, Modifier::Or))
      op = AtomicRMWInst::Or;
    else if (has(ins, Modifier::Xor))
      op = AtomicRMWInst::Xor;
    else if (has(ins, Modifier::Inc))
      op = AtomicRMWInst::UIncWrap; // ((old >= v) ? 0 : old + 1), as PTX defines
    else if (has(ins, Modifier::Dec))
      op = AtomicRMWInst::UDecWrap; // ((old == 0 || old > v) ? v : old - 1)
    else
      unsupported(ins, "unknown atomic operation");
    if (fp && op != AtomicRMWInst::FAdd && op != AtomicRMWInst::Xchg && op != AtomicRMWInst::FMin &&
        op != AtomicRMWInst::FMax)
      unsupported(ins, "this atomic operation on floats is not supported");
    Value* operand = v;
    if (op == AtomicRMWInst::Xchg && fp)
      operand = convert(v, IntegerType::get(ctx(), ty->getPrimitiveSizeInBits()), false);
    old = b_.CreateAtomicRMW(op, ptr, operand, MaybeAlign(), ordering);
    if (old->getType() != ty)
      old = convert(old, ty, false);
  }
  if (!red)
    store(ins, ins.operands[0], old, sgn);
}

} // namespace mimic::codegen
