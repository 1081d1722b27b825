// The SIMT form for AMD GPUs (Target::Amdgpu, wave32): what differs from the CPU's thread
// loop. A kernel is one `amdgpu_kernel` function run by every work-item; the instruction
// families (lower_int/float/half/cvt, memory, control) are shared, and the hooks here give
// them special registers, state-space pointers, barriers, warp operations and fences.
//
// Address spaces: generic = flat (0), global = 1, shared = LDS (3, 32-bit addresses),
// kernel parameters = constant (4, the kernel argument segment). A .local address is the
// generic address of the thread's frame (an alloca, private memory once the backend moves
// allocas to address space 5), so cvta.local is the identity.
#include "codegen/lower_impl.h"
#include "codegen/matrix_layout.h"

#include <llvm/IR/IntrinsicsAMDGPU.h>

#include <cstdint>
#include <map>
#include <tuple>

namespace mimic::codegen {

using namespace llvm;
using ptx::Modifier;
using ptx::Opcode;

namespace {

constexpr unsigned kGlobalSpace = 1;
constexpr unsigned kLdsSpace = 3;
constexpr unsigned kConstantSpace = 4;

// Code object v5 implicit kernel arguments (AMDGPUUsage, "Code Object V5 Metadata").
constexpr uint64_t kImplicitBlockCountX = 0;  // 3 x u32
constexpr uint64_t kImplicitGroupSizeX = 12;  // 3 x u16
constexpr uint64_t kImplicitDynamicLds = 120; // u32

Value* intrinsic(IRBuilder<>& b, Intrinsic::ID id, ArrayRef<Value*> args = {},
                 ArrayRef<Type*> types = {}) {
  return b.CreateIntrinsic(id, types, args);
}

bool is_shared_space(Modifier m) {
  return m == Modifier::Shared || m == Modifier::SharedCta || m == Modifier::SharedCluster;
}

} // namespace

// ---------------------------------------------------------------- module objects

GlobalVariable* ModuleLowering::gpu_shared_window(const runtime::KernelInfo& kernel) {
  auto& w = gpu_windows_[kernel.name];
  if (!w) {
    auto* type =
        ArrayType::get(Type::getInt8Ty(*context_), std::max<size_t>(kernel.static_shared_bytes, 1));
    w = new GlobalVariable(*module_, type, false, GlobalValue::InternalLinkage,
                           PoisonValue::get(type), "mimic_shared." + kernel.name, nullptr,
                           GlobalValue::NotThreadLocal, kLdsSpace);
    w->setAlignment(Align(16));
  }
  return w;
}

// One zero-sized external LDS variable: the AMDGPU backend places it after each kernel's
// static LDS, where the launch's dynamic shared memory is.
GlobalVariable* ModuleLowering::gpu_dynamic_shared() {
  if (!gpu_dynamic_shared_) {
    auto* type = ArrayType::get(Type::getInt8Ty(*context_), 0);
    gpu_dynamic_shared_ =
        new GlobalVariable(*module_, type, false, GlobalValue::ExternalLinkage, nullptr,
                           "mimic_dynamic_shared", nullptr, GlobalValue::NotThreadLocal, kLdsSpace);
    gpu_dynamic_shared_->setAlignment(Align(16));
  }
  return gpu_dynamic_shared_;
}

GlobalVariable* ModuleLowering::gpu_reserved_shared() {
  if (!gpu_reserved_shared_) {
    auto* type = ArrayType::get(Type::getInt8Ty(*context_), kReservedSharedBytes);
    gpu_reserved_shared_ = new GlobalVariable(*module_, type, false, GlobalValue::InternalLinkage,
                                              PoisonValue::get(type), "mimic_reserved_shared",
                                              nullptr, GlobalValue::NotThreadLocal, kLdsSpace);
    gpu_reserved_shared_->setAlignment(Align(16));
  }
  return gpu_reserved_shared_;
}

// The grid's workspace, where cooperative groups' grid.sync counts arrivals: device memory
// the runtime binds (backends/amdgpu/code_object.h, kGridWorkspaceSymbol) and zeroes.
GlobalVariable* ModuleLowering::gpu_grid_workspace() {
  if (GlobalVariable* g = module_->getNamedGlobal("mimic_grid_workspace")) return g;
  auto* g = new GlobalVariable(*module_, ArrayType::get(Type::getInt8Ty(*context_), 0), false,
                               GlobalValue::ExternalLinkage, nullptr, "mimic_grid_workspace",
                               nullptr, GlobalValue::NotThreadLocal, kGlobalSpace);
  g->setAlignment(Align(16));
  return g;
}

// Named barriers for part of a block (bar.arrive, bar.sync with a count), which RDNA does
// not have: a word per barrier id in LDS, the generation in its high half and the threads
// arrived in its low half, zeroed at the start of kernels that use them.
GlobalVariable* ModuleLowering::gpu_named_barriers() {
  if (GlobalVariable* g = module_->getNamedGlobal("mimic_named_barriers")) return g;
  auto* type = ArrayType::get(Type::getInt32Ty(*context_), 16);
  auto* g = new GlobalVariable(*module_, type, false, GlobalValue::InternalLinkage,
                               PoisonValue::get(type), "mimic_named_barriers", nullptr,
                               GlobalValue::NotThreadLocal, kLdsSpace);
  g->setAlignment(Align(16));
  return g;
}

GlobalVariable* ModuleLowering::gpu_reduction_word() {
  if (!gpu_reduction_word_) {
    Type* i32 = Type::getInt32Ty(*context_);
    gpu_reduction_word_ = new GlobalVariable(*module_, i32, false, GlobalValue::InternalLinkage,
                                             PoisonValue::get(i32), "mimic_barrier_reduction",
                                             nullptr, GlobalValue::NotThreadLocal, kLdsSpace);
    gpu_reduction_word_->setAlignment(Align(4));
  }
  return gpu_reduction_word_;
}

Function* ModuleLowering::gpu_log_function(const char* name, Type* result,
                                           std::initializer_list<Type*> params) {
  if (Function* f = module_->getFunction(name)) return f;
  Function* f = Function::Create(FunctionType::get(result, std::vector<Type*>(params), false),
                                 GlobalValue::ExternalLinkage, name, module_.get());
  f->setDoesNotThrow();
  return f;
}

// mbarrier objects on a GPU: the helpers of block_state.h defined in the module over the
// same 64-bit word as the CPU's (pending arrivals in bits 0-19, expected arrivals 20-39,
// pending transaction bytes 40-62 signed, the phase in bit 63), updated by compare and swap.
namespace {

struct MbarrierWord {
  Value *pending, *expected, *tx, *phase; // i32 each
};

MbarrierWord unpack(IRBuilder<>& b, Value* w) {
  Type* i32 = b.getInt32Ty();
  auto field = [&](unsigned shift, uint64_t mask) {
    return b.CreateTrunc(b.CreateAnd(b.CreateLShr(w, shift), mask), i32);
  };
  Value* tx = b.CreateAShr(b.CreateShl(field(40, 0x7fffff), 9), 9);
  return {field(0, 0xfffff), field(20, 0xfffff), tx, field(63, 1)};
}

Value* pack(IRBuilder<>& b, const MbarrierWord& m) {
  Type* i64 = b.getInt64Ty();
  auto field = [&](Value* v, uint64_t mask, unsigned shift) {
    return b.CreateShl(b.CreateAnd(b.CreateZExt(v, i64), mask), shift);
  };
  return b.CreateOr(b.CreateOr(field(m.pending, 0xfffff, 0), field(m.expected, 0xfffff, 20)),
                    b.CreateOr(field(m.tx, 0x7fffff, 40), field(m.phase, 1, 63)));
}

// The phase completes when every arrival and every transaction byte came: it flips, and
// the next phase expects the arrivals again.
MbarrierWord complete_if_done(IRBuilder<>& b, MbarrierWord m) {
  Value* done =
      b.CreateAnd(b.CreateICmpEQ(m.pending, b.getInt32(0)), b.CreateICmpSLE(m.tx, b.getInt32(0)));
  return {b.CreateSelect(done, m.expected, m.pending), m.expected,
          b.CreateSelect(done, b.getInt32(0), m.tx),
          b.CreateSelect(done, b.CreateXor(m.phase, 1), m.phase)};
}

// fn(ptr word, args...): a compare-and-swap loop applying `change`; returns the old word.
Value* update_word(IRBuilder<>& b, Function* fn, Value* word,
                   const std::function<MbarrierWord(MbarrierWord)>& change) {
  LLVMContext& c = b.getContext();
  SyncScope::ID agent = c.getOrInsertSyncScopeID("agent");
  LoadInst* first = b.CreateAlignedLoad(b.getInt64Ty(), word, Align(8));
  first->setAtomic(AtomicOrdering::Acquire, agent);
  BasicBlock* entry = b.GetInsertBlock();
  BasicBlock* loop = BasicBlock::Create(c, "cas", fn);
  BasicBlock* done = BasicBlock::Create(c, "cas_done", fn);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  PHINode* old = b.CreatePHI(b.getInt64Ty(), 2);
  old->addIncoming(first, entry);
  Value* fresh = pack(b, change(unpack(b, old)));
  Value* pair = b.CreateAtomicCmpXchg(word, old, fresh, Align(8), AtomicOrdering::AcquireRelease,
                                      AtomicOrdering::Acquire, agent);
  Value* seen = b.CreateExtractValue(pair, 0);
  old->addIncoming(seen, loop);
  b.CreateCondBr(b.CreateExtractValue(pair, 1), done, loop);
  b.SetInsertPoint(done);
  return old;
}

} // namespace

Function* ModuleLowering::gpu_helper(std::string_view name) {
  if (!name.starts_with("mimic_mbarrier_")) return nullptr;
  if (Function* f = module_->getFunction(name)) return f;
  LLVMContext& c = *context_;
  Type* i32 = Type::getInt32Ty(c);
  Type* i64 = Type::getInt64Ty(c);
  Type* ptr = PointerType::get(c, 0);
  Type* void_ty = Type::getVoidTy(c);
  FunctionType* type = name == "mimic_mbarrier_init" ? FunctionType::get(void_ty, {ptr, i32}, false)
                       : name == "mimic_mbarrier_arrive"
                           ? FunctionType::get(i64, {ptr, i32, i32}, false)
                       : name == "mimic_mbarrier_tx" ? FunctionType::get(void_ty, {ptr, i32}, false)
                       : name == "mimic_mbarrier_phase" ? FunctionType::get(i32, {ptr}, false)
                                                        : nullptr;
  if (!type) return nullptr;
  Function* f = Function::Create(type, GlobalValue::InternalLinkage, name, module_.get());
  f->addFnAttr(Attribute::AlwaysInline);
  IRBuilder<> b(BasicBlock::Create(c, "entry", f));
  Value* word = f->getArg(0);
  SyncScope::ID agent = c.getOrInsertSyncScopeID("agent");
  if (name == "mimic_mbarrier_init") {
    Value* count = f->getArg(1);
    b.CreateAlignedStore(pack(b, {count, count, b.getInt32(0), b.getInt32(0)}), word, Align(8))
        ->setAtomic(AtomicOrdering::Release, agent);
    b.CreateRetVoid();
  } else if (name == "mimic_mbarrier_arrive") {
    Value* count = f->getArg(1);
    Value* drop = b.CreateICmpNE(f->getArg(2), b.getInt32(0));
    auto less = [&](Value* v) {
      return b.CreateSelect(b.CreateICmpUGT(v, count), b.CreateSub(v, count), b.getInt32(0));
    };
    Value* old = update_word(b, f, word, [&](MbarrierWord m) {
      m.pending = less(m.pending);
      m.expected = b.CreateSelect(drop, less(m.expected), m.expected);
      return complete_if_done(b, m);
    });
    b.CreateRet(b.CreateLShr(old, 63)); // the token: the phase this arrival belongs to
  } else if (name == "mimic_mbarrier_tx") {
    Value* delta = f->getArg(1);
    update_word(b, f, word, [&](MbarrierWord m) {
      m.tx = b.CreateAdd(m.tx, delta);
      MbarrierWord done = complete_if_done(b, m);
      Value* completes = b.CreateICmpSLT(delta, b.getInt32(0)); // only completing bytes end a phase
      return MbarrierWord{b.CreateSelect(completes, done.pending, m.pending), m.expected,
                          b.CreateSelect(completes, done.tx, m.tx),
                          b.CreateSelect(completes, done.phase, m.phase)};
    });
    b.CreateRetVoid();
  } else {
    LoadInst* w = b.CreateAlignedLoad(i64, word, Align(8));
    w->setAtomic(AtomicOrdering::Acquire, agent);
    b.CreateRet(b.CreateTrunc(b.CreateLShr(w, 63), i32));
  }
  return f;
}

bool ModuleLowering::gpu_links_helper(std::string_view name) {
  return name == "mimic_tex_fetch" || name == "mimic_surface_access" ||
         name == "mimic_texture_query";
}

void ModuleLowering::throw_missing_gpu_helper(std::string_view name) const {
  std::string feature = name.starts_with("mimic_wmma")       ? "wmma"
                        : name.starts_with("mimic_mbarrier") ? "mbarrier objects"
                        : name == "mimic_vprintf"            ? "printf"
                        : name == "mimic_assert_fail"        ? "assert"
                        : name.starts_with("mimic_device_")  ? "the device heap"
                                                             : std::string(name);
  std::string where, text;
  if (current) {
    ptx::print_instruction(text, *current);
    where = "line " + std::to_string(current->loc.line) + ": ";
    text = " (" + text + ")";
  }
  throw LoweringError{where + "not supported on amdgpu yet: " + feature + text};
}

// ---------------------------------------------------------------- kernels

void FunctionLowering::gpu_unsupported(const std::string& what) {
  if (const ptx::Instruction* ins = lowering_.current)
    unsupported(*ins, "not supported on amdgpu yet: " + what);
  throw LoweringError{"not supported on amdgpu yet: " + what};
}

// `void @name(ptr addrspace(4) byref([size x i8]) align A, ...)`: each parameter is an
// argument of its own, so the argument segment has the packed layout of the launch
// (AMDGPU places each at the next offset its alignment allows, as CUDA packs them).
Function* FunctionLowering::run_gpu() {
  Type* i8 = Type::getInt8Ty(ctx());
  std::vector<Type*> args(info_.params.size(), PointerType::get(ctx(), kConstantSpace));
  FunctionType* type = FunctionType::get(Type::getVoidTy(ctx()), args, false);
  fn_ = Function::Create(type, GlobalValue::ExternalLinkage, info_.name, lowering_.module());
  if (fn_->getName() != info_.name)
    throw LoweringError{"its name is taken by another symbol of the module"};
  fn_->setCallingConv(CallingConv::AMDGPU_KERNEL);
  for (size_t i = 0; i < info_.params.size(); ++i) {
    const runtime::ParamSlot& slot = info_.params[i];
    unsigned n = unsigned(i);
    kernel_param_index_[f_.params[i].name] = i;
    fn_->addParamAttr(
        n, Attribute::getWithByRefType(ctx(), ArrayType::get(i8, std::max<size_t>(slot.size, 1))));
    fn_->addParamAttr(n,
                      Attribute::getWithAlignment(ctx(), Align(std::max<size_t>(slot.align, 1))));
    fn_->addParamAttr(n, Attribute::NoAlias);
    fn_->addParamAttr(n, Attribute::ReadOnly);
    fn_->getArg(n)->setName(std::string(f_.params[i].name));
  }
  unsigned max_threads =
      info_.max_threads_per_block > 0 ? unsigned(info_.max_threads_per_block) : 1024;
  fn_->addFnAttr("amdgpu-flat-work-group-size", "1," + std::to_string(max_threads));
  // CUDA grids are whole blocks.
  fn_->addFnAttr("uniform-work-group-size", "true");
  lowering_.facts[fn_].frame = 0;
  BasicBlock* entry = BasicBlock::Create(ctx(), "entry", fn_);
  body_ = BasicBlock::Create(ctx(), "body", fn_);
  b_.SetInsertPoint(entry);
  if (local_bytes_) gpu_frame();
  b_.CreateBr(body_);
  b_.SetInsertPoint(body_);
  collect_labels(*f_.body);
  lower_block(*f_.body);
  for (BasicBlock& bb : *fn_)
    if (!bb.getTerminator()) {
      b_.SetInsertPoint(&bb);
      b_.CreateRetVoid();
    }
  if (lowering_.reaches(fn_, &ModuleLowering::FunctionFacts::named_barriers))
    gpu_init_named_barriers();
  return fn_;
}

Value* FunctionLowering::gpu_frame() {
  if (!frame_) {
    IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    size_t bytes = std::max<size_t>((local_bytes_ + 15) / 16 * 16, 16);
    frame_ = entry.CreateAlloca(ArrayType::get(entry.getInt8Ty(), bytes), nullptr, "local_frame");
    frame_->setAlignment(Align(16));
  }
  return frame_;
}

// exit ends the work-item (a return from the kernel); trap, a failed assert or an
// out-of-range jump end the wave with s_trap, which fails the launch.
void FunctionLowering::gpu_stop(uint32_t code) {
  if (code == kThreadExited) {
    if (!is_kernel_)
      gpu_unsupported("exit inside a function (.func '" + std::string(f_.name) + "')");
    b_.CreateRetVoid();
    return;
  }
  intrinsic(b_, Intrinsic::trap);
  b_.CreateUnreachable();
}

// A thread waiting for others (an mbarrier phase, nanosleep) sleeps a little and looks again.
void FunctionLowering::gpu_yield() {
  intrinsic(b_, Intrinsic::amdgcn_s_sleep, {b_.getInt32(1)});
}

// ---------------------------------------------------------------- special registers

Value* FunctionLowering::gpu_implicit_arg(uint64_t offset, Type* type) {
  Value* base = intrinsic(b_, Intrinsic::amdgcn_implicitarg_ptr);
  LoadInst* v = b_.CreateLoad(type, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, offset));
  v->setAlignment(Align(type->getPrimitiveSizeInBits() / 8));
  v->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(ctx(), {}));
  return v;
}

