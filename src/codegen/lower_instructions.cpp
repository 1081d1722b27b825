// Lowering of individual PTX instructions (the scalar subset: integer and float
// arithmetic, comparisons, conversions, loads and stores, branches). Everything else is
// refused by name, so a kernel that uses it fails at load with the line that did.
#include "codegen/lower_impl.h"
#include "codegen/parallel_loops.h"
#include "codegen/prefetch_calls.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/LowerAtomic.h>

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

void FunctionLowering::lower_instruction(const ptx::Instruction& ins) {
  if (gpu() && lower_gpu_instruction(ins))
    return;
  switch (ins.opcode) {
  case Opcode::Mov: {
    Modifier t = instruction_type(ins);
    Type* ty = type_of(t);
    if (ins.operands[1].kind == ptx::OperandKind::Vector || ins.operands[0].kind == ptx::OperandKind::Vector)
      return lower_mov_vector(ins);
    if (!ty || ins.num_operands != 2)
      unsupported(ins, "this form of mov is not supported yet");
    store(ins, ins.operands[0], value(ins, ins.operands[1], ty, false), false);
    return;
  }
  case Opcode::Cvta:
    return lower_cvta(ins);
  case Opcode::Bar:
  case Opcode::Barrier:
    return lower_barrier(ins);
  case Opcode::Shfl:
  case Opcode::Vote:
  case Opcode::Match:
  case Opcode::Redux:
  case Opcode::Activemask:
  case Opcode::Elect:
    return lower_warp(ins);
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
    if (!is_kernel_ || !inline_stack_.empty()) {
      return_from_function();
      return;
    }
    stop_thread(kThreadExited);
    return;
  case Opcode::Exit:
    stop_thread(kThreadExited);
    return;
  case Opcode::Call:
    return lower_call(ins);
  case Opcode::Cp:
    return lower_cp_async(ins);
  case Opcode::Mbarrier:
    return lower_mbarrier(ins);
  case Opcode::Isspacep: {
    // isspacep.space p, a: whether the generic address a is in that window. Shared: the
    // block's window; local: the block's thread frames; global: neither of those.
    if (ins.num_operands != 2)
      unsupported(ins, "isspacep needs p and a");
    Value* a = value(ins, ins.operands[1], b_.getInt64Ty(), false);
    auto within = [&](Value* base, Value* bytes) {
      Value* lo = b_.CreatePtrToInt(base, b_.getInt64Ty());
      return b_.CreateAnd(b_.CreateICmpUGE(a, lo), b_.CreateICmpULT(a, b_.CreateAdd(lo, bytes)));
    };
    auto in_shared = [&] { return within(shared_base(), block_field(offsetof(BlockState, shared_bytes), b_.getInt64Ty())); };
    auto in_local = [&] {
      Value* frames = block_field(offsetof(BlockState, local), b_.getPtrTy());
      Value* stride = block_field(offsetof(BlockState, local_stride), b_.getInt64Ty());
      Value* count = b_.CreateZExt(block_field(offsetof(BlockState, nthreads), b_.getInt32Ty()), b_.getInt64Ty());
      return within(frames, b_.CreateMul(stride, count));
    };
    Value* r = nullptr;
    if (has(ins, Modifier::Shared) || has(ins, Modifier::SharedCta))
      r = in_shared();
    else if (has(ins, Modifier::Local))
      r = in_local();
    else if (has(ins, Modifier::Global))
      r = b_.CreateNot(b_.CreateOr(in_shared(), in_local()));
    else
      unsupported(ins, "isspacep for this state space is not supported yet");
    store(ins, ins.operands[0], r, false);
    return;
  }
  case Opcode::Nanosleep:
    // A thread that sleeps is waiting for others (a spin loop): let them run first.
    split(SplitKind::Yield);
    return;
  case Opcode::Mma:
  case Opcode::Wmma:
  case Opcode::Ldmatrix:
  case Opcode::Stmatrix:
  case Opcode::Movmatrix:
    return lower_matrix(ins);
  case Opcode::Brx: {
    // brx.idx index, table: a jump through a .branchtargets list; an index past its end
    // traps (PTX leaves it undefined).
    if (ins.num_operands != 2 || ins.operands[1].kind != ptx::OperandKind::Name)
      unsupported(ins, "brx.idx needs an index and a .branchtargets label");
    auto table = branch_tables_.find(ins.operands[1].name_view());
    if (table == branch_tables_.end())
      unsupported(ins, "'" + std::string(ins.operands[1].name_view()) + "' is not a .branchtargets list");
    Value* index = value(ins, ins.operands[0], b_.getInt32Ty(), false);
    BasicBlock* out_of_range = BasicBlock::Create(ctx(), "brx_out_of_range", fn_);
    SwitchInst* sw = b_.CreateSwitch(index, out_of_range, unsigned(table->second.size()));
    for (size_t i = 0; i < table->second.size(); ++i)
      sw->addCase(b_.getInt32(uint32_t(i)), label(ins, table->second[i]));
    b_.SetInsertPoint(out_of_range);
    stop_thread(kThreadTrapped);
    return;
  }
  case Opcode::Tex:
  case Opcode::Tld4:
    return lower_texture(ins);
  case Opcode::Suld:
  case Opcode::Sust:
    return lower_surface(ins);
  case Opcode::Txq:
  case Opcode::Suq:
    return lower_texture_query(ins);
  case Opcode::Trap:
    stop_thread(kThreadTrapped);
    return;
  case Opcode::Brkpt:
    // Without a debugger attached a breakpoint stops the kernel like trap.
    stop_thread(kThreadTrapped);
    return;
  case Opcode::Prefetch:
  case Opcode::Prefetchu:
    lower_prefetch(ins);
    return;
  case Opcode::Applypriority:
  case Opcode::Discard:
  case Opcode::Pmevent:
  case Opcode::Setmaxnreg:
    // Eviction priorities, profiler events and register budgets: nothing to do
    // on the CPU. discard.L2 leaves the line's contents undefined, so keeping them is one
    // of its allowed outcomes.
    return;
  case Opcode::Griddepcontrol:
    // Programmatic dependent launch: a stream runs its kernels one after another, so the
    // prerequisite grid has completed before this one starts (wait) and an early start of
    // the dependents has nothing to release (launch_dependents).
    return;
  case Opcode::Mapa:
  case Opcode::Getctarank: {
    // mapa{.space}.type d, a, rank: a's counterpart in block `rank` of the cluster;
    // getctarank{.space}.type d, a: the rank of the block a belongs to. A cluster of one
    // block (LoweredKernel::cluster) has rank 0 only: a higher rank traps.
    lowering_.facts[fn_].cluster = true;
    Type* ty = type_of(instruction_type(ins));
    if (!ty || ins.num_operands != (ins.opcode == Opcode::Mapa ? 3u : 2u))
      unsupported(ins, ins.opcode == Opcode::Mapa ? "mapa needs d, a and a rank" : "getctarank needs d and a");
    if (ins.opcode == Opcode::Getctarank) {
      store(ins, ins.operands[0], b_.getInt32(0), false);
      return;
    }
    Value* rank = value(ins, ins.operands[2], b_.getInt32Ty(), false);
    BasicBlock* bad = BasicBlock::Create(ctx(), "mapa_bad_rank", fn_);
    BasicBlock* ok = BasicBlock::Create(ctx(), "mapa", fn_);
    b_.CreateCondBr(b_.CreateICmpNE(rank, b_.getInt32(0)), bad, ok);
    b_.SetInsertPoint(bad);
    stop_thread(kThreadTrapped);
    b_.SetInsertPoint(ok);
    store(ins, ins.operands[0], value(ins, ins.operands[1], ty, false), false);
    return;
  }
  case Opcode::Createpolicy: {
    // createpolicy.* d, ...: an opaque 64-bit cache policy that only the .L2::cache_hint
    // forms of loads and stores read, and they ignore it here.
    if (ins.num_operands < 1)
      unsupported(ins, "createpolicy needs a destination");
    store(ins, ins.operands[0], b_.getInt64(0), false);
    return;
  }
  default:
    if (lower_arithmetic(ins))
      return;
    unsupported(ins, "'" + std::string(ptx::opcode_name(ins.opcode)) + "' is not supported by the code generator yet");
  }
}

