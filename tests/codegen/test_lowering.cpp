// The shape of the lowering, one small test per feature: split points and their kinds,
// what is kept across them, shared-memory layout, call stacks, and the errors that name
// what cannot be translated. Behaviour is tested by tests/ptx and tests/cuda.
#include <gtest/gtest.h>

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/block_shape.h"
#include "codegen/block_state.h"
#include "codegen/lower.h"
#include "runtime/program.h"

namespace mimic {
namespace {

const char* kHeader = ".version 8.0\n.target sm_80\n.address_size 64\n";

std::shared_ptr<runtime::Program> program(const std::string& body) {
  auto p = runtime::load_program_from_ptx(kHeader + body, "test.ptx");
  EXPECT_TRUE(p) << (p ? "" : p.error().message());
  return p ? p.value() : nullptr;
}

codegen::LoweredProgram lowered(const runtime::Program& p) {
  auto l = codegen::lower(p);
  EXPECT_TRUE(l) << (l ? "" : l.error().message());
  return l ? std::move(l.value()) : codegen::LoweredProgram{};
}

std::string error_of(const runtime::Program& p) {
  auto l = codegen::lower(p);
  return l ? std::string() : l.error().message();
}

TEST(Lowering, BarrierIsASplitPointAndKeepsLiveRegisters) {
  auto p = program(R"(
.visible .entry k(.param .u64 out) {
  .reg .b32 %r<4>;
  .reg .b64 %rd<3>;
  .shared .align 4 .b8 buf[512];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, buf;
  add.u32 %r3, %r3, %r2;
  st.shared.u32 [%r3], %r1;
  bar.sync 0;
  ld.shared.u32 %r1, [%r3];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r2, 1;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r1;
  ret;
})");
  ASSERT_TRUE(p);
  auto l = lowered(*p);
  ASSERT_EQ(l.kernels.size(), 1u);
  ASSERT_EQ(l.kernels[0].splits.size(), 1u);
  EXPECT_EQ(l.kernels[0].splits[0], codegen::SplitKind::Barrier);
  // %r2 and %r3 are read after the barrier; %r1 is written again first.
  EXPECT_EQ(l.kernels[0].spill_slots, 2u);
  EXPECT_EQ(p->kernels[0].static_shared_bytes, 512u);
}

TEST(Lowering, NothingLiveAcrossABarrierNeedsNoSpill) {
  auto p = program(R"(
.visible .entry k() {
  .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  bar.sync 0;
  mov.u32 %r1, 7;
  ret;
})");
  ASSERT_TRUE(p);
  auto l = lowered(*p);
  EXPECT_EQ(l.kernels[0].spill_slots, 0u);
}

TEST(Lowering, WarpMatrixAndWaitSplitKinds) {
  auto p = program(R"(
.visible .entry k(.param .u64 out) {
  .reg .pred %p<2>;
  .reg .b32 %r<20>;
  .reg .f32 %f<10>;
  .reg .b64 %rd<3>;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %laneid;
  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
  vote.sync.ballot.b32 %r3, %p1, -1;
  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r4, %r5, %r6, %r7}, {%r8, %r9}, {%f5, %f6, %f7, %f8};
  mbarrier.init.shared.b64 [bar], 32;
  mbarrier.arrive.shared.b64 %rd1, [bar];
  mbarrier.try_wait.shared.b64 %p1, [bar], %rd1;
  ret;
})");
  ASSERT_TRUE(p);
  auto l = lowered(*p);
  using K = codegen::SplitKind;
  std::vector<K> want = {K::Warp, K::Warp, K::WarpMatrix, K::Yield};
  EXPECT_EQ(l.kernels[0].splits, want);
}

TEST(Lowering, SharedLayoutCoversModuleVariablesAndDynamicSharedMemory) {
  auto p = program(R"(
.shared .align 4 .b8 unused[1024];
.shared .align 8 .b8 table[24];
.extern .shared .align 16 .b8 dynamic[];
.visible .entry k() {
  .reg .b32 %r<3>;
  .shared .align 2 .b8 own[6];
  mov.u32 %r1, table;
  mov.u32 %r2, dynamic;
  st.shared.u16 [own], 1;
  ret;
})");
  ASSERT_TRUE(p);
  const auto& k = p->kernels[0];
  ASSERT_NE(k.shared_var("table"), nullptr);
  EXPECT_EQ(k.shared_var("unused"), nullptr); // not reached: not in this kernel's window
  EXPECT_EQ(k.shared_var("table")->offset, 0u);
  EXPECT_EQ(k.shared_var("own")->offset, 24u);
  EXPECT_EQ(k.static_shared_bytes, 30u);
  EXPECT_EQ(k.dynamic_shared_offset, 32u);
  EXPECT_EQ(k.shared_var("dynamic")->offset, 32u);
}

TEST(Lowering, RecursionGetsAStack) {
  auto p = program(R"(
.func (.param .b32 r) f(.param .b32 n) {
  .local .align 4 .b8 frame[64];
  .reg .b32 %r<3>;
  .reg .pred %p<2>;
  ld.param.b32 %r1, [n];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $done;
  sub.u32 %r2, %r1, 1;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], %r2;
    call.uni (b), f, (a);
    ld.param.b32 %r2, [b];
  }
  add.u32 %r1, %r1, %r2;
$done:
  st.param.b32 [r], %r1;
  ret;
}
.visible .entry k() {
  .reg .b32 %r<2>;
  {
    .param .b32 a;
    .param .b32 b;
    st.param.b32 [a], 5;
    call.uni (b), f, (a);
    ld.param.b32 %r1, [b];
  }
  ret;
})");
  ASSERT_TRUE(p);
  auto l = lowered(*p);
  EXPECT_GE(l.kernels[0].local_bytes, 64u + 32 * 1024);
}