Value* FunctionLowering::gpu_lane() {
  return intrinsic(b_, Intrinsic::amdgcn_mbcnt_lo, {b_.getInt32(~0u), b_.getInt32(0)});
}

// Waves are made of consecutive linear work-item ids (x fastest), as CUDA's warps are.
Value* FunctionLowering::gpu_linear_thread() {
  Value* x = gpu_sreg(SpecialRegister::TidX);
  Value* y = gpu_sreg(SpecialRegister::TidY);
  Value* z = gpu_sreg(SpecialRegister::TidZ);
  Value* nx = gpu_sreg(SpecialRegister::NtidX);
  Value* ny = gpu_sreg(SpecialRegister::NtidY);
  return b_.CreateAdd(x, b_.CreateMul(nx, b_.CreateAdd(y, b_.CreateMul(ny, z))));
}

Value* FunctionLowering::gpu_sreg(SpecialRegister r) {
  using R = SpecialRegister;
  Type* i32 = b_.getInt32Ty();
  auto lane_mask = [&](bool inclusive, bool below) {
    // lt: (1 << lane) - 1; le: (2 << lane) - 1; ge/gt: their complements.
    Value* shifted = b_.CreateShl(b_.getInt32(inclusive == below ? 2 : 1), gpu_lane());
    Value* mask = b_.CreateSub(shifted, b_.getInt32(1));
    return below ? mask : b_.CreateNot(mask);
  };
  // The block's reserved shared memory (block_state.h): an LDS variable of its own.
  auto reserved = [&](uint64_t offset) {
    Value* p =
        b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), lowering_.gpu_reserved_shared(), offset);
    return b_.CreatePtrToInt(p, i32);
  };
  switch (r) {
  case R::TidX:
    return intrinsic(b_, Intrinsic::amdgcn_workitem_id_x);
  case R::TidY:
    return intrinsic(b_, Intrinsic::amdgcn_workitem_id_y);
  case R::TidZ:
    return intrinsic(b_, Intrinsic::amdgcn_workitem_id_z);
  case R::CtaidX:
    return intrinsic(b_, Intrinsic::amdgcn_workgroup_id_x);
  case R::CtaidY:
    return intrinsic(b_, Intrinsic::amdgcn_workgroup_id_y);
  case R::CtaidZ:
    return intrinsic(b_, Intrinsic::amdgcn_workgroup_id_z);
  case R::NtidX:
  case R::NtidY:
  case R::NtidZ:
    return b_.CreateZExt(
        gpu_implicit_arg(kImplicitGroupSizeX + 2 * (int(r) - int(R::NtidX)), b_.getInt16Ty()), i32);
  case R::NctaidX:
  case R::NctaidY:
  case R::NctaidZ:
    return gpu_implicit_arg(kImplicitBlockCountX + 4 * (int(r) - int(R::NctaidX)), i32);
  case R::LaneId:
    return gpu_lane();
  case R::WarpId:
    return b_.CreateLShr(gpu_linear_thread(), 5);
  case R::NWarpId: {
    Value* n =
        b_.CreateMul(gpu_sreg(R::NtidX), b_.CreateMul(gpu_sreg(R::NtidY), gpu_sreg(R::NtidZ)));
    return b_.CreateLShr(b_.CreateAdd(n, b_.getInt32(31)), 5);
  }
  case R::SmId: // which compute unit is not exposed the same way on every RDNA generation
    return b_.getInt32(0);
  case R::NSmId:
    return b_.getInt32(1);
  case R::LanemaskEq:
    return b_.CreateShl(b_.getInt32(1), gpu_lane());
  case R::LanemaskLt:
    return lane_mask(false, true);
  case R::LanemaskLe:
    return lane_mask(true, true);
  case R::LanemaskGe:
    return lane_mask(true, false);
  case R::LanemaskGt:
    return lane_mask(false, false);
  case R::DynamicSmemSize:
    return gpu_implicit_arg(kImplicitDynamicLds, i32);
  case R::TotalSmemSize:
    return b_.CreateAdd(b_.getInt32(uint32_t(info_.dynamic_shared_offset)),
                        gpu_implicit_arg(kImplicitDynamicLds, i32));
  case R::ReservedSmemBegin:
  case R::ReservedSmem0:
    return reserved(0);
  case R::ReservedSmem1: // cooperative groups keeps its scratch here
    return reserved(256);
  case R::ReservedSmemEnd:
  case R::ReservedSmemCap:
    return reserved(kReservedSharedBytes);
  case R::EnvReg1: // %envreg1:%envreg2, the grid's workspace (grid.sync), as on the CPU
  case R::EnvReg2: {
    Value* address = b_.CreatePtrToInt(lowering_.gpu_grid_workspace(), b_.getInt64Ty());
    return b_.CreateTrunc(r == R::EnvReg1 ? b_.CreateLShr(address, 32) : address, i32);
  }
  case R::EnvReg0:
  case R::EnvReg3:
    return b_.getInt32(0);
  default:
    gpu_unsupported("this special register");
  }
}