void FunctionLowering::lower_memory(const ptx::Instruction& ins) {
  Modifier space = Modifier::None;
  for (Modifier m : ins.mods())
    if (ptx::is_state_space(m))
      space = m;
  // .volatile, .relaxed, .acquire and .release accesses are volatile: never merged, never
  // hoisted out of a spin loop. x86 keeps loads and stores in order already; acquire and
  // release add a fence for the compiler's sake.
  bool ordered = has(ins, Modifier::Volatile) || has(ins, Modifier::Relaxed) || has(ins, Modifier::Acquire) ||
                 has(ins, Modifier::Release);
  // A GPU orders them itself: single accesses are atomic with the instruction's ordering
  // and scope (volatile ones stay volatile), vectors are fenced.
  AtomicOrdering gpu_order = AtomicOrdering::NotAtomic;
  SyncScope::ID gpu_scope_id = SyncScope::System;
  if (gpu() && !has(ins, Modifier::Volatile) && ordered) {
    auto [order, scope] = atomic_semantics(ins);
    gpu_order = order;
    gpu_scope_id = scope;
    ordered = false;
  }
  if (has(ins, Modifier::Release) && gpu_order == AtomicOrdering::NotAtomic)
    b_.CreateFence(AtomicOrdering::Release);
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
  if (load)
    prefetch_next_trip(ins, base);
  if (checking_memory() && space != Modifier::Param && space != Modifier::Local)
    check_access(ins, base, size * lanes, !load,
                 space == Modifier::Shared || space == Modifier::SharedCta || space == Modifier::SharedCluster);
  auto element_ptr = [&](unsigned i) {
    return i == 0 ? base : b_.CreateGEP(b_.getInt8Ty(), base, b_.getInt64(i * size));
  };
  // A kernel's own parameters are read-only for the whole launch.
  const ptx::Operand& where = load ? ins.operands[1] : ins.operands[0];
  bool kernel_param = space == Modifier::Param && where.kind == ptx::OperandKind::Address && where.count == 1 &&
                      where.elems[0].kind == ptx::OperandKind::Name &&
                      kernel_params_.count(where.elems[0].name_view()) != 0;
  // So is what ld.global.nc reads (the non-coherent path nvcc uses for const __restrict__
  // data): PTX leaves it undefined if the kernel writes it, so no store can change it.
  bool read_only = kernel_param || (load && has(ins, Modifier::Nc));
  // A plain access (a store not to a call's .param storage): no other thread may touch the
  // same bytes between two split points without racing (codegen/parallel_loops.h).
  const bool plain = !ordered && gpu_order == AtomicOrdering::NotAtomic && (load || space != Modifier::Param);
  auto tag_plain = [&](Instruction* i) {
    if (plain && !gpu()) {
      i->setMetadata(kPlainAccessMetadata, MDNode::get(ctx(), {}));
      i->setMetadata(LLVMContext::MD_access_group, plain_access_group(*fn_->getParent()));
    }
  };
  auto mark = [&](LoadInst* v) {
    if (read_only)
      v->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(ctx(), {}));
    tag_plain(v);
  };
  if (lanes == 1) {
    if (load) {
      LoadInst* v = b_.CreateLoad(ty, base);
      v->setAlignment(Align(size));
      v->setVolatile(ordered);
      if (gpu_order != AtomicOrdering::NotAtomic)
        v->setAtomic(gpu_order == AtomicOrdering::Release ? AtomicOrdering::Monotonic : gpu_order, gpu_scope_id);
      else
        mark(v);
      if (has(ins, Modifier::Acquire) && gpu_order == AtomicOrdering::NotAtomic)
        b_.CreateFence(AtomicOrdering::Acquire);
      store(ins, data, v, is_signed(t));
    } else {
      StoreInst* s = b_.CreateStore(value(ins, data, ty, is_signed(t)), base);
      s->setAlignment(Align(size));
      s->setVolatile(ordered);
      tag_plain(s);
      if (gpu_order != AtomicOrdering::NotAtomic)
        s->setAtomic(gpu_order == AtomicOrdering::Acquire ? AtomicOrdering::Monotonic : gpu_order, gpu_scope_id);
    }
    return;
  }
  if (data.kind != ptx::OperandKind::Vector || data.count != lanes)
    unsupported(ins, "a vector access needs a vector operand of as many elements");
  if (gpu_order != AtomicOrdering::NotAtomic && has(ins, Modifier::Release))
    b_.CreateFence(AtomicOrdering::Release, gpu_scope_id);
  for (unsigned i = 0; i < lanes; ++i) {
    const ptx::Operand& e = data.elems[i];
    if (load) {
      LoadInst* v = b_.CreateLoad(ty, element_ptr(i));
      v->setAlignment(Align(i == 0 ? size * lanes : size));
      mark(v);
      store(ins, e, v, is_signed(t));
    } else {
      StoreInst* s = b_.CreateStore(value(ins, e, ty, is_signed(t)), element_ptr(i));
      s->setAlignment(Align(i == 0 ? size * lanes : size));
      tag_plain(s);
    }
  }
  if (gpu_order != AtomicOrdering::NotAtomic && has(ins, Modifier::Acquire))
    b_.CreateFence(AtomicOrdering::Acquire, gpu_scope_id);
}

} // namespace mimic::codegen