TEST(Lowering, FunctionsThatWaitAreInlined) {
  // -G builds inline nothing: a barrier in a called function is lowered in the kernel.
  auto p = program(R"(
.func (.reg .b32 r) g(.reg .b32 a) {
  bar.sync 0;
  add.u32 r, a, 1;
  ret;
}
.visible .entry k() {
  .reg .b32 %r<3>;
  mov.u32 %r1, %tid.x;
  call.uni (%r2), g, (%r1);
  ret;
})");
  ASSERT_TRUE(p);
  auto l = lowered(*p);
  std::vector<codegen::SplitKind> want = {codegen::SplitKind::Barrier};
  EXPECT_EQ(l.kernels[0].splits, want);
}

TEST(Lowering, CallsOnlyForKernelsThatCallAFunction) {
  // The executor clears next[] per block only for kernels that call (LoweredKernel::calls):
  // a callee says there that it ended the thread. Barriers alone do not need it, a call
  // between barriers or through a pointer does.
  auto p = program(R"(
.func g() {
  ret;
}
.visible .entry k_barrier() {
  bar.sync 0;
  ret;
}
.visible .entry k_barrier_call() {
  bar.sync 0;
  call.uni g, ();
  bar.sync 0;
  ret;
}
.visible .entry k_pointer() {
  .reg .b64 %rd<2>;
  mov.u64 %rd1, g;
  prototype: .callprototype _ ();
  call.uni %rd1, (), prototype;
  ret;
})");
  ASSERT_TRUE(p);
  auto l = lowered(*p);
  ASSERT_EQ(l.kernels.size(), 3u);
  EXPECT_FALSE(l.kernels[0].calls);
  EXPECT_TRUE(l.kernels[1].calls);
  EXPECT_TRUE(l.kernels[2].calls);
}