// %clock64: the shader cycle counter; %globaltimer: the constant 100 MHz real-time counter
// in nanoseconds.
Value* FunctionLowering::gpu_clock(bool wall_clock) {
  if (!wall_clock) return intrinsic(b_, Intrinsic::readcyclecounter);
  return b_.CreateMul(intrinsic(b_, Intrinsic::readsteadycounter), b_.getInt64(10));
}

// ---------------------------------------------------------------- memory

Value* FunctionLowering::gpu_shared_pointer(const runtime::KernelInfo::SharedVar& v) {
  if (v.offset == info_.dynamic_shared_offset && v.offset >= info_.static_shared_bytes)
    return lowering_.gpu_dynamic_shared();
  return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), lowering_.gpu_shared_window(info_),
                                       v.offset);
}

// The pointer a state space's address (a register's value, or a constant) stands for.
Value* FunctionLowering::gpu_address(Modifier space, Value* address64) {
  if (is_shared_space(space))
    return b_.CreateIntToPtr(b_.CreateTrunc(address64, b_.getInt32Ty()),
                             PointerType::get(ctx(), kLdsSpace));
  if (space == Modifier::Global)
    return b_.CreateIntToPtr(address64, PointerType::get(ctx(), kGlobalSpace));
  return b_.CreateIntToPtr(address64, b_.getPtrTy()); // generic, .local, .const, .param
}

void FunctionLowering::gpu_cvta(const ptx::Instruction& ins) {
  Type* ty = type_of(instruction_type(ins));
  if (!ty || ins.num_operands != 2) unsupported(ins, "malformed cvta");
  Value* v = value(ins, ins.operands[1], b_.getInt64Ty(), false);
  bool shared =
      ins.has(Modifier::Shared) || ins.has(Modifier::SharedCta) || ins.has(Modifier::SharedCluster);
  if (ins.has(Modifier::SharedCluster)) lowering_.facts[fn_].cluster = true;
  if (shared) {
    Type* lds = PointerType::get(ctx(), kLdsSpace);
    if (ins.has(Modifier::To)) {
      Value* p = b_.CreateAddrSpaceCast(b_.CreateIntToPtr(v, b_.getPtrTy()), lds);
      v = b_.CreateZExt(b_.CreatePtrToInt(p, b_.getInt32Ty()), b_.getInt64Ty());
    } else {
      Value* p = b_.CreateAddrSpaceCast(gpu_address(Modifier::Shared, v), b_.getPtrTy());
      v = b_.CreatePtrToInt(p, b_.getInt64Ty());
    }
  }
  // Global, .local, .const and .param addresses are generic ones already.
  store(ins, ins.operands[0], convert(v, ty, false), false);
}

// ---------------------------------------------------------------- synchronisation

SyncScope::ID FunctionLowering::gpu_scope(const ptx::Instruction& ins) {
  // A cluster is one block on this backend too (LoweredKernel::cluster).
  if (ins.has(Modifier::Cta) || ins.has(Modifier::Cluster))
    return ctx().getOrInsertSyncScopeID("workgroup");
  if (ins.has(Modifier::Sys)) return SyncScope::System;
  return ctx().getOrInsertSyncScopeID("agent"); // .gpu, .gl, and PTX's default
}

void FunctionLowering::gpu_fence(const ptx::Instruction& ins) {
  // fence.proxy.* and fence.mbarrier_init order the block's own views of memory.
  if (ins.has(Modifier::Proxy)) {
    b_.CreateFence(AtomicOrdering::AcquireRelease, ctx().getOrInsertSyncScopeID("workgroup"));
    return;
  }
  AtomicOrdering order = ins.has(Modifier::AcqRel) ? AtomicOrdering::AcquireRelease
                                                   : AtomicOrdering::SequentiallyConsistent;
  b_.CreateFence(order, gpu_scope(ins));
}

// What the block wrote before the barrier is visible to the block after it.
void FunctionLowering::gpu_block_barrier() {
  SyncScope::ID workgroup = ctx().getOrInsertSyncScopeID("workgroup");
  b_.CreateFence(AtomicOrdering::Release, workgroup);
  intrinsic(b_, Intrinsic::amdgcn_s_barrier);
  b_.CreateFence(AtomicOrdering::Acquire, workgroup);
}