namespace mimic::codegen {

// atom / red on global or generic memory: native atomic read-modify-write instructions,
// sequentially consistent (stronger than any PTX scope and ordering asks for). On the CPU,
// the threads of a block run one at a time on one worker and only they see its shared
// memory (a cluster is one block), so an atomic on .shared is a plain load, operation and
// store: a locked instruction costs some twenty times more.
void FunctionLowering::lower_atomic(const ptx::Instruction& ins) {
  using llvm::AtomicRMWInst;
  Modifier space = Modifier::None;
  for (Modifier m : ins.mods()) {
    if (ptx::is_vector(m))
      unsupported(ins, "this form of atomic is not supported yet");
    if (ptx::is_state_space(m))
      space = m;
  }
  Modifier t = instruction_type(ins);
  Type* ty = type_of(t);
  bool red = ins.opcode == Opcode::Red;
  size_t first = red ? 0 : 1;
  if (ins.num_operands < first + 2)
    unsupported(ins, "missing operands");
  // Halves (f16, bf16 and their pairs) are held as integers: the operation is on the
  // floating-point view of the same bits.
  Type* half_view = t == Modifier::F16      ? b_.getHalfTy()
                    : t == Modifier::Bf16   ? b_.getBFloatTy()
                    : t == Modifier::F16x2  ? static_cast<Type*>(FixedVectorType::get(b_.getHalfTy(), 2))
                    : t == Modifier::Bf16x2 ? static_cast<Type*>(FixedVectorType::get(b_.getBFloatTy(), 2))
                                            : nullptr;
  if (!ty || (ty->getPrimitiveSizeInBits() < 32 && !half_view && !has(ins, Modifier::Cas) &&
              !has(ins, Modifier::Exch)))
    unsupported(ins, "atomics on this type are not supported yet");
  if (half_view && !has(ins, Modifier::Cas) && !has(ins, Modifier::Exch)) {
    Value* ptr = address(ins, ins.operands[first], space);
    if (checking_memory())
      check_access(ins, ptr, ty->getPrimitiveSizeInBits() / 8, true);
    AtomicRMWInst::BinOp op = has(ins, Modifier::Add)   ? AtomicRMWInst::FAdd
                              : has(ins, Modifier::Min) ? AtomicRMWInst::FMin
                              : has(ins, Modifier::Max) ? AtomicRMWInst::FMax
                                                        : AtomicRMWInst::BAD_BINOP;
    if (op == AtomicRMWInst::BAD_BINOP)
      unsupported(ins, "this atomic operation on halves is not supported");
    Value* v = b_.CreateBitCast(value(ins, ins.operands[first + 1], ty, false), half_view);
    auto [order, scope] = atomic_semantics(ins);
    auto* old = b_.CreateAtomicRMW(op, ptr, v, MaybeAlign(), order, scope);
    if (!red)
      store(ins, ins.operands[0], b_.CreateBitCast(old, ty), false);
    if (block_private(space))
      lowerAtomicRMWInst(old);
    return;
  }
  Value* ptr = address(ins, ins.operands[first], space);
  if (checking_memory())
    check_access(ins, ptr, ty->getPrimitiveSizeInBits() / 8, true);
  bool fp = is_float(t), sgn = is_signed(t);
  Value* v = value(ins, ins.operands[first + 1], ty, sgn);
  auto [ordering, scope] = atomic_semantics(ins);
  Value* old = nullptr;
  Instruction* atomic = nullptr;
  if (has(ins, Modifier::Cas)) {
    Value* desired = value(ins, ins.operands[first + 2], ty, sgn);
    Type* it = IntegerType::get(ctx(), ty->getPrimitiveSizeInBits());
    auto* cx = b_.CreateAtomicCmpXchg(ptr, convert(v, it, false), convert(desired, it, false), MaybeAlign(),
                                      ordering, AtomicCmpXchgInst::getStrongestFailureOrdering(ordering), scope);
    old = convert(b_.CreateExtractValue(cx, 0), ty, false);
    atomic = cx;
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
    old = atomic = b_.CreateAtomicRMW(op, ptr, operand, MaybeAlign(), ordering, scope);
    if (old->getType() != ty)
      old = convert(old, ty, false);
  }
  if (!red)
    store(ins, ins.operands[0], old, sgn);
  if (block_private(space)) {
    if (auto* rmw = dyn_cast<AtomicRMWInst>(atomic))
      lowerAtomicRMWInst(rmw);
    else
      lowerAtomicCmpXchgInst(cast<AtomicCmpXchgInst>(atomic));
  }
}

} // namespace mimic::codegen

