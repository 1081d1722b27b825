// Barriers and warp operations: split points of the resumable thread loop (block_state.h).
// A thread publishes what the others need (its barrier id and count, its operand of a
// shuffle or vote), stops, and on resume reads the result the executor or the warp
// helpers derive from every participant's published value.
#include "codegen/lower_impl.h"

namespace mimic::codegen {

using namespace llvm;
using ptx::Modifier;
using ptx::Opcode;

// shfl's source lane for `lane`: c packs the clamp value (bits 0-4) and the segment mask
// (bits 8-12); `bv` is b & 31.
ShuffleSource shuffle_source(IRBuilder<>& b, uint32_t mode, Value* lane, Value* bv, Value* cv) {
  Value* clamp = b.CreateAnd(cv, 31);
  Value* segmask = b.CreateAnd(b.CreateLShr(cv, 8), 31);
  Value* min_lane = b.CreateAnd(lane, segmask);
  Value* max_lane = b.CreateOr(min_lane, b.CreateAnd(clamp, b.CreateNot(segmask)));
  Value* j;
  Value* in_range;
  switch (mode) {
  case 0: // up
    j = b.CreateSub(lane, bv);
    in_range = b.CreateICmpSGE(j, max_lane);
    break;
  case 1: // down
    j = b.CreateAdd(lane, bv);
    in_range = b.CreateICmpSLE(j, max_lane);
    break;
  case 2: // bfly
    j = b.CreateXor(lane, bv);
    in_range = b.CreateICmpSLE(j, max_lane);
    break;
  default: // idx
    j = b.CreateOr(min_lane, b.CreateAnd(bv, b.CreateNot(segmask)));
    in_range = b.CreateICmpSLE(j, max_lane);
    break;
  }
  return {j, in_range};
}

namespace {

// Where a thread's own slot of a per-thread array of BlockState is.
Value* thread_slot(IRBuilder<>& b, Value* array, Type* element, Value* t) { return b.CreateGEP(element, array, t); }

} // namespace

void FunctionLowering::lower_barrier(const ptx::Instruction& ins) {
  auto publish_barrier = [&](Value* id, Value* count, uint32_t extra) {
    Value* word = b_.CreateOr(b_.CreateAnd(id, b_.getInt32(0xff)), b_.CreateShl(b_.CreateAnd(count, b_.getInt32(0xffff)), 8));
    if (extra)
      word = b_.CreateOr(word, b_.getInt32(extra));
    publish_wait(word);
  };
  auto operand_u32 = [&](size_t i) { return value(ins, ins.operands[i], b_.getInt32Ty(), false); };
  // Memory written before a barrier is visible after it: every split point is a call
  // boundary for the loop, and the executor's hand-off between host threads is ordered.
  if (ins.has(Modifier::Cluster)) {
    // A cluster of one block (LoweredKernel::cluster): waiting for the cluster is waiting
    // for the block; arriving alone has nothing to do.
    lowering_.facts[fn_].cluster = true;
    if (ins.has(Modifier::Arrive))
      return;
    publish_barrier(b_.getInt32(0), b_.getInt32(0), 0);
    split(SplitKind::Barrier);
    return;
  }
  if (ins.has(Modifier::Warp)) { // bar.warp.sync membermask: waits for the lanes of membermask
    publish_wait(operand_u32(0));
    split(SplitKind::Warp);
    return;
  }
  if (ins.has(Modifier::Red)) {
    // bar.red.popc.u32 d, a{, b}, {!}c  /  bar.red.and|or.pred p, a{, b}, {!}c
    if (ins.num_operands < 3)
      unsupported(ins, "bar.red needs a destination, a barrier and a predicate");
    size_t pred = ins.num_operands - 1;
    Value* count = ins.num_operands == 4 ? operand_u32(2) : b_.getInt32(0);
    BarrierReduction op = ins.has(Modifier::Popc) ? BarrierReduction::Popc
                          : ins.has(Modifier::And) ? BarrierReduction::And
                                                   : BarrierReduction::Or;
    Value* p = value(ins, ins.operands[pred], b_.getInt1Ty(), false);
    Value* exchange = block_field(offsetof(BlockState, exchange), b_.getPtrTy());
    b_.CreateStore(b_.CreateZExt(p, b_.getInt64Ty()), thread_slot(b_, exchange, b_.getInt64Ty(), thread_index()));
    publish_barrier(operand_u32(1), count, uint32_t(op) << 24);
    split(SplitKind::BarrierReduce);
    exchange = block_field(offsetof(BlockState, exchange), b_.getPtrTy());
    Value* result = b_.CreateLoad(b_.getInt64Ty(), thread_slot(b_, exchange, b_.getInt64Ty(), thread_index()));
    store(ins, ins.operands[0], b_.CreateTrunc(result, b_.getInt32Ty()), false);
    return;
  }
  if (ins.num_operands == 0) // barrier.sync with no operand does not exist; `bar.sync` needs an id
    unsupported(ins, "a barrier needs a barrier number");
  Value* count = ins.num_operands >= 2 ? operand_u32(1) : b_.getInt32(0);
  publish_barrier(operand_u32(0), count, 0);
  split(ins.has(Modifier::Arrive) ? SplitKind::Arrive : SplitKind::Barrier);
}

void FunctionLowering::lower_warp(const ptx::Instruction& ins) {
  Type* i32 = b_.getInt32Ty();
  Type* i64 = b_.getInt64Ty();
  Type* ptr = b_.getPtrTy();
  auto publish = [&](Value* v) {
    publishes_exchange_ = true;
    Value* exchange = block_field(offsetof(BlockState, exchange), ptr);
    b_.CreateStore(convert(v, i64, false), thread_slot(b_, exchange, i64, thread_index()));
  };
  // The destination operand, which may be a pair d|p.
  const ptx::Operand& dst = ins.operands[0];
  const ptx::Operand* dst_value = &dst;
  const ptx::Operand* dst_pred = nullptr;
  if (dst.kind == ptx::OperandKind::Pair) {
    dst_value = &dst.elems[0];
    dst_pred = &dst.elems[1];
  }
  auto member_mask = [&](size_t i) -> Value* {
    if (ins.num_operands <= i)
      return b_.getInt32(0xffffffffu); // legacy forms without .sync: the whole warp
    return value(ins, ins.operands[i], i32, false);
  };
  // Stops at the warp operation, telling the executor which lanes it waits for: those of
  // membermask operand `i` (none for activemask and the legacy forms: the lanes that are
  // there take part).
  auto stop = [&](int i) {
    Value* wait_for = i >= 0 && size_t(i) < ins.num_operands ? value(ins, ins.operands[size_t(i)], i32, false)
                                                              : b_.getInt32(0);
    publish_wait(wait_for);
    split(SplitKind::Warp);
  };

  switch (ins.opcode) {
  case Opcode::Activemask: {
    stop(-1);
    Value* masks = block_field(offsetof(BlockState, warp_mask), ptr);
    store(ins, dst, b_.CreateLoad(i32, thread_slot(b_, masks, i32, thread_index())), false);
    return;
  }
  case Opcode::Elect: {
    // elect.sync d|p, membermask: the lowest participating lane leads.
    stop(1);
    Value* masks = block_field(offsetof(BlockState, warp_mask), ptr);
    Value* arrived = b_.CreateLoad(i32, thread_slot(b_, masks, i32, thread_index()));
    Value* members = b_.CreateAnd(arrived, member_mask(1));
    Value* leader = b_.CreateBinaryIntrinsic(Intrinsic::cttz, members, b_.getTrue());
    Value* lane = b_.CreateAnd(thread_index(), b_.getInt32(31));
    store(ins, *dst_value, leader, false);
    if (dst_pred)
      store(ins, *dst_pred, b_.CreateICmpEQ(lane, leader), false);
    return;
  }
  case Opcode::Shfl: {
    // shfl{.sync}.mode.b32 d{|p}, a, b, c{, membermask}
    if (ins.num_operands < 4)
      unsupported(ins, "shfl needs d, a, b and c");
    uint32_t mode = ins.has(Modifier::Up) ? 0 : ins.has(Modifier::Down) ? 1 : ins.has(Modifier::Bfly) ? 2 : 3;
    Value* t = thread_index();
    publishes_shuffle_ = true;
    {
      Value* out = block_field(offsetof(BlockState, shfl_exchange), ptr);
      b_.CreateStore(value(ins, ins.operands[1], i32, false), thread_slot(b_, out, i32, t));
    }
    stop(4);
    // The source lane, computed in line (no call, so a thread loop of shuffles can be
    // vectorised). Out of range, or past the block (a partial last warp), a lane reads its
    // own value; a lane that did not take part gives what it last published (undefined in PTX).
    Value* bv = b_.CreateAnd(value(ins, ins.operands[2], i32, false), 31);
    Value* cv = value(ins, ins.operands[3], i32, false);
    t = thread_index();
    Value* lane = b_.CreateAnd(t, 31);
    Value* base = b_.CreateAnd(t, ~31u);
    auto [j, in_range] = shuffle_source(b_, mode, lane, bv, cv);
    Value* nthreads = block_field(offsetof(BlockState, nthreads), i32);
    Value* from_other = b_.CreateAnd(in_range, b_.CreateICmpULT(b_.CreateAdd(base, j), nthreads));
    Value* released = block_field(offsetof(BlockState, shfl_released), ptr);
    auto slot = [&](Value* index) { return b_.CreateLoad(i32, thread_slot(b_, released, i32, index)); };
    Value* own = slot(t);
    // up and down read at a distance the same for every lane (b), bfly with a power of two
    // at +b or -b: consecutive reads of shfl_released (its slack covers the lanes whose
    // source lies outside the block), where the general form is a gather. b is usually a
    // constant only once the register holding it is folded, so bfly chooses by a test
    // that folds with it.
    Value* other;
    if (mode == 0) {
      other = slot(b_.CreateSub(t, bv));
    } else if (mode == 1) {
      other = slot(b_.CreateAdd(t, bv));
    } else {
      other = slot(b_.CreateAdd(base, b_.CreateSelect(from_other, j, lane)));
      if (mode == 2) {
        Value* below = b_.CreateICmpNE(b_.CreateAnd(lane, bv), b_.getInt32(0));
        Value* power_of_two = b_.CreateICmpEQ(b_.CreateUnaryIntrinsic(Intrinsic::ctpop, bv), b_.getInt32(1));
        other = b_.CreateSelect(power_of_two,
                                b_.CreateSelect(below, slot(b_.CreateSub(t, bv)), slot(b_.CreateAdd(t, bv))), other);
      }
    }
    store(ins, *dst_value, b_.CreateSelect(from_other, other, own), false);
    if (dst_pred)
      store(ins, *dst_pred, in_range, false);
    (void)member_mask;
    return;
  }
  case Opcode::Vote: {
    // vote{.sync}.mode.pred d, {!}a{, membermask}; vote{.sync}.ballot.b32 d, {!}a{, membermask}
    if (ins.num_operands < 2)
      unsupported(ins, "vote needs d and a");
    uint32_t mode = ins.has(Modifier::All) ? 0 : ins.has(Modifier::Any) ? 1 : ins.has(Modifier::Uni) ? 2 : 3;
    publish(b_.CreateZExt(value(ins, ins.operands[1], b_.getInt1Ty(), false), i64));
    stop(2);
    Function* f = lowering_.helper("mimic_warp_vote", i32, {ptr, i32, i32, i32});
    Value* r = b_.CreateCall(f, {block_, thread_index(), b_.getInt32(mode), member_mask(2)});
    store(ins, dst, mode == 3 ? r : b_.CreateICmpNE(r, b_.getInt32(0)), false);
    return;
  }
  case Opcode::Match: {
    // match.any.sync.b32|b64 d, a, membermask; match.all.sync.b32|b64 d{|p}, a, membermask
    if (ins.num_operands < 3)
      unsupported(ins, "match needs d, a and membermask");
    bool wide = ins.has(Modifier::B64);
    publish(value(ins, ins.operands[1], wide ? i64 : i32, false));
    stop(2);
    Function* f = lowering_.helper("mimic_warp_match", i64, {ptr, i32, i32, i32, i32});
    Value* r = b_.CreateCall(f, {block_, thread_index(), b_.getInt32(ins.has(Modifier::All) ? 1 : 0),
                                 b_.getInt32(wide ? 1 : 0), member_mask(2)});
    store(ins, *dst_value, b_.CreateTrunc(r, i32), false);
    if (dst_pred)
      store(ins, *dst_pred, b_.CreateTrunc(b_.CreateLShr(r, 32), b_.getInt1Ty()), false);
    return;
  }
  case Opcode::Redux: {
    // redux.sync.op.type d, a, membermask; redux.sync.min|max{.abs}{.NaN}.f32 d, a, membermask
    if (ins.num_operands < 3)
      unsupported(ins, "redux needs d, a and membermask");
    bool f32 = ins.has(Modifier::F32);
    if (f32 && !ins.has(Modifier::Min) && !ins.has(Modifier::Max))
      unsupported(ins, "redux.sync on .f32 is .min or .max");
    uint32_t op = f32 ? (ins.has(Modifier::Min) ? 6 : 7) : ins.has(Modifier::Add)   ? 0
                  : ins.has(Modifier::Min) ? 1
                  : ins.has(Modifier::Max) ? 2
                  : ins.has(Modifier::And) ? 3
                  : ins.has(Modifier::Or)  ? 4
                                           : 5;
    publish(value(ins, ins.operands[1], i32, false));
    stop(2);
    Function* f = lowering_.helper("mimic_warp_redux", i32, {ptr, i32, i32, i32, i32});
    Value* r = b_.CreateCall(f, {block_, thread_index(), b_.getInt32(op),
                                 b_.getInt32(f32 ? (ins.has(Modifier::Abs) ? 1 : 0) | (ins.has(Modifier::NaN) ? 2 : 0)
                                                 : ins.has(Modifier::S32) ? 1 : 0),
                                 member_mask(2)});
    store(ins, dst, r, false);
    return;
  }
  default:
    unsupported(ins, "not a warp operation");
  }
}

// mbarrier: the object's arithmetic is in the backend's helpers; a wait whose phase has not
// completed yields (a split point the executor resumes after running the others), so the
// threads that will arrive get to run. try_wait waits; test_wait answers at once.
void FunctionLowering::lower_mbarrier(const ptx::Instruction& ins) {
  Type* i32 = b_.getInt32Ty();
  Type* i64 = b_.getInt64Ty();
  Type* ptr = b_.getPtrTy();
  Modifier space = ins.has(Modifier::Shared) || ins.has(Modifier::SharedCta) ? Modifier::Shared
                   : ins.has(Modifier::SharedCluster)                        ? Modifier::SharedCluster
                                                                             : Modifier::None;
  auto operand_u32 = [&](size_t i) { return value(ins, ins.operands[i], i32, false); };
  if (ins.has(Modifier::Init)) {
    Value* bar = generic(address(ins, ins.operands[0], space));
    b_.CreateCall(lowering_.helper("mimic_mbarrier_init", b_.getVoidTy(), {ptr, i32}), {bar, operand_u32(1)});
    return;
  }
  if (ins.has(Modifier::Inval)) {
    b_.CreateStore(b_.getInt64(0), address(ins, ins.operands[0], space));
    return;
  }
  if (ins.has(Modifier::PendingCount))
    unsupported(ins, "mbarrier.pending_count is not supported yet");
  Function* tx = lowering_.helper("mimic_mbarrier_tx", b_.getVoidTy(), {ptr, i32});
  if ((ins.has(Modifier::ExpectTx) || ins.has(Modifier::CompleteTx)) && !ins.has(Modifier::Arrive) &&
      !ins.has(Modifier::ArriveDrop)) {
    Value* bar = generic(address(ins, ins.operands[0], space));
    Value* bytes = operand_u32(1);
    b_.CreateCall(tx, {bar, ins.has(Modifier::CompleteTx) ? b_.CreateNeg(bytes) : bytes});
    return;
  }
  if (ins.has(Modifier::Arrive) || ins.has(Modifier::ArriveDrop)) {
    // mbarrier.arrive{_drop}{.expect_tx}... state, [addr]{, count | txCount}
    Value* bar = generic(address(ins, ins.operands[1], space));
    Value* count = b_.getInt32(1);
    if (ins.has(Modifier::ExpectTx))
      b_.CreateCall(tx, {bar, operand_u32(2)});
    else if (ins.num_operands > 2)
      count = operand_u32(2);
    Function* arrive = lowering_.helper("mimic_mbarrier_arrive", i64, {ptr, i32, i32});
    Value* state = b_.CreateCall(arrive, {bar, count, b_.getInt32(ins.has(Modifier::ArriveDrop) ? 1 : 0)});
    store(ins, ins.operands[0], state, false);
    return;
  }
  if (ins.has(Modifier::TestWait) || ins.has(Modifier::TryWait)) {
    // {test,try}_wait{.parity} waitComplete, [addr], state | phaseParity
    Function* phase_of = lowering_.helper("mimic_mbarrier_phase", i32, {ptr});
    bool parity = ins.has(Modifier::Parity);
    auto complete = [&]() {
      Value* bar = generic(address(ins, ins.operands[1], space));
      Value* waited = parity ? b_.CreateAnd(operand_u32(2), b_.getInt32(1))
                             : b_.CreateTrunc(b_.CreateAnd(value(ins, ins.operands[2], i64, false), b_.getInt64(1)), i32);
      return b_.CreateICmpNE(b_.CreateCall(phase_of, {bar}), waited);
    };
    BasicBlock* check = BasicBlock::Create(ctx(), "mbarrier_check", fn_);
    BasicBlock* wait = BasicBlock::Create(ctx(), "mbarrier_wait", fn_);
    BasicBlock* done = BasicBlock::Create(ctx(), "mbarrier_done", fn_);
    b_.CreateBr(check);
    b_.SetInsertPoint(check);
    b_.CreateCondBr(complete(), done, wait);
    b_.SetInsertPoint(wait);
    split(SplitKind::Yield);
    if (ins.has(Modifier::TryWait)) {
      b_.CreateBr(check); // try_wait: wait until the phase completes
    } else {
      store(ins, ins.operands[0], b_.getFalse(), false); // test_wait: not yet
      BasicBlock* after = BasicBlock::Create(ctx(), "mbarrier_after", fn_);
      b_.CreateBr(after);
      b_.SetInsertPoint(done);
      store(ins, ins.operands[0], b_.getTrue(), false);
      b_.CreateBr(after);
      b_.SetInsertPoint(after);
      return;
    }
    b_.SetInsertPoint(done);
    store(ins, ins.operands[0], b_.getTrue(), false);
    return;
  }
  unsupported(ins, "this form of mbarrier is not supported yet");
}

} // namespace mimic::codegen