TEST(Lowering, PlainExitOnlyWhereNothingButTheEndStopsAThread) {
  // k_plain ends its threads only by running to the end or by exit: it does not say where
  // they stopped. A trap, a barrier or a call (whose callee may end the thread) keeps the
  // record.
  auto p = program(R"(
.func g() {
  ret;
}
.visible .entry k_plain(.param .u64 out) {
  .reg .pred %p<2>;
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 3;
  @%p1 exit;
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry k_trap() {
  .reg .pred %p<2>;
  .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 3;
  @%p1 trap;
  ret;
}
.visible .entry k_barrier() {
  bar.sync 0;
  ret;
}
.visible .entry k_call() {
  call.uni g, ();
  ret;
})");
  ASSERT_TRUE(p);
  auto l = lowered(*p);
  ASSERT_EQ(l.kernels.size(), 4u);
  EXPECT_TRUE(l.kernels[0].plain_exit);
  EXPECT_FALSE(l.kernels[1].plain_exit);
  EXPECT_FALSE(l.kernels[2].plain_exit);
  EXPECT_FALSE(l.kernels[3].plain_exit);
  EXPECT_FALSE(l.kernels[0].calls);
  EXPECT_TRUE(l.kernels[3].calls);
  // No store of kThreadExited (-1) is left in k_plain; k_trap still stores its stops.
  auto stores_stop = [&](size_t k, const char* value) {
    std::string text;
    llvm::raw_string_ostream os(text);
    l.module->getFunction(l.kernels[k].symbol)->print(os);
    return text.find(std::string("store i32 ") + value) != std::string::npos;
  };
  EXPECT_FALSE(stores_stop(0, "-1,"));
  EXPECT_TRUE(stores_stop(1, "-1,"));
  EXPECT_TRUE(stores_stop(1, "-2,"));
}

TEST(Lowering, ChainSaysWhenEveryThreadOfTheCallEnded) {
  // After the barrier every thread runs to its end: the chain tells the executor so
  // (BlockState::ended, block chain_ended) instead of leaving it to read next[]. Where the
  // last loop may also trap, it cannot.
  const char* kernels[] = {R"(
.visible .entry k(.param .u64 out) {
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, %tid.x;
  bar.sync 0;
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r1;
  ret;
})", R"(
.visible .entry k(.param .u64 out) {
  .reg .pred %p<2>;
  .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  bar.sync 0;
  setp.eq.u32 %p1, %r1, 3;
  @%p1 trap;
  ret;
})"};
  for (int traps = 0; traps < 2; ++traps) {
    auto p = program(kernels[traps]);
    ASSERT_TRUE(p);
    auto l = lowered(*p);
    llvm::Function* f = l.module->getFunction(l.kernels[0].symbol);
    bool tells = false;
    for (llvm::BasicBlock& bb : *f)
      if (auto* sw = llvm::dyn_cast<llvm::SwitchInst>(bb.getTerminator()); sw && bb.getName() == "chain_known")
        for (auto c : sw->cases())
          if (c.getCaseValue()->isMinusOne()) {
            // chain_known_ended: a call of the whole block goes to chain_ended at once (a
            // call for some warps writes next[] for its caller first).
            llvm::BasicBlock* to = c.getCaseSuccessor();
            tells |= to->getName() == "chain_ended" ||
                     (to->getName() == "chain_known_ended" &&
                      llvm::any_of(llvm::successors(to), [](llvm::BasicBlock* s) { return s->getName() == "chain_ended"; }));
          }
    EXPECT_EQ(tells, traps == 0) << (traps ? "a loop that may trap" : "a loop where every thread ends");
  }
}

TEST(Lowering, RecursiveFunctionThatWaitsIsRefusedByName) {
  auto p = program(R"(
.func g() {
  bar.sync 0;
  call.uni g, ();
  ret;
}
.visible .entry k() {
  call.uni g, ();
  ret;
})");
  ASSERT_TRUE(p);
  std::string e = error_of(*p);
  EXPECT_NE(e.find("kernel 'k'"), std::string::npos) << e;
  EXPECT_NE(e.find("'g'"), std::string::npos) << e;
  EXPECT_NE(e.find("recursive"), std::string::npos) << e;
}

TEST(Lowering, UntranslatableInstructionNamesKernelAndLine) {
  auto p = program(R"(
.visible .entry k(.param .u64 t) {
  .reg .b64 %rd<2>;
  .reg .f32 %f<5>;
  ld.param.u64 %rd1, [t];
  tex.cube.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f1, %f2, %f3, %f4}];
  ret;
})");
  ASSERT_TRUE(p);
  std::string e = error_of(*p);
  EXPECT_NE(e.find("kernel 'k'"), std::string::npos) << e;
  EXPECT_NE(e.find("line 9"), std::string::npos) << e;
}