namespace mimic::codegen {

// cvta: shared and local addresses are offsets in the block's shared window and the
// thread's frame; generic addresses are host pointers. Global, const and param addresses
// are generic already.
void FunctionLowering::lower_cvta(const ptx::Instruction& ins) {
  if (gpu())
    return gpu_cvta(ins);
  Type* ty = type_of(instruction_type(ins));
  if (!ty || ins.num_operands != 2)
    unsupported(ins, "malformed cvta");
  Value* v = value(ins, ins.operands[1], b_.getInt64Ty(), false);
  Value* base = nullptr;
  if (has(ins, Modifier::SharedCluster)) // a cluster of one block: its own window
    lowering_.facts[fn_].cluster = true;
  if (has(ins, Modifier::Shared) || has(ins, Modifier::SharedCta) || has(ins, Modifier::SharedCluster))
    base = shared_base();
  else if (has(ins, Modifier::Local))
    base = local_base();
  if (base) {
    Value* b = b_.CreatePtrToInt(base, b_.getInt64Ty());
    v = has(ins, Modifier::To) ? b_.CreateSub(v, b) : b_.CreateAdd(v, b);
  }
  store(ins, ins.operands[0], convert(v, ty, false), false);
}

} // namespace mimic::codegen

namespace mimic::codegen {

// The ordering and scope of atom/red. Blocks run on several host threads: on the CPU every
// atomic is sequentially consistent, stronger than any PTX scope and ordering asks for.
std::pair<AtomicOrdering, SyncScope::ID> FunctionLowering::atomic_semantics(const ptx::Instruction& ins) {
  if (!gpu())
    return {AtomicOrdering::SequentiallyConsistent, SyncScope::System};
  // PTX: .relaxed unless said otherwise, .gpu scope unless said otherwise.
  AtomicOrdering order = has(ins, Modifier::AcqRel)    ? AtomicOrdering::AcquireRelease
                         : has(ins, Modifier::Acquire) ? AtomicOrdering::Acquire
                         : has(ins, Modifier::Release) ? AtomicOrdering::Release
                                                       : AtomicOrdering::Monotonic;
  return {order, gpu_scope(ins)};
}

// cp.async (non-bulk): the copy happens at once, so commit_group, wait_group and wait_all
// have nothing left to wait for. Bytes past src-size (or all of them when the ignore-src
// predicate is true) are zero.
void FunctionLowering::lower_cp_async(const ptx::Instruction& ins) {
  if (has(ins, Modifier::Async) && has(ins, Modifier::Bulk))
    return lower_cp_async_bulk(ins);
  if (!has(ins, Modifier::Async))
    unsupported(ins, "this form of cp is not supported yet (cp.async and cp.async.bulk are)");
  if (has(ins, Modifier::Mbarrier)) {
    // cp.async.mbarrier.arrive{.noinc}: the arrive-on happens when the copies before it are
    // done, which they are. Without .noinc the pending count is raised first, so the two
    // cancel; with it, the arrival counts.
    if (has(ins, Modifier::Noinc)) {
      Modifier space = has(ins, Modifier::Shared) || has(ins, Modifier::SharedCta) ? Modifier::Shared : Modifier::None;
      Value* bar = generic(address(ins, ins.operands[0], space));
      Function* f = lowering_.helper("mimic_mbarrier_arrive", b_.getInt64Ty(), {b_.getPtrTy(), b_.getInt32Ty(), b_.getInt32Ty()});
      b_.CreateCall(f, {bar, b_.getInt32(1), b_.getInt32(0)});
    }
    return;
  }
  if (has(ins, Modifier::CommitGroup) || has(ins, Modifier::WaitGroup) || has(ins, Modifier::WaitAll)) {
    b_.CreateFence(AtomicOrdering::AcquireRelease, SyncScope::SingleThread);
    return;
  }
  size_t count = ins.num_operands;
  if (has(ins, Modifier::L2CacheHint))
    --count; // the cache policy operand
  if (count < 3 || ins.operands[2].kind != ptx::OperandKind::Int)
    unsupported(ins, "cp.async needs a destination, a source and a constant size");
  uint64_t size = ins.operands[2].u;
  if (size != 4 && size != 8 && size != 16)
    unsupported(ins, "cp.async copies 4, 8 or 16 bytes");
  Value* dst = address(ins, ins.operands[0], Modifier::Shared);
  Value* src = address(ins, ins.operands[1], Modifier::Global);
  if (count == 3) {
    b_.CreateMemCpy(dst, MaybeAlign(size), src, MaybeAlign(size), size);
    return;
  }
  // src-size (a number of bytes) or ignore-src (a predicate).
  const ptx::Operand& extra = ins.operands[3];
  Value* src_size = nullptr;
  if (extra.kind == ptx::OperandKind::Name && reg(extra.name_view()) &&
      reg(extra.name_view())->type->isIntegerTy(1))
    src_size = b_.CreateSelect(value(ins, extra, b_.getInt1Ty(), false), b_.getInt64(0), b_.getInt64(size));
  else
    src_size = b_.CreateZExt(value(ins, extra, b_.getInt32Ty(), false), b_.getInt64Ty());
  src_size = b_.CreateBinaryIntrinsic(Intrinsic::umin, src_size, b_.getInt64(size));
  b_.CreateMemSet(dst, b_.getInt8(0), size, MaybeAlign(size));
  b_.CreateMemCpy(dst, MaybeAlign(1), src, MaybeAlign(1), src_size);
}

// prefetch{.global|.local}.L1|.L2 [a] and prefetchu.L1 [a]: on the CPU a prefetch of the
// line into the core's L1 (locality 3) or L2 (locality 2) cache; a prefetch never faults,
// so any address is fine. It is a call of @mimic.prefetch.l1/.l2, which the vectoriser can
// widen, made llvm.prefetch after it (codegen/prefetch_calls.h). Tensor-map prefetches,
// and prefetches on a GPU, which has no generic prefetch instruction in LLVM's AMDGPU
// backend, do nothing.
void FunctionLowering::lower_prefetch(const ptx::Instruction& ins) {
  if (gpu() || has(ins, Modifier::Tensormap) || ins.num_operands < 1)
    return;
  const Modifier space = has(ins, Modifier::Local)    ? Modifier::Local
                         : has(ins, Modifier::Global) ? Modifier::Global
                                                      : Modifier::None;
  const bool l2 = has(ins, Modifier::L2) || has(ins, Modifier::L2EvictLast) || has(ins, Modifier::L2EvictNormal);
  Value* p = address(ins, ins.operands[0], space);
  b_.CreateCall(prefetch_function(*fn_->getParent(), l2), {b_.CreatePtrToInt(p, b_.getInt64Ty())});
}

// cp.async.bulk (without .tensor): the bytes are copied at once, so commit_group and
// wait_group find nothing pending, and the completion is signalled on the spot: the mbarrier
// form completes `size` bytes of its transaction count. The destination space comes first:
//   cp.async.bulk.shared::cluster|shared::cta.global.mbarrier::complete_tx::bytes{.multicast::cluster}
//       [dst], [src], size, [mbar]{, ctaMask}{, policy}
//   cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]
//   cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint} [dst], [src], size{, policy}
//   cp.async.bulk.prefetch.L2.global [src], size
void FunctionLowering::lower_cp_async_bulk(const ptx::Instruction& ins) {
  if (has(ins, Modifier::Prefetch) || has(ins, Modifier::CommitGroup) || has(ins, Modifier::WaitGroup))
    return;
  if (has(ins, Modifier::Tensor))
    unsupported(ins, "tensor copies (cp.async.bulk.tensor, TMA) are not supported yet");
  if (has(ins, Modifier::CpMask))
    unsupported(ins, "cp.async.bulk with .cp_mask is not supported yet");
  Modifier spaces[2] = {Modifier::None, Modifier::None};
  unsigned n = 0;
  for (Modifier m : ins.mods())
    if (ptx::is_state_space(m) && n < 2)
      spaces[n++] = m;
  if (n != 2 || ins.num_operands < 3)
    unsupported(ins, "cp.async.bulk needs a destination and a source state space, [dst], [src] and a size");
  auto shared_kind = [](Modifier m) { return m == Modifier::SharedCta ? Modifier::Shared : m; };
  Value* dst = address(ins, ins.operands[0], shared_kind(spaces[0]));
  Value* src = address(ins, ins.operands[1], shared_kind(spaces[1]));
  Value* size = value(ins, ins.operands[2], b_.getInt32Ty(), false);
  bool mbarrier = has(ins, Modifier::MbarrierCompleteTxBytes);
  if (mbarrier && ins.num_operands < 4)
    unsupported(ins, "the mbarrier form of cp.async.bulk needs [mbar]");
  if (checking_memory() && ins.operands[2].kind == ptx::OperandKind::Int) {
    auto is_shared = [](Modifier m) { return m != Modifier::Global; };
    check_access(ins, src, ins.operands[2].u, false, is_shared(spaces[1]));
    check_access(ins, dst, ins.operands[2].u, true, is_shared(spaces[0]));
  }
  BasicBlock* after = nullptr;
  if (has(ins, Modifier::MulticastCluster)) {
    // Multicast to the blocks of ctaMask: in a cluster of one, to this block when bit 0 is set.
    if (ins.num_operands < 5)
      unsupported(ins, "multicast cp.async.bulk needs a ctaMask");
    lowering_.facts[fn_].cluster = true;
    Value* mask = value(ins, ins.operands[4], b_.getInt16Ty(), false);
    BasicBlock* copy = BasicBlock::Create(ctx(), "bulk_copy", fn_);
    after = BasicBlock::Create(ctx(), "bulk_copy_done", fn_);
    b_.CreateCondBr(b_.CreateICmpNE(b_.CreateAnd(mask, b_.getInt16(1)), b_.getInt16(0)), copy, after);
    b_.SetInsertPoint(copy);
  }
  b_.CreateMemCpy(dst, MaybeAlign(16), src, MaybeAlign(16), b_.CreateZExt(size, b_.getInt64Ty()));
  if (mbarrier) {
    Value* bar = generic(address(ins, ins.operands[3], spaces[0] == Modifier::Global ? Modifier::Shared : shared_kind(spaces[0])));
    Function* tx = lowering_.helper("mimic_mbarrier_tx", b_.getVoidTy(), {b_.getPtrTy(), b_.getInt32Ty()});
    b_.CreateCall(tx, {bar, b_.CreateNeg(size)});
  }
  if (after) {
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
  }
}

} // namespace mimic::codegen