void FunctionLowering::gpu_barrier(const ptx::Instruction& ins) {
  if (ins.has(Modifier::Cluster)) { // a cluster of one block: its barrier is the block's
    lowering_.facts[fn_].cluster = true;
    if (!ins.has(Modifier::Arrive)) gpu_block_barrier();
    return;
  }
  if (ins.has(Modifier::Warp)) { // bar.warp.sync: the lanes of a wave run together already
    b_.CreateFence(AtomicOrdering::AcquireRelease, ctx().getOrInsertSyncScopeID("wavefront"));
    intrinsic(b_, Intrinsic::amdgcn_wave_barrier);
    return;
  }
  if (ins.has(Modifier::Red)) {
    // bar.red.popc.u32 d, a{, b}, {!}c / bar.red.and|or.pred p, a{, b}, {!}c: every thread
    // adds its vote to one LDS word between barriers.
    if (ins.num_operands < 3)
      unsupported(ins, "bar.red needs a destination, a barrier and a predicate");
    if (ins.num_operands == 4) gpu_unsupported("bar.red with a thread count");
    Value* p = value(ins, ins.operands[ins.num_operands - 1], b_.getInt1Ty(), false);
    bool popc = ins.has(Modifier::Popc), all = ins.has(Modifier::And);
    Value* word = lowering_.gpu_reduction_word();
    gpu_block_barrier(); // every thread has read the word's last result
    BasicBlock* clear = BasicBlock::Create(ctx(), "bar_red_clear", fn_);
    BasicBlock* count = BasicBlock::Create(ctx(), "bar_red_count", fn_);
    b_.CreateCondBr(b_.CreateICmpEQ(gpu_linear_thread(), b_.getInt32(0)), clear, count);
    b_.SetInsertPoint(clear);
    b_.CreateStore(b_.getInt32(0), word);
    b_.CreateBr(count);
    b_.SetInsertPoint(count);
    gpu_block_barrier();
    Value* vote = b_.CreateZExt(all ? b_.CreateNot(p) : p, b_.getInt32Ty());
    b_.CreateAtomicRMW(AtomicRMWInst::Add, word, vote, Align(4), AtomicOrdering::Monotonic,
                       ctx().getOrInsertSyncScopeID("workgroup"));
    gpu_block_barrier();
    Value* total = b_.CreateLoad(b_.getInt32Ty(), word);
    Value* result = popc  ? total
                    : all ? b_.CreateICmpEQ(total, b_.getInt32(0))
                          : b_.CreateICmpNE(total, b_.getInt32(0));
    store(ins, ins.operands[0], result, false);
    return;
  }
  if (ins.num_operands == 0) unsupported(ins, "a barrier needs a barrier number");
  // Any barrier number without a thread count waits for the whole block: s_barrier does,
  // as long as the block's threads meet the same barriers in the same order.
  if (ins.has(Modifier::Arrive) || ins.num_operands >= 2) return gpu_named_barrier(ins);
  gpu_block_barrier();
}

// bar.arrive a, b / bar.sync a, b: a wave arrives as one (PTX counts every thread of a warp)
// by adding 32 to barrier a's word; the wave whose arrival makes b threads completes the
// phase (generation + 1, b threads fewer, in one atomic add), and bar.sync waits until the
// generation it arrived in is over.
void FunctionLowering::gpu_named_barrier(const ptx::Instruction& ins) {
  if (ins.num_operands < 2) unsupported(ins, "bar.arrive needs a barrier and a thread count");
  lowering_.facts[fn_].named_barriers = true;
  Type* i32 = b_.getInt32Ty();
  SyncScope::ID workgroup = ctx().getOrInsertSyncScopeID("workgroup");
  Value* id = b_.CreateAnd(value(ins, ins.operands[0], i32, false), 15);
  Value* count = value(ins, ins.operands[1], i32, false);
  Value* word = b_.CreateGEP(i32, lowering_.gpu_named_barriers(), id);
  bool wait = !ins.has(Modifier::Arrive);
  b_.CreateFence(AtomicOrdering::Release, workgroup);
  Value* here = intrinsic(b_, Intrinsic::amdgcn_ballot, {b_.getTrue()}, {i32});
  Value* leader =
      b_.CreateICmpEQ(gpu_lane(), b_.CreateBinaryIntrinsic(Intrinsic::cttz, here, b_.getTrue()));
  BasicBlock* lead = BasicBlock::Create(ctx(), "named_barrier_arrive", fn_);
  BasicBlock* complete = BasicBlock::Create(ctx(), "named_barrier_complete", fn_);
  BasicBlock* spin = wait ? BasicBlock::Create(ctx(), "named_barrier_wait", fn_) : nullptr;
  BasicBlock* join = BasicBlock::Create(ctx(), "named_barrier_done", fn_);
  b_.CreateCondBr(leader, lead, join);
  b_.SetInsertPoint(lead);
  Value* old = b_.CreateAtomicRMW(AtomicRMWInst::Add, word, b_.getInt32(32), Align(4),
                                  AtomicOrdering::AcquireRelease, workgroup);
  Value* before = b_.CreateAnd(old, 0xffff);
  Value* after = b_.CreateAdd(before, b_.getInt32(32));
  Value* completes = b_.CreateAnd(b_.CreateICmpULT(before, count), b_.CreateICmpUGE(after, count));
  b_.CreateCondBr(completes, complete, wait ? spin : join);
  b_.SetInsertPoint(complete);
  b_.CreateAtomicRMW(AtomicRMWInst::Add, word, b_.CreateSub(b_.getInt32(1u << 16), count), Align(4),
                     AtomicOrdering::AcquireRelease, workgroup);
  b_.CreateBr(join);
  if (wait) {
    b_.SetInsertPoint(spin);
    gpu_yield();
    LoadInst* now = b_.CreateAlignedLoad(i32, word, Align(4));
    now->setAtomic(AtomicOrdering::Acquire, workgroup);
    Value* same = b_.CreateICmpEQ(b_.CreateLShr(now, 16), b_.CreateLShr(old, 16));
    b_.CreateCondBr(same, spin, join);
  }
  b_.SetInsertPoint(join);
  if (wait) b_.CreateFence(AtomicOrdering::Acquire, workgroup);
}

// At the start of a kernel that uses named barriers: thread 0 zeroes their words, and the
// block waits for it.
void FunctionLowering::gpu_init_named_barriers() {
  BasicBlock* entry = &fn_->getEntryBlock();
  BasicBlock* start = entry->getTerminator()->getSuccessor(0);
  BasicBlock* init = BasicBlock::Create(ctx(), "named_barriers_init", fn_, start);
  BasicBlock* zero = BasicBlock::Create(ctx(), "named_barriers_zero", fn_, start);
  BasicBlock* ready = BasicBlock::Create(ctx(), "named_barriers_ready", fn_, start);
  entry->getTerminator()->setSuccessor(0, init);
  b_.SetInsertPoint(init);
  b_.CreateCondBr(b_.CreateICmpEQ(gpu_linear_thread(), b_.getInt32(0)), zero, ready);
  b_.SetInsertPoint(zero);
  b_.CreateAlignedStore(Constant::getNullValue(FixedVectorType::get(b_.getInt32Ty(), 16)),
                        lowering_.gpu_named_barriers(), Align(16));
  b_.CreateBr(ready);
  b_.SetInsertPoint(ready);
  gpu_block_barrier();
  b_.CreateBr(start);
}