// prefetch.global.L2 and prefetchu.L1 are the program's own hints: prefetches for reading
// into the L2 (locality 2) and the L1 (locality 3) cache; prefetch.tensormap does nothing.
TEST(Lowering, PrefetchesBecomeReadPrefetches) {
  auto p = program(R"(
.visible .entry k(.param .u64 in) {
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd2, %rd1;
  prefetch.global.L2 [%rd2];
  prefetchu.L1 [%rd1+256];
  prefetch.tensormap [%rd1];
  ret;
})");
  ASSERT_TRUE(p);
  auto l = lowered(*p);
  std::string text;
  llvm::raw_string_ostream os(text);
  l.module->getFunction(l.kernels[0].symbol)->print(os);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  // Calls the vectoriser can widen; llvm.prefetch after it (prefetch_calls.h).
  EXPECT_EQ(count("call void @mimic.prefetch.l2(i64"), 1u) << text;
  EXPECT_EQ(count("call void @mimic.prefetch.l1(i64"), 1u) << text;
}

// A kernel specialised for one block shape reads no block dimension from the block state
// (the thread loops' row set-up uses the shape's constants), and after FoldBlockShape no
// thread count either.
TEST(Lowering, BlockShapeSpecialisationFoldsTheBlockDimensions) {
  auto p = program(R"(
.visible .entry k(.param .u64 out) {
  .reg .b32 %r<5>;
  .reg .b64 %rd<3>;
  .shared .align 4 .b8 buf[4096];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  shl.b32 %r3, %r1, 2;
  mov.u32 %r4, buf;
  add.u32 %r4, %r4, %r3;
  st.shared.u32 [%r4], %r2;
  bar.sync 0;
  ld.shared.u32 %r2, [%r4];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r3, 1;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r2;
  ret;
})");
  ASSERT_TRUE(p);
  auto l = lowered(*p);
  llvm::Function* f = l.module->getFunction(l.kernels[0].symbol);
  ASSERT_TRUE(f);
  auto reads = [&](size_t from, size_t to) {
    size_t n = 0;
    const llvm::DataLayout& layout = l.module->getDataLayout();
    for (llvm::Instruction& i : llvm::instructions(*f))
      if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&i)) {
        int64_t offset = 0;
        if (llvm::GetPointerBaseWithConstantOffset(load->getPointerOperand(), offset, layout) == f->getArg(1) &&
            offset >= int64_t(from) && offset < int64_t(to))
          ++n;
      }
    return n;
  };
  const size_t dims = offsetof(codegen::BlockState, block_dim), count = offsetof(codegen::BlockState, nthreads);
  EXPECT_GT(reads(dims, dims + 12), 0u);
  EXPECT_GT(reads(count, count + 4), 0u); // the chain's thread ranges
  codegen::specialise_block_shape(*l.module, l.kernels[0].symbol, {32, 8, 1});
  EXPECT_EQ(reads(dims, dims + 12), 0u);
  EXPECT_GT(reads(count, count + 4), 0u); // until the thread-loop passes have run
  llvm::FunctionAnalysisManager unused;
  codegen::FoldBlockShape().run(*f, unused);
  EXPECT_EQ(reads(count, count + 4), 0u);
  EXPECT_EQ(codegen::shaped_symbol("k", {32, 8, 1}), "k.block.32x8x1");
}

} // namespace
} // namespace mimic