namespace mimic::codegen {

void FunctionLowering::check_access(const ptx::Instruction& ins, Value* p, uint64_t bytes, bool is_store,
                                    bool shared) {
  Type* i32 = b_.getInt32Ty();
  Function* f = lowering_.helper("mimic_check_access", i32, {b_.getPtrTy(), i32, b_.getPtrTy(), b_.getInt64Ty(), i32, i32});
  Value* bad = b_.CreateCall(f, {block_, thread_index(), p, b_.getInt64(bytes), b_.getInt32(ins.loc.line),
                                 b_.getInt32((is_store ? 1 : 0) | (shared ? 2 : 0))});
  BasicBlock* fault = BasicBlock::Create(ctx(), "bad_access", fn_);
  BasicBlock* ok = BasicBlock::Create(ctx(), "access", fn_);
  b_.CreateCondBr(b_.CreateICmpNE(bad, b_.getInt32(0)), fault, ok);
  b_.SetInsertPoint(fault);
  BasicBlock* misaligned = BasicBlock::Create(ctx(), "misaligned_access", fn_);
  BasicBlock* outside = BasicBlock::Create(ctx(), "outside_access", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(bad, b_.getInt32(2)), misaligned, outside);
  b_.SetInsertPoint(misaligned);
  stop_thread(kThreadMisaligned);
  b_.SetInsertPoint(outside);
  stop_thread(kThreadFaulted);
  b_.SetInsertPoint(ok);
}

} // namespace mimic::codegen