void FunctionLowering::gpu_warp(const ptx::Instruction& ins) {
  Type* i32 = b_.getInt32Ty();
  Type* i64 = b_.getInt64Ty();
  const ptx::Operand& dst = ins.operands[0];
  const ptx::Operand* dst_value = &dst;
  const ptx::Operand* dst_pred = nullptr;
  if (dst.kind == ptx::OperandKind::Pair) {
    dst_value = &dst.elems[0];
    dst_pred = &dst.elems[1];
  }
  auto ballot = [&](Value* p) { return intrinsic(b_, Intrinsic::amdgcn_ballot, {p}, {i32}); };
  auto readlane = [&](Value* v, Value* lane) {
    return intrinsic(b_, Intrinsic::amdgcn_readlane, {v, lane}, {i32});
  };
  // The lanes of membermask operand `i` that are here (the legacy forms: those here).
  auto members = [&](size_t i) -> Value* {
    Value* here = ballot(b_.getTrue());
    if (ins.num_operands <= i) return here;
    return b_.CreateAnd(here, value(ins, ins.operands[i], i32, false));
  };
  // A loop over the lanes of `lanes` (uniform), lowest first: body(lane, state) -> state.
  auto for_each_lane = [&](Value* lanes, Value* initial,
                           const std::function<Value*(Value*, Value*)>& body) {
    BasicBlock* before = b_.GetInsertBlock();
    BasicBlock* head = BasicBlock::Create(ctx(), "lanes", fn_);
    BasicBlock* step = BasicBlock::Create(ctx(), "lane", fn_);
    BasicBlock* done = BasicBlock::Create(ctx(), "lanes_done", fn_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    PHINode* left = b_.CreatePHI(i32, 2, "lanes_left");
    PHINode* state = b_.CreatePHI(initial->getType(), 2, "lanes_state");
    left->addIncoming(lanes, before);
    state->addIncoming(initial, before);
    b_.CreateCondBr(b_.CreateICmpEQ(left, b_.getInt32(0)), done, step);
    b_.SetInsertPoint(step);
    Value* lane = b_.CreateBinaryIntrinsic(Intrinsic::cttz, left, b_.getTrue());
    Value* next = body(lane, state);
    Value* rest = b_.CreateAnd(left, b_.CreateSub(left, b_.getInt32(1)));
    left->addIncoming(rest, b_.GetInsertBlock());
    state->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(head);
    b_.SetInsertPoint(done);
    return state;
  };

  switch (ins.opcode) {
  case Opcode::Activemask:
    store(ins, dst, ballot(b_.getTrue()), false);
    return;
  case Opcode::Elect: {
    Value* leader = b_.CreateBinaryIntrinsic(Intrinsic::cttz, members(1), b_.getTrue());
    store(ins, *dst_value, leader, false);
    if (dst_pred) store(ins, *dst_pred, b_.CreateICmpEQ(gpu_lane(), leader), false);
    return;
  }
  case Opcode::Shfl: {
    // shfl{.sync}.mode.b32 d{|p}, a, b, c{, membermask}: ds_bpermute reads lane j's a.
    if (ins.num_operands < 4) unsupported(ins, "shfl needs d, a, b and c");
    uint32_t mode = ins.has(Modifier::Up)     ? 0
                    : ins.has(Modifier::Down) ? 1
                    : ins.has(Modifier::Bfly) ? 2
                                              : 3;
    Value* a = value(ins, ins.operands[1], i32, false);
    Value* bv = b_.CreateAnd(value(ins, ins.operands[2], i32, false), 31);
    Value* cv = value(ins, ins.operands[3], i32, false);
    Value* lane = gpu_lane();
    auto [j, in_range] = shuffle_source(b_, mode, lane, bv, cv);
    Value* source = b_.CreateSelect(in_range, j, lane);
    Value* r = intrinsic(b_, Intrinsic::amdgcn_ds_bpermute, {b_.CreateShl(source, 2), a});
    store(ins, *dst_value, r, false);
    if (dst_pred) store(ins, *dst_pred, in_range, false);
    return;
  }
  case Opcode::Vote: {
    // vote{.sync}.all|any|uni.pred d, {!}a{, membermask}; vote{.sync}.ballot.b32 d, {!}a{,
    // membermask}
    if (ins.num_operands < 2) unsupported(ins, "vote needs d and a");
    Value* lanes = members(2);
    Value* yes = b_.CreateAnd(ballot(value(ins, ins.operands[1], b_.getInt1Ty(), false)), lanes);
    Value* r;
    if (ins.has(Modifier::All))
      r = b_.CreateICmpEQ(yes, lanes);
    else if (ins.has(Modifier::Any))
      r = b_.CreateICmpNE(yes, b_.getInt32(0));
    else if (ins.has(Modifier::Uni))
      r = b_.CreateOr(b_.CreateICmpEQ(yes, lanes), b_.CreateICmpEQ(yes, b_.getInt32(0)));
    else
      r = yes;
    store(ins, dst, r, false);
    return;
  }
  case Opcode::Match: {
    // match.any.sync.b32|b64 d, a, membermask: the lanes whose a equals this lane's;
    // match.all.sync d{|p}, a, membermask: membermask if they all are equal, else 0.
    if (ins.num_operands < 3) unsupported(ins, "match needs d, a and membermask");
    bool wide = ins.has(Modifier::B64);
    Value* a = value(ins, ins.operands[1], wide ? i64 : i32, false);
    auto lane_value = [&](Value* lane) -> Value* {
      if (!wide) return readlane(a, lane);
      Value* lo = readlane(b_.CreateTrunc(a, i32), lane);
      Value* hi = readlane(b_.CreateTrunc(b_.CreateLShr(a, 32), i32), lane);
      return b_.CreateOr(b_.CreateZExt(lo, i64), b_.CreateShl(b_.CreateZExt(hi, i64), 32));
    };
    Value* lanes = members(2);
    if (ins.has(Modifier::All)) {
      Value* first = b_.CreateBinaryIntrinsic(Intrinsic::cttz, lanes, b_.getTrue());
      Value* same = b_.CreateAnd(ballot(b_.CreateICmpEQ(a, lane_value(first))), lanes);
      Value* all = b_.CreateICmpEQ(same, lanes);
      store(ins, *dst_value, b_.CreateSelect(all, lanes, b_.getInt32(0)), false);
      if (dst_pred) store(ins, *dst_pred, all, false);
      return;
    }
    // One round per distinct value: the lowest lane left names it, its lanes leave.
    PHINode* result = nullptr;
    {
      BasicBlock* before = b_.GetInsertBlock();
      BasicBlock* head = BasicBlock::Create(ctx(), "match", fn_);
      BasicBlock* step = BasicBlock::Create(ctx(), "match_round", fn_);
      BasicBlock* done = BasicBlock::Create(ctx(), "match_done", fn_);
      b_.CreateBr(head);
      b_.SetInsertPoint(head);
      PHINode* left = b_.CreatePHI(i32, 2, "match_left");
      result = b_.CreatePHI(i32, 2, "match_mask");
      left->addIncoming(lanes, before);
      result->addIncoming(b_.getInt32(0), before);
      b_.CreateCondBr(b_.CreateICmpEQ(left, b_.getInt32(0)), done, step);
      b_.SetInsertPoint(step);
      Value* leader = b_.CreateBinaryIntrinsic(Intrinsic::cttz, left, b_.getTrue());
      Value* mine = b_.CreateICmpEQ(a, lane_value(leader));
      Value* same = b_.CreateAnd(ballot(mine), left);
      left->addIncoming(b_.CreateAnd(left, b_.CreateNot(same)), step);
      result->addIncoming(b_.CreateSelect(mine, same, result), step);
      b_.CreateBr(head);
      b_.SetInsertPoint(done);
    }
    store(ins, *dst_value, result, false);
    return;
  }
  case Opcode::Redux: {
    // redux.sync.op.type d, a, membermask; redux.sync.min|max{.abs}{.NaN}.f32 d, a, membermask:
    // the member lanes' values folded in lane order (a uniform loop of readlanes).
    if (ins.num_operands < 3) unsupported(ins, "redux needs d, a and membermask");
    bool f32 = ins.has(Modifier::F32);
    if (f32 && !ins.has(Modifier::Min) && !ins.has(Modifier::Max))
      unsupported(ins, "redux.sync on .f32 is .min or .max");
    Value* a = value(ins, ins.operands[1], i32, false);
    Value* lanes = members(2);
    Value* r;
    if (f32) {
      bool is_min = ins.has(Modifier::Min), nan = ins.has(Modifier::NaN),
           abs = ins.has(Modifier::Abs);
      Type* f = b_.getFloatTy();
      Intrinsic::ID id = nan ? (is_min ? Intrinsic::minimum : Intrinsic::maximum)
                             : (is_min ? Intrinsic::minimumnum : Intrinsic::maximumnum);
      // NaN is the identity of minimumnum/maximumnum, +-inf of minimum/maximum.
      Value* identity = nan ? ConstantFP::getInfinity(f, !is_min) : ConstantFP::getNaN(f);
      r = for_each_lane(lanes, identity, [&](Value* lane, Value* acc) {
        Value* x = b_.CreateBitCast(readlane(a, lane), f);
        if (abs) x = b_.CreateUnaryIntrinsic(Intrinsic::fabs, x);
        return b_.CreateBinaryIntrinsic(id, acc, x);
      });
      r = b_.CreateBitCast(r, i32);
    } else {
      bool sgn = ins.has(Modifier::S32);
      Intrinsic::ID id = Intrinsic::not_intrinsic;
      Instruction::BinaryOps op = Instruction::Add;
      uint32_t identity = 0;
      if (ins.has(Modifier::Min)) {
        id = sgn ? Intrinsic::smin : Intrinsic::umin;
        identity = sgn ? 0x7fffffffu : ~0u;
      } else if (ins.has(Modifier::Max)) {
        id = sgn ? Intrinsic::smax : Intrinsic::umax;
        identity = sgn ? 0x80000000u : 0;
      } else if (ins.has(Modifier::And)) {
        op = Instruction::And;
        identity = ~0u;
      } else if (ins.has(Modifier::Or)) {
        op = Instruction::Or;
      } else if (ins.has(Modifier::Xor)) {
        op = Instruction::Xor;
      }
      r = for_each_lane(lanes, b_.getInt32(identity), [&](Value* lane, Value* acc) -> Value* {
        Value* x = readlane(a, lane);
        return id != Intrinsic::not_intrinsic ? b_.CreateBinaryIntrinsic(id, acc, x)
                                              : b_.CreateBinOp(op, acc, x);
      });
    }
    store(ins, dst, r, false);
    return;
  }
  default:
    unsupported(ins, "not a warp operation");
  }
}

// ---------------------------------------------------------------- matrix operations

namespace {

// Lane `source`'s value of `v` (an i32), read with ds_bpermute.
Value* from_lane(IRBuilder<>& b, Value* source, Value* v) {
  return intrinsic(b, Intrinsic::amdgcn_ds_bpermute, {b.CreateShl(source, 2), v});
}

} // namespace

// ldmatrix / stmatrix .m8n8.x{1,2,4}{.trans}.b16 and movmatrix.m8n8.trans.b16, in the
// layouts of the PTX ISA (as backends/cpu/matrix.cpp computes them): lane l's word q is row
// l/4, columns 2(l%4) and 2(l%4)+1 of matrix q (with .trans, column l/4 of rows 2(l%4) and
// 2(l%4)+1); lane 8q + r names the address of matrix q's row r, which the lanes that need it
// read from it with ds_bpermute.
void FunctionLowering::gpu_matrix_move(const ptx::Instruction& ins) {
  Type* i32 = b_.getInt32Ty();
  Type* i16 = b_.getInt16Ty();
  Value* lane = gpu_lane();
  Value* group = b_.CreateLShr(lane, 2);   // l / 4
  Value* in_group = b_.CreateAnd(lane, 3); // l % 4
  if (ins.opcode == Opcode::Movmatrix) {
    if (!ins.has(Modifier::Trans) || ins.num_operands != 2)
      unsupported(ins, "movmatrix is .m8n8.trans.b16 d, a");
    // The transposed word of lane l is elements (2(l%4), l/4) and (2(l%4)+1, l/4); element
    // (r, c) is half c%2 of lane 4r + c/2's word.
    Value* a = value(ins, ins.operands[1], i32, false);
    Value* source = b_.CreateAdd(b_.CreateShl(in_group, 3), b_.CreateLShr(lane, 3));
    Value* shift = b_.CreateShl(b_.CreateAnd(group, 1), 4);
    Value* lo = b_.CreateAnd(b_.CreateLShr(from_lane(b_, source, a), shift), 0xffff);
    Value* hi = b_.CreateAnd(
        b_.CreateLShr(from_lane(b_, b_.CreateAdd(source, b_.getInt32(4)), a), shift), 0xffff);
    store(ins, ins.operands[0], b_.CreateOr(lo, b_.CreateShl(hi, 16)), false);
    return;
  }
  bool load = ins.opcode == Opcode::Ldmatrix;
  if (!ins.has(Modifier::B16) || ins.num_operands != 2)
    unsupported(ins, "ldmatrix and stmatrix are .m8n8 .b16");
  unsigned count = ins.has(Modifier::X4) ? 4 : ins.has(Modifier::X2) ? 2 : 1;
  bool trans = ins.has(Modifier::Trans);
  bool shared = ins.has(Modifier::Shared) || ins.has(Modifier::SharedCta);
  const ptx::Operand& regs = ins.operands[load ? 0 : 1];
  if (regs.kind != ptx::OperandKind::Vector || regs.count != count)
    unsupported(ins, "a matrix .x" + std::to_string(count) + " takes " + std::to_string(count) +
                         " registers");
  Value* row = address(ins, ins.operands[load ? 1 : 0], shared ? Modifier::Shared : Modifier::None);
  // Row addresses: 32-bit LDS addresses, or generic ones in two halves.
  Value* row_lo = shared ? b_.CreatePtrToInt(row, i32)
                         : b_.CreateTrunc(b_.CreatePtrToInt(row, b_.getInt64Ty()), i32);
  Value* row_hi =
      shared ? nullptr
             : b_.CreateTrunc(b_.CreateLShr(b_.CreatePtrToInt(row, b_.getInt64Ty()), 32), i32);
  auto row_of = [&](Value* source, Value* offset) -> Value* {
    if (shared) {
      Value* a = b_.CreateAdd(from_lane(b_, source, row_lo), offset);
      return b_.CreateIntToPtr(a, PointerType::get(ctx(), kLdsSpace));
    }
    Value* a = b_.CreateOr(
        b_.CreateZExt(from_lane(b_, source, row_lo), b_.getInt64Ty()),
        b_.CreateShl(b_.CreateZExt(from_lane(b_, source, row_hi), b_.getInt64Ty()), 32));
    return b_.CreateIntToPtr(b_.CreateAdd(a, b_.CreateZExt(offset, b_.getInt64Ty())),
                             b_.getPtrTy());
  };
  for (unsigned q = 0; q < count; ++q) {
    Value* base = b_.getInt32(8 * q);
    if (!trans) { // row l/4, bytes 4(l%4)
      Value* p = row_of(b_.CreateAdd(base, group), b_.CreateShl(in_group, 2));
      if (load)
        store(ins, regs.elems[q], b_.CreateAlignedLoad(i32, p, Align(4)), false);
      else
        b_.CreateAlignedStore(value(ins, regs.elems[q], i32, false), p, Align(4));
      continue;
    }
    // Rows 2(l%4) and 2(l%4)+1, bytes 2(l/4).
    Value* first = b_.CreateAdd(base, b_.CreateShl(in_group, 1));
    Value* p0 = row_of(first, b_.CreateShl(group, 1));
    Value* p1 = row_of(b_.CreateAdd(first, b_.getInt32(1)), b_.CreateShl(group, 1));
    if (load) {
      Value* lo = b_.CreateZExt(b_.CreateAlignedLoad(i16, p0, Align(2)), i32);
      Value* hi = b_.CreateZExt(b_.CreateAlignedLoad(i16, p1, Align(2)), i32);
      store(ins, regs.elems[q], b_.CreateOr(lo, b_.CreateShl(hi, 16)), false);
    } else {
      Value* v = value(ins, regs.elems[q], i32, false);
      b_.CreateAlignedStore(b_.CreateTrunc(v, i16), p0, Align(2));
      b_.CreateAlignedStore(b_.CreateTrunc(b_.CreateLShr(v, 16), i16), p1, Align(2));
    }
  }
}

namespace {

bool is_integer(MatrixType t) {
  return t == MatrixType::S8 || t == MatrixType::U8 || t == MatrixType::S32 ||
         t == MatrixType::S4 || t == MatrixType::U4;
}

// An element's bits (zero-extended to i64) as the CPU executor's to_double reads them: exact
// in f64, tf32 keeping the upper 19 bits of its word; integer types read 0.
Value* element_to_double(IRBuilder<>& b, MatrixType t, Value* raw) {
  Type* f32 = b.getFloatTy();
  Type* f64 = b.getDoubleTy();
  Value* word = b.CreateTrunc(raw, b.getInt32Ty());
  switch (t) {
  case MatrixType::F16:
    return b.CreateFPExt(
        b.CreateFPExt(b.CreateBitCast(b.CreateTrunc(raw, b.getInt16Ty()), b.getHalfTy()), f32),
        f64);
  case MatrixType::BF16:
    return b.CreateFPExt(b.CreateBitCast(b.CreateShl(word, 16), f32), f64);
  case MatrixType::TF32:
    return b.CreateFPExt(b.CreateBitCast(b.CreateAnd(word, 0xffffe000u), f32), f64);
  case MatrixType::F32:
    return b.CreateFPExt(b.CreateBitCast(word, f32), f64);
  case MatrixType::F64:
    return b.CreateBitCast(raw, f64);
  default:
    return ConstantFP::get(f64, 0.0);
  }
}

// An f64 sum rounded to `t` as the CPU executor's from_double does (f16 through f32, bf16
// to nearest even with NaNs kept quiet), as raw bits zero-extended to i64.
Value* double_to_element(IRBuilder<>& b, MatrixType t, Value* sum) {
  Type* i32 = b.getInt32Ty();
  Type* i64 = b.getInt64Ty();
  switch (t) {
  case MatrixType::F16: {
    Value* h = b.CreateFPTrunc(b.CreateFPTrunc(sum, b.getFloatTy()), b.getHalfTy());
    return b.CreateZExt(b.CreateBitCast(h, b.getInt16Ty()), i64);
  }
  case MatrixType::BF16: {
    Value* f = b.CreateFPTrunc(sum, b.getFloatTy());
    Value* u = b.CreateBitCast(f, i32);
    Value* rounded = b.CreateLShr(
        b.CreateAdd(u, b.CreateAdd(b.getInt32(0x7fff), b.CreateAnd(b.CreateLShr(u, 16), 1))), 16);
    Value* quiet = b.CreateOr(b.CreateLShr(u, 16), 0x40);
    return b.CreateZExt(b.CreateSelect(b.CreateFCmpUNO(f, f), quiet, rounded), i64);
  }
  case MatrixType::F32:
    return b.CreateZExt(b.CreateBitCast(b.CreateFPTrunc(sum, b.getFloatTy()), i32), i64);
  case MatrixType::F64:
    return b.CreateBitCast(sum, i64);
  default:
    return b.getInt64(0);
  }
}

// An element's bits as the CPU executor's to_integer reads them, in i32 (every integer type
// fits); floating types read 0.
Value* element_to_integer(IRBuilder<>& b, MatrixType t, Value* raw) {
  Type* i32 = b.getInt32Ty();
  switch (t) {
  case MatrixType::S8:
    return b.CreateSExt(b.CreateTrunc(raw, b.getInt8Ty()), i32);
  case MatrixType::U8:
    return b.CreateZExt(b.CreateTrunc(raw, b.getInt8Ty()), i32);
  case MatrixType::S4:
    return b.CreateSExt(b.CreateTrunc(raw, b.getIntNTy(4)), i32);
  case MatrixType::U4:
    return b.CreateZExt(b.CreateTrunc(raw, b.getIntNTy(4)), i32);
  case MatrixType::S32:
    return b.CreateTrunc(raw, i32);
  default:
    return b.getInt32(0);
  }
}

// Element e of `bits` bits from a fragment's 32-bit words (word(j) gives word j), zero-
// extended to i64: the CPU executor's raw_element.
template <typename WordOf>
Value* raw_element(IRBuilder<>& b, unsigned bits, unsigned e, WordOf word) {
  Type* i64 = b.getInt64Ty();
  if (bits == 64)
    return b.CreateOr(b.CreateZExt(word(2 * e), i64),
                      b.CreateShl(b.CreateZExt(word(2 * e + 1), i64), 32));
  unsigned per = 32 / bits, shift = (e % per) * bits;
  Value* v = word(e / per);
  if (shift) v = b.CreateLShr(v, shift);
  if (bits < 32) v = b.CreateAnd(v, (1u << bits) - 1);
  return b.CreateZExt(v, i64);
}

} // namespace

// The 32-bit words of a register list, in order (a 64-bit register is two, low first).
std::vector<Value*> FunctionLowering::gpu_fragment_words(const ptx::Instruction& ins,
                                                         const ptx::Operand& list) {
  if (list.kind != ptx::OperandKind::Vector) unsupported(ins, "matrix operands are register lists");
  std::vector<Value*> words;
  for (const ptx::Operand& e : list.children()) {
    Register* r = e.kind == ptx::OperandKind::Name ? reg(e.name_view()) : nullptr;
    if (!r || r->type->getPrimitiveSizeInBits() != 64) {
      words.push_back(value(ins, e, b_.getInt32Ty(), false));
      continue;
    }
    Value* v = value(ins, e, b_.getInt64Ty(), false);
    words.push_back(b_.CreateTrunc(v, b_.getInt32Ty()));
    words.push_back(b_.CreateTrunc(b_.CreateLShr(v, 32), b_.getInt32Ty()));
  }
  return words;
}

// mma.sync, every shape and type codegen/matrix_layout.h describes, in the PTX ISA's fragment
// layouts and with the CPU executor's arithmetic (backends/cpu/matrix.cpp): lane l's d[i], at
// (row, col), is C[row][col] + A[row][x] * B[x][col] for x in order; floating types as exact
// f64 products fused into an f64 sum rounded once to d's type, integers in 64 bits, clamped
// to s32 with .satfinite and wrapped without. Each A[row][x] and B[x][col] is read from the
// lane mma_operand_source names with ds_bpermute, every (lane, word) pair once.
void FunctionLowering::gpu_mma(const ptx::Instruction& ins, const MatrixOp& op) {
  Type* i32 = b_.getInt32Ty();
  Type* i64 = b_.getInt64Ty();
  std::vector<Value*> a = gpu_fragment_words(ins, ins.operands[1]),
                      b = gpu_fragment_words(ins, ins.operands[2]),
                      c = gpu_fragment_words(ins, ins.operands[3]);
  const ptx::Operand& d = ins.operands[0];
  if (d.kind != ptx::OperandKind::Vector) unsupported(ins, "matrix operands are register lists");
  const unsigned outputs = fragment_elements(op, MatrixOperand::C);
  const unsigned a_bits = matrix_type_bits(op.a), b_bits = matrix_type_bits(op.b),
                 c_bits = matrix_type_bits(op.c), d_bits = matrix_type_bits(op.d);
  const bool integer = is_integer(op.a);
  Value* lane = gpu_lane();
  Value* group = b_.CreateLShr(lane, 2);
  Value* in_group = b_.CreateAnd(lane, 3);
  std::map<std::tuple<MatrixOperand, unsigned, int, int, int>, Value*> fetched;
  // Element `x` of A's row or B's column that output element i multiplies, from its lane.
  auto operand = [&](MatrixOperand which, unsigned i, unsigned x) {
    LaneSource s = mma_operand_source(op, which, i, x);
    if (!s.found) unsupported(ins, "this mma layout has no per-lane source for amdgpu (internal)");
    const std::vector<Value*>& words = which == MatrixOperand::A ? a : b;
    auto word = [&](unsigned j) -> Value* {
      if (j >= words.size()) unsupported(ins, "mma register list shorter than its fragment");
      Value*& v = fetched[{which, j, s.per_group, s.per_in_group, s.offset}];
      if (!v) {
        Value* source = b_.CreateAdd(
            b_.CreateAdd(b_.CreateMul(group, b_.getInt32(uint32_t(s.per_group))),
                         b_.CreateMul(in_group, b_.getInt32(uint32_t(s.per_in_group)))),
            b_.getInt32(uint32_t(s.offset)));
        v = from_lane(b_, source, words[j]);
      }
      return v;
    };
    MatrixType t = which == MatrixOperand::A ? op.a : op.b;
    Value* raw = raw_element(b_, which == MatrixOperand::A ? a_bits : b_bits, s.element, word);
    return integer ? element_to_integer(b_, t, raw) : element_to_double(b_, t, raw);
  };
  auto own_c = [&](unsigned j) -> Value* {
    if (j >= c.size()) unsupported(ins, "mma register list shorter than its fragment");
    return c[j];
  };
  // Every lane exchange first, then the arithmetic.
  std::vector<Value*> from_a, from_b;
  for (unsigned i = 0; i < outputs; ++i)
    for (unsigned x = 0; x < op.k; ++x) {
      from_a.push_back(operand(MatrixOperand::A, i, x));
      from_b.push_back(operand(MatrixOperand::B, i, x));
    }
  std::vector<Value*> out(d_bits == 64 ? 2 * outputs : (outputs * d_bits + 31) / 32, nullptr);
  for (unsigned i = 0; i < outputs; ++i) {
    Value* raw_c = raw_element(b_, c_bits, i, own_c);
    Value* result;
    if (integer) {
      Value* sum = b_.CreateSExt(element_to_integer(b_, op.c, raw_c), i64);
      for (unsigned x = 0; x < op.k; ++x) { // |A| and |B| <= 255: the product fits in i32
        Value* product = b_.CreateMul(from_a[i * op.k + x], from_b[i * op.k + x]);
        sum = b_.CreateAdd(sum, b_.CreateSExt(product, i64));
      }
      if (op.satfinite) {
        sum = b_.CreateBinaryIntrinsic(Intrinsic::smax, sum, b_.getInt64(INT32_MIN));
        sum = b_.CreateBinaryIntrinsic(Intrinsic::smin, sum, b_.getInt64(INT32_MAX));
      }
      result = b_.CreateZExt(b_.CreateTrunc(sum, i32), i64);
    } else {
      Value* sum = element_to_double(b_, op.c, raw_c);
      for (unsigned x = 0; x < op.k; ++x)
        sum = b_.CreateIntrinsic(Intrinsic::fma, {b_.getDoubleTy()},
                                 {from_a[i * op.k + x], from_b[i * op.k + x], sum});
      result = double_to_element(b_, op.d, sum);
    }
    // Into d's words as the CPU executor's set_raw_element places it.
    if (d_bits == 64) {
      out[2 * i] = b_.CreateTrunc(result, i32);
      out[2 * i + 1] = b_.CreateTrunc(b_.CreateLShr(result, 32), i32);
      continue;
    }
    unsigned per = 32 / d_bits, shift = (i % per) * d_bits;
    Value* v = b_.CreateTrunc(result, i32);
    if (d_bits < 32) v = b_.CreateAnd(v, (1u << d_bits) - 1);
    if (shift) v = b_.CreateShl(v, shift);
    Value*& w = out[i / per];
    w = w ? b_.CreateOr(w, v) : v;
  }
  unsigned w = 0; // registers past the result read 0, as on the CPU
  auto out_word = [&](unsigned j) -> Value* {
    return j < out.size() && out[j] ? out[j] : b_.getInt32(0);
  };
  for (const ptx::Operand& e : d.children()) {
    Register* r = e.kind == ptx::OperandKind::Name ? reg(e.name_view()) : nullptr;
    if (r && r->type->getPrimitiveSizeInBits() == 64) {
      Value* v = b_.CreateOr(b_.CreateZExt(out_word(w), i64),
                             b_.CreateShl(b_.CreateZExt(out_word(w + 1), i64), 32));
      store(ins, e, v, false);
      w += 2;
    } else {
      store(ins, e, out_word(w++), false);
    }
  }
}

// The 32-bit words of a register list (a .b64 register is two), in order.
namespace {

struct FragmentShape {
  unsigned rows, cols, bits, per_lane; // per_lane: elements each lane holds
};

FragmentShape fragment_shape(const MatrixOp& op, MatrixOperand which) {
  return {matrix_rows(op, which), matrix_cols(op, which), matrix_type_bits(operand_type(op, which)),
          fragment_elements(op, which)};
}

} // namespace

// wmma.load / wmma.store: each lane reads or writes its own elements (row-major chunk l*E/32
// of the logical matrix) at row * stride + col (column-major: col * stride + row).
void FunctionLowering::gpu_wmma_memory(const ptx::Instruction& ins, const MatrixOp& op,
                                       uint32_t matrix, bool column_major, Value* memory,
                                       Value* stride, bool load, const ptx::Operand& regs) {
  MatrixOperand which = matrix == 0   ? MatrixOperand::A
                        : matrix == 1 ? MatrixOperand::B
                                      : MatrixOperand::C;
  FragmentShape f = fragment_shape(op, which);
  if (f.per_lane == 0 || (f.bits != 16 && f.bits != 32) || regs.kind != ptx::OperandKind::Vector ||
      regs.count * 32 < f.per_lane * f.bits)
    unsupported(ins, "this shape and type of wmma is not supported on amdgpu yet");
  Type* i32 = b_.getInt32Ty();
  Type* element = b_.getIntNTy(f.bits);
  unsigned per_word = 32 / f.bits;
  Value* first = b_.CreateMul(gpu_lane(), b_.getInt32(f.per_lane));
  std::vector<Value*> words(regs.count, nullptr);
  for (unsigned i = 0; i < f.per_lane; ++i) {
    Value* e = b_.CreateAdd(first, b_.getInt32(i));
    Value* row = b_.CreateUDiv(e, b_.getInt32(f.cols));
    Value* col = b_.CreateURem(e, b_.getInt32(f.cols));
    Value* index = column_major ? b_.CreateAdd(b_.CreateMul(col, stride), row)
                                : b_.CreateAdd(b_.CreateMul(row, stride), col);
    Value* p = b_.CreateGEP(element, memory, b_.CreateZExt(index, b_.getInt64Ty()));
    unsigned w = i / per_word, shift = (i % per_word) * f.bits;
    if (load) {
      Value* v = b_.CreateZExt(b_.CreateAlignedLoad(element, p, Align(f.bits / 8)), i32);
      v = shift ? b_.CreateShl(v, shift) : v;
      words[w] = words[w] ? b_.CreateOr(words[w], v) : v;
    } else {
      if (!words[w]) words[w] = value(ins, regs.elems[w], i32, false);
      Value* v = shift ? b_.CreateLShr(words[w], shift) : words[w];
      b_.CreateAlignedStore(b_.CreateTrunc(v, element), p, Align(f.bits / 8));
    }
  }
  if (load) // registers past the lane's elements (PTX's fragments are larger) read 0
    for (unsigned w = 0; w < regs.count; ++w)
      store(ins, regs.elems[w], words[w] ? words[w] : b_.getInt32(0), false);
}

// wmma.mma: lane l's d element i is (row, col) of its chunk; A[row][k] and B[k][col] are
// read from the lanes whose chunks hold them with ds_bpermute (the element's place in the
// chunk must be the same for every lane, as it is for the shapes here: checked at compile
// time), converted to f32 (tf32 keeps 10 bits of mantissa) and accumulated with fma.
void FunctionLowering::gpu_wmma_mma(const ptx::Instruction& ins, const MatrixOp& op) {
  FragmentShape fa = fragment_shape(op, MatrixOperand::A),
                fb = fragment_shape(op, MatrixOperand::B),
                fc = fragment_shape(op, MatrixOperand::C);
  auto usable = [](MatrixType t) {
    return t == MatrixType::F16 || t == MatrixType::BF16 || t == MatrixType::TF32;
  };
  if (!usable(op.a) || op.a != op.b || op.c != MatrixType::F32 || op.d != MatrixType::F32 ||
      !fa.per_lane || !fb.per_lane || !fc.per_lane)
    gpu_unsupported("this matrix operation: wmma.mma other than f16, bf16 or tf32 with f32 "
                    "accumulators");
  // Where (lane-independent) in a chunk operand elements sit, for every lane.
  auto uniform_index = [&](bool is_a, unsigned i, unsigned k) -> int {
    int found = -1;
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned e = lane * fc.per_lane + i, row = e / fc.cols, col = e % fc.cols;
      unsigned at = is_a ? row * fa.cols + k : k * fb.cols + col;
      int index = int(at % (is_a ? fa.per_lane : fb.per_lane));
      if (found >= 0 && index != found) return -1;
      found = index;
    }
    return found;
  };
  Type* i32 = b_.getInt32Ty();
  Type* f32 = b_.getFloatTy();
  auto regs = [&](const ptx::Operand& list, Type* t) {
    if (list.kind != ptx::OperandKind::Vector)
      unsupported(ins, "matrix operands are register lists");
    std::vector<Value*> v;
    for (const ptx::Operand& e : list.children())
      v.push_back(value(ins, e, t, false));
    return v;
  };
  std::vector<Value*> a = regs(ins.operands[1], i32), b = regs(ins.operands[2], i32),
                      c = regs(ins.operands[3], f32);
  const ptx::Operand& d = ins.operands[0];
  if (d.kind != ptx::OperandKind::Vector || d.count != fc.per_lane || c.size() != fc.per_lane ||
      a.size() * 32 < fa.per_lane * fa.bits || b.size() * 32 < fb.per_lane * fb.bits)
    unsupported(ins, "wmma.mma's register lists do not match its shape");
  auto to_float = [&](Value* word, unsigned index, unsigned bits) -> Value* {
    if (bits == 32) // tf32: the upper 19 bits of an f32
      return b_.CreateBitCast(b_.CreateAnd(word, 0xffffe000u), f32);
    Value* half = b_.CreateTrunc(index % 2 ? b_.CreateLShr(word, 16) : word, b_.getInt16Ty());
    return b_.CreateFPExt(
        b_.CreateBitCast(half, op.a == MatrixType::BF16 ? b_.getBFloatTy() : b_.getHalfTy()), f32);
  };
  Value* lane = gpu_lane();
  for (unsigned i = 0; i < fc.per_lane; ++i) {
    Value* e = b_.CreateAdd(b_.CreateMul(lane, b_.getInt32(fc.per_lane)), b_.getInt32(i));
    Value* row = b_.CreateUDiv(e, b_.getInt32(fc.cols));
    Value* col = b_.CreateURem(e, b_.getInt32(fc.cols));
    Value* acc = c[i];
    for (unsigned k = 0; k < fa.cols; ++k) {
      int ia = uniform_index(true, i, k), ib = uniform_index(false, i, k);
      if (ia < 0 || ib < 0) unsupported(ins, "this wmma shape is not supported on amdgpu yet");
      Value* a_lane =
          b_.CreateUDiv(b_.CreateAdd(b_.CreateMul(row, b_.getInt32(fa.cols)), b_.getInt32(k)),
                        b_.getInt32(fa.per_lane));
      Value* b_lane =
          b_.CreateUDiv(b_.CreateAdd(b_.getInt32(k * fb.cols), col), b_.getInt32(fb.per_lane));
      unsigned a_per_word = 32 / fa.bits, b_per_word = 32 / fb.bits;
      Value* x =
          to_float(from_lane(b_, a_lane, a[unsigned(ia) / a_per_word]), unsigned(ia), fa.bits);
      Value* y =
          to_float(from_lane(b_, b_lane, b[unsigned(ib) / b_per_word]), unsigned(ib), fb.bits);
      acc = b_.CreateIntrinsic(Intrinsic::fma, {f32}, {x, y, acc});
    }
    store(ins, d.elems[i], acc, false);
  }
}

// ---------------------------------------------------------------- dispatch

bool FunctionLowering::lower_gpu_instruction(const ptx::Instruction& ins) {
  switch (ins.opcode) {
  case Opcode::Bar:
  case Opcode::Barrier:
    gpu_barrier(ins);
    return true;
  case Opcode::Shfl:
  case Opcode::Vote:
  case Opcode::Match:
  case Opcode::Redux:
  case Opcode::Activemask:
  case Opcode::Elect:
    gpu_warp(ins);
    return true;
  case Opcode::Membar:
  case Opcode::Fence:
    gpu_fence(ins);
    return true;
  case Opcode::Isspacep: {
    if (ins.num_operands != 2) unsupported(ins, "isspacep needs p and a");
    Value* p =
        b_.CreateIntToPtr(value(ins, ins.operands[1], b_.getInt64Ty(), false), b_.getPtrTy());
    auto in_shared = [&] { return intrinsic(b_, Intrinsic::amdgcn_is_shared, {p}); };
    auto in_private = [&] { return intrinsic(b_, Intrinsic::amdgcn_is_private, {p}); };
    Value* r = nullptr;
    if (ins.has(Modifier::Shared) || ins.has(Modifier::SharedCta))
      r = in_shared();
    else if (ins.has(Modifier::Local))
      r = in_private();
    else if (ins.has(Modifier::Global))
      r = b_.CreateNot(b_.CreateOr(in_shared(), in_private()));
    else
      unsupported(ins, "isspacep for this state space is not supported yet");
    store(ins, ins.operands[0], r, false);
    return true;
  }
  case Opcode::Nanosleep:
    gpu_yield();
    return true;
  default:
    return false;
  }
}

} // namespace mimic::codegen
