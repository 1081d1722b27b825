// Module and function structure of the lowering: registers, labels, operands, addresses.
// The instructions themselves are in lower_instructions.cpp.
#include "codegen/lower_impl.h"
#include "codegen/edge_threads.h"
#include "codegen/spill_remat.h"
#include "codegen/uniform_loads.h"
#include "codegen/thread_interchange.h"
#include "codegen/warp_indices.h"
#include "support/config.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <functional>
#include <set>
#include <cstddef>
#include <cstdlib>

#include <llvm/ADT/BitVector.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>

#include <llvm/IR/Verifier.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/ValueMapper.h>
#include <llvm/Support/raw_ostream.h>

namespace mimic::codegen {

using namespace llvm;

static bool computes_warps_from_tid(const ptx::Block& body);

// ---------------------------------------------------------------- types

Type* FunctionLowering::type_of(ptx::Modifier t) {
  LLVMContext& c = ctx();
  switch (t) {
  case ptx::Modifier::Pred:
    return Type::getInt1Ty(c);
  case ptx::Modifier::F32:
    return Type::getFloatTy(c);
  case ptx::Modifier::F64:
    return Type::getDoubleTy(c);
  default:
    break;
  }
  unsigned bits = ptx::type_bits(t);
  if (bits == 0 || bits > 64)
    return nullptr;
  return Type::getIntNTy(c, bits < 8 ? 8 : bits);
}

bool FunctionLowering::is_signed(ptx::Modifier t) {
  return t == ptx::Modifier::S8 || t == ptx::Modifier::S16 || t == ptx::Modifier::S32 || t == ptx::Modifier::S64;
}

bool FunctionLowering::is_float(ptx::Modifier t) { return t == ptx::Modifier::F32 || t == ptx::Modifier::F64; }

// ---------------------------------------------------------------- errors

void FunctionLowering::unsupported(const ptx::Instruction& ins, const std::string& what) {
  std::string text;
  ptx::print_instruction(text, ins);
  throw LoweringError{"line " + std::to_string(ins.loc.line) + ": " + what + " (" + text + ")"};
}

// ---------------------------------------------------------------- registers

void FunctionLowering::declare(const ptx::VarDecl& d) {
  if (d.space != ptx::Modifier::Reg)
    return;
  if (d.has_range)
    scopes_.back().ranges[d.name] = &d;
  else
    scopes_.back().names[d.name] = &d;
}

FunctionLowering::Register* FunctionLowering::reg(std::string_view name) {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    const ptx::VarDecl* decl = nullptr;
    if (auto it = s->names.find(name); it != s->names.end()) {
      decl = it->second;
    } else if (!s->ranges.empty()) {
      size_t digits = name.size();
      while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9')
        --digits;
      if (digits > 0 && digits < name.size())
        if (auto r = s->ranges.find(name.substr(0, digits)); r != s->ranges.end())
          decl = r->second;
    }
    if (!decl)
      continue;
    std::string key = std::string(name) + "@" + std::to_string(reinterpret_cast<uintptr_t>(decl));
    auto& slot = registers_[key];
    if (!slot.storage) {
      Type* t = type_of(decl->type);
      if (!t || decl->vector != ptx::Modifier::None)
        throw LoweringError{"register '" + std::string(name) + "' has a type the code generator does not handle yet"};
      IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
      slot.storage = entry.CreateAlloca(t, nullptr, std::string(name));
      slot.type = t;
      slot.ptx_type = decl->type;
      slot.order = unsigned(registers_.size());
      // Registers start as zero in each thread (PTX leaves them undefined; zero keeps runs
      // reproducible).
      IRBuilder<> init(body_, body_->getFirstInsertionPt());
      init.CreateStore(Constant::getNullValue(t), slot.storage);
    }
    return &slot;
  }
  return nullptr;
}

// ---------------------------------------------------------------- conversions

Value* FunctionLowering::convert(Value* v, Type* to, bool sign_extend) {
  Type* from = v->getType();
  if (from == to)
    return v;
  unsigned fb = from->getPrimitiveSizeInBits(), tb = to->getPrimitiveSizeInBits();
  if (fb == tb)
    return b_.CreateBitCast(v, to);
  // Different widths: go through integers of each width.
  Value* as_int = from->isIntegerTy() ? v : b_.CreateBitCast(v, IntegerType::get(ctx(), fb));
  Type* int_to = to->isIntegerTy() ? to : IntegerType::get(ctx(), tb);
  Value* resized = fb < tb ? (sign_extend ? b_.CreateSExt(as_int, int_to) : b_.CreateZExt(as_int, int_to))
                           : b_.CreateTrunc(as_int, int_to);
  return to->isIntegerTy() ? resized : b_.CreateBitCast(resized, to);
}

// ---------------------------------------------------------------- operands

Value* FunctionLowering::special_register(const ptx::Operand& op) {
  std::string_view n = op.name_view();
  // Clocks: the host's time-stamp counter and wall clock (nanoseconds).
  if (n == "%clock" || n == "%clock64" || n == "%clock_hi") {
    Value* c = gpu() ? gpu_clock(false) : b_.CreateCall(lowering_.helper("mimic_clock64", b_.getInt64Ty(), {}), {});
    return n == "%clock_hi" ? b_.CreateTrunc(b_.CreateLShr(c, 32), b_.getInt32Ty())
           : n == "%clock"  ? b_.CreateTrunc(c, b_.getInt32Ty())
                            : c;
  }
  if (n == "%globaltimer" || n == "%globaltimer_lo" || n == "%globaltimer_hi") {
    Value* g = gpu() ? gpu_clock(true) : b_.CreateCall(lowering_.helper("mimic_globaltimer", b_.getInt64Ty(), {}), {});
    return n == "%globaltimer_hi" ? b_.CreateTrunc(b_.CreateLShr(g, 32), b_.getInt32Ty())
           : n == "%globaltimer_lo" ? b_.CreateTrunc(g, b_.getInt32Ty())
                                    : g;
  }
  auto xyz = [&](SpecialRegister x) {
    int c = op.component == ptx::Component::Y ? 1 : op.component == ptx::Component::Z ? 2 : 0;
    return int(x) + c;
  };
  // Thread block clusters: every launch the CPU backend runs with cluster features has
  // clusters of one block (see LoweredKernel::cluster), so a cluster is its block.
  if (n.starts_with("%cluster") || n == "%nclusterid" || n == "%is_explicit_cluster") {
    lowering_.facts[fn_].cluster = true;
    if (n == "%cluster_ctarank" || n == "%cluster_ctaid")
      return b_.getInt32(0);
    if (n == "%cluster_nctarank" || n == "%cluster_nctaid")
      return b_.getInt32(1);
    if (n == "%is_explicit_cluster")
      return b_.getFalse();
    if (n == "%clusterid" || n == "%nclusterid")
      return sreg(xyz(n == "%clusterid" ? SpecialRegister::CtaidX : SpecialRegister::NctaidX));
    return nullptr;
  }
  // In a kernel, %tid comes from the row the thread loop is in (emit_row_setup).
  if (n == "%tid" && row_base_) {
    reads_rows_ |= op.component == ptx::Component::Y || op.component == ptx::Component::Z;
    if (op.component == ptx::Component::Y)
      return b_.CreateLoad(b_.getInt32Ty(), tid_y_);
    if (op.component == ptx::Component::Z)
      return b_.CreateLoad(b_.getInt32Ty(), tid_z_);
    return b_.CreateSub(thread_index(), b_.CreateLoad(b_.getInt32Ty(), row_base_));
  }
  int which = -1;
  if (n == "%tid")
    which = xyz(SpecialRegister::TidX);
  else if (n == "%ntid")
    which = xyz(SpecialRegister::NtidX);
  else if (n == "%ctaid")
    which = xyz(SpecialRegister::CtaidX);
  else if (n == "%nctaid")
    which = xyz(SpecialRegister::NctaidX);
  else if (n == "%laneid")
    which = int(SpecialRegister::LaneId);
  else if (n == "%warpid")
    which = int(SpecialRegister::WarpId);
  else if (n == "%nwarpid")
    which = int(SpecialRegister::NWarpId);
  else if (n == "%smid")
    which = int(SpecialRegister::SmId);
  else if (n == "%nsmid")
    which = int(SpecialRegister::NSmId);
  else if (n == "%lanemask_eq")
    which = int(SpecialRegister::LanemaskEq);
  else if (n == "%lanemask_le")
    which = int(SpecialRegister::LanemaskLe);
  else if (n == "%lanemask_lt")
    which = int(SpecialRegister::LanemaskLt);
  else if (n == "%lanemask_ge")
    which = int(SpecialRegister::LanemaskGe);
  else if (n == "%lanemask_gt")
    which = int(SpecialRegister::LanemaskGt);
  else if (n == "%dynamic_smem_size")
    which = int(SpecialRegister::DynamicSmemSize);
  else if (n == "%total_smem_size")
    which = int(SpecialRegister::TotalSmemSize);
  else if (n == "%reserved_smem_offset_begin")
    which = int(SpecialRegister::ReservedSmemBegin);
  else if (n == "%reserved_smem_offset_end")
    which = int(SpecialRegister::ReservedSmemEnd);
  else if (n == "%reserved_smem_offset_cap")
    which = int(SpecialRegister::ReservedSmemCap);
  else if (n == "%reserved_smem_offset_0")
    which = int(SpecialRegister::ReservedSmem0);
  else if (n == "%reserved_smem_offset_1")
    which = int(SpecialRegister::ReservedSmem1);
  else if (n.size() == 8 && n.substr(0, 7) == "%envreg" && n[7] >= '0' && n[7] <= '3') {
    which = int(SpecialRegister::EnvReg0) + (n[7] - '0');
    lowering_.facts[fn_].grid_sync = true;
  }
  if (which < 0)
    return nullptr;
  return sreg(which);
}

Value* FunctionLowering::sreg(int which) {
  if (gpu())
    return gpu_sreg(SpecialRegister(which));
  return b_.CreateCall(lowering_.sreg_fn(), {block_, thread_index(), b_.getInt32(uint32_t(which))});
}

// ---------------------------------------------------------------- the thread loop

// A pointer as the helpers of block_state.h take it: on a GPU, generic (state-space
// pointers are cast); on the CPU every pointer is.
Value* FunctionLowering::generic(Value* p) {
  if (p->getType()->getPointerAddressSpace() == 0)
    return p;
  return b_.CreateAddrSpaceCast(p, b_.getPtrTy());
}

Value* FunctionLowering::thread_index() {
  if (gpu())
    return gpu_linear_thread();
  return b_.CreateLoad(b_.getInt32Ty(), thread_, "t");
}

// BlockState's fields (not what its arrays hold) do not change while a kernel runs: the
// loads are marked invariant so that LLVM hoists them out of the thread loop.
Value* FunctionLowering::block_field(size_t offset, Type* type) {
  if (gpu())
    gpu_unsupported("this instruction needs the CPU executor's block state");
  return block_field(b_, offset, type);
}

Value* FunctionLowering::block_field(IRBuilder<>& b, size_t offset, Type* type) {
  LoadInst* v = b.CreateLoad(type, b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), block_, offset));
  v->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(ctx(), {}));
  return v;
}

// Thread t's element of spill slot `slot`: slot s is nthreads 8-byte words from
// spill + s * nthreads; thread t's value is its t-th element of the register's own type,
// so that a thread loop's saves and restores of 32-bit registers are contiguous vectors.
Value* FunctionLowering::spill_slot(IRBuilder<>& b, unsigned slot, Type* element, Value* t) {
  Value* spill = block_field(b, offsetof(BlockState, spill), b.getPtrTy());
  Value* count = b.CreateZExt(block_field(b, offsetof(BlockState, nthreads), b.getInt32Ty()), b.getInt64Ty());
  Value* base = b.CreateGEP(b.getInt64Ty(), spill, b.CreateMul(b.getInt64(slot), count));
  return b.CreateGEP(element, base, b.CreateZExt(t, b.getInt64Ty()));
}

Value* FunctionLowering::shared_base() { return block_field(offsetof(BlockState, shared), b_.getPtrTy()); }

Value* FunctionLowering::local_base() {
  if (gpu())
    return gpu_frame();
  Value* frames = block_field(offsetof(BlockState, local), b_.getPtrTy());
  Value* stride = block_field(offsetof(BlockState, local_stride), b_.getInt64Ty());
  Value* offset = b_.CreateMul(b_.CreateZExt(thread_index(), b_.getInt64Ty()), stride);
  if (local_sp_)
    offset = b_.CreateAdd(offset, local_sp_);
  return b_.CreateGEP(b_.getInt8Ty(), frames, offset);
}

// The current thread stops: `code` goes to next[t] and the loop moves to the next thread.
void FunctionLowering::stop_thread(uint32_t code) {
  if (gpu()) {
    gpu_stop(code);
    return;
  }
  Value* next = block_field(offsetof(BlockState, next), b_.getPtrTy());
  StoreInst* marker = b_.CreateStore(b_.getInt32(code), b_.CreateGEP(b_.getInt32Ty(), next, thread_index()));
  stop_markers_.insert(marker);
  if (!is_kernel_) { // exit or trap in a called function: the callers see next[t] and stop too
    b_.CreateRetVoid();
    return;
  }
  b_.CreateBr(latch_);
  if (code < kThreadStopped)
    split_sites_.push_back({marker, nullptr});
}

void FunctionLowering::publish_wait(Value* word) {
  Value* words = block_field(offsetof(BlockState, barrier), b_.getPtrTy());
  wait_stores_.insert(b_.CreateStore(word, b_.CreateGEP(b_.getInt32Ty(), words, thread_index())));
  published_wait_ = word;
}

// A split point: the thread stops here; the code that follows is where it resumes.
unsigned FunctionLowering::split(SplitKind kind) {
  if (gpu()) { // no thread loop: a thread that waits for others only lets them run a while
    if (kind != SplitKind::Yield)
      gpu_unsupported("this wait for other threads");
    gpu_yield();
    return 0;
  }
  if (!is_kernel_)
    throw LoweringError{"barriers and warp operations inside a function that is not inlined (.func '" +
                        std::string(f_.name) + "') are not supported yet"};
  splits.push_back(kind);
  // The chain may go on from this point without reading the words when every thread
  // publishes the same one that lets it: a barrier of the whole block (id < 256, count 0),
  // a warp operation with every lane in its member mask.
  auto* word = dyn_cast_or_null<ConstantInt>(published_wait_);
  published_wait_ = nullptr;
  const bool full = word && ((kind == SplitKind::Barrier && word->getZExtValue() < 0x100) ||
                             (kind == SplitKind::Warp && word->getZExtValue() == 0xffffffffu));
  split_words_.push_back(full ? word : nullptr);
  unsigned k = unsigned(splits.size());
  stop_thread(k);
  BasicBlock* resume = BasicBlock::Create(ctx(), "resume" + std::to_string(k), fn_);
  split_sites_.back().resume = resume;
  dispatch_->addCase(b_.getInt32(k), resume);
  b_.SetInsertPoint(resume);
  return k;
}

namespace {

Value* to_bits(IRBuilder<>& b, Value* v) {
  Type* t = v->getType();
  if (t->isFloatingPointTy())
    v = b.CreateBitCast(v, b.getIntNTy(unsigned(t->getPrimitiveSizeInBits())));
  return v->getType()->isIntegerTy(64) ? v : b.CreateZExt(v, b.getInt64Ty());
}

Value* from_bits(IRBuilder<>& b, Value* bits, Type* t) {
  unsigned width = unsigned(t->getPrimitiveSizeInBits());
  Value* v = width == 64 ? bits : b.CreateTrunc(bits, b.getIntNTy(width));
  return t->isFloatingPointTy() ? b.CreateBitCast(v, t) : v;
}

} // namespace

// Registers live at a resume point are saved per thread where the thread stops and loaded
// where it resumes. Liveness is over the register allocas, before they are promoted; the
// loop's back edge is not followed, so only what a resumed thread reads is kept.
void FunctionLowering::insert_spills() {
  if (split_sites_.empty())
    return;
  // In the order the registers were first used: the map's order follows the declarations'
  // addresses, and the slots (so the code, and the JIT cache's objects) would change from
  // run to run.
  std::vector<const Register*> used;
  for (auto& [key, r] : registers_)
    if (r.storage)
      used.push_back(&r);
  std::sort(used.begin(), used.end(), [](const Register* a, const Register* b) { return a->order < b->order; });
  std::vector<AllocaInst*> regs;
  DenseMap<Value*, unsigned> index;
  for (const Register* r : used) {
    index[r->storage] = unsigned(regs.size());
    regs.push_back(r->storage);
  }
  const unsigned n = unsigned(regs.size());
  struct Sets {
    BitVector use, def, in;
  };
  DenseMap<BasicBlock*, Sets> sets;
  for (BasicBlock& bb : *fn_) {
    Sets& st = sets[&bb];
    st.use.resize(n);
    st.def.resize(n);
    st.in.resize(n);
    for (Instruction& i : bb) {
      if (auto* l = dyn_cast<LoadInst>(&i)) {
        if (auto it = index.find(l->getPointerOperand()); it != index.end() && !st.def.test(it->second))
          st.use.set(it->second);
      } else if (auto* w = dyn_cast<StoreInst>(&i)) {
        if (auto it = index.find(w->getPointerOperand()); it != index.end())
          st.def.set(it->second);
      }
    }
  }
  // A thread that stops at a split point goes on at its resume block: that is the edge
  // liveness follows (not the loop's way through the latch).
  DenseMap<BasicBlock*, BasicBlock*> resumes_at;
  for (const SplitSite& site : split_sites_)
    resumes_at[site.marker->getParent()] = site.resume;
  std::vector<BasicBlock*> order;
  for (BasicBlock& bb : *fn_)
    order.push_back(&bb);
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      BasicBlock* bb = *it;
      Sets& st = sets[bb];
      BitVector out(n);
      if (auto r = resumes_at.find(bb); r != resumes_at.end())
        out |= sets[r->second].in; // stops here, goes on there
      else if (bb != latch_)
        for (BasicBlock* succ : successors(bb))
          out |= sets[succ].in;
      out.reset(st.def);
      out |= st.use;
      if (out != st.in) {
        st.in = std::move(out);
        changed = true;
      }
    }
  }
  DenseMap<unsigned, unsigned> slot_of;
  for (size_t k = 0; k < split_sites_.size(); ++k) {
    const SplitSite& site = split_sites_[k];
    const BitVector& live = sets[site.resume].in;
    IRBuilder<> save(site.marker);
    IRBuilder<> load(site.resume, site.resume->getFirstInsertionPt());
    auto slot_address = [&](IRBuilder<>& b, unsigned slot, Type* element) {
      return spill_slot(b, slot, element, b.CreateLoad(b.getInt32Ty(), thread_));
    };
    // Each save and restore names its split point and slot (codegen/spill_remat.h).
    auto tag = [&](Instruction* i, unsigned slot) {
      i->setMetadata(kSpillMetadata, MDNode::get(ctx(), {ConstantAsMetadata::get(b_.getInt32(uint32_t(k))),
                                                          ConstantAsMetadata::get(b_.getInt32(slot))}));
    };
    for (unsigned r : live.set_bits()) {
      auto [it, fresh] = slot_of.try_emplace(r, chain_slots_ + unsigned(slot_of.size()));
      unsigned slot = it->second;
      Type* t = regs[r]->getAllocatedType();
      // A register goes to its slot as its own type (an i1 as a byte), so that a value
      // restored and saved again unchanged is a store of what was loaded, which the
      // optimiser removes.
      if (t->isIntegerTy(1)) {
        tag(save.CreateStore(save.CreateZExt(save.CreateLoad(t, regs[r]), save.getInt8Ty()),
                             slot_address(save, slot, save.getInt8Ty())),
            slot);
        LoadInst* l = load.CreateLoad(load.getInt8Ty(), slot_address(load, slot, load.getInt8Ty()));
        tag(l, slot);
        load.CreateStore(load.CreateTrunc(l, t), regs[r]);
      } else if (t->getPrimitiveSizeInBits() > 0 && t->getPrimitiveSizeInBits() <= 64) {
        tag(save.CreateStore(save.CreateLoad(t, regs[r]), slot_address(save, slot, t)), slot);
        LoadInst* l = load.CreateLoad(t, slot_address(load, slot, t));
        tag(l, slot);
        load.CreateStore(l, regs[r]);
      } else {
        tag(save.CreateStore(to_bits(save, save.CreateLoad(t, regs[r])), slot_address(save, slot, save.getInt64Ty())),
            slot);
        LoadInst* l = load.CreateLoad(load.getInt64Ty(), slot_address(load, slot, load.getInt64Ty()));
        tag(l, slot);
        load.CreateStore(from_bits(load, l, t), regs[r]);
      }
    }
  }
  spill_slots = chain_slots_ + unsigned(slot_of.size());
}

// .local variables of the function: offsets in the thread's frame.
void FunctionLowering::layout_locals(const ptx::Block& block) {
  for (const ptx::Statement& s : block.statements) {
    if (s.kind == ptx::StatementKind::Var && s.var->space == ptx::Modifier::Local) {
      size_t align = runtime::declared_align(*s.var);
      local_bytes_ = (local_bytes_ + align - 1) / align * align;
      locals_[s.var->name] = local_bytes_;
      local_bytes_ += ptx::declared_size(*s.var);
    } else if (s.kind == ptx::StatementKind::Block) {
      layout_locals(*s.block);
    }
  }
}

Value* FunctionLowering::symbol_address(std::string_view name) {
  if (gpu()) {
    if (auto it = kernel_param_index_.find(name); it != kernel_param_index_.end())
      return fn_->getArg(unsigned(it->second));
    if (const auto* v = info_.shared_var(name))
      return gpu_shared_pointer(*v);
    if (GlobalVariable* g = lowering_.global(name))
      return ConstantExpr::getAddrSpaceCast(g, b_.getPtrTy());
  }
  if (auto it = kernel_params_.find(name); it != kernel_params_.end())
    return b_.CreateGEP(b_.getInt8Ty(), params_, b_.getInt64(it->second));
  if (Value* p = param_storage(name))
    return p;
  if (auto it = func_params_.find(name); it != func_params_.end())
    return b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_64(b_.getPtrTy(), argv_, it->second));
  if (auto it = func_returns_.find(name); it != func_returns_.end())
    return b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_64(b_.getPtrTy(), retv_, it->second));
  if (const ptx::Function* f = lowering_.ptx_function(name); f && f->body)
    return lowering_.callee(*f, info_, index_);
  if (const auto* v = info_.shared_var(name))
    return b_.CreateGEP(b_.getInt8Ty(), shared_base(), b_.getInt64(v->offset));
  if (auto it = locals_.find(name); it != locals_.end())
    return b_.CreateGEP(b_.getInt8Ty(), local_base(), b_.getInt64(it->second));
  if (GlobalVariable* g = lowering_.global(name))
    return g;
  return nullptr;
}

Value* FunctionLowering::value(const ptx::Instruction& ins, const ptx::Operand& op, Type* want, bool sign_extend) {
  switch (op.kind) {
  case ptx::OperandKind::Name: {
    if (op.component == ptx::Component::None)
      if (Register* r = reg(op.name_view())) {
        Value* v = b_.CreateLoad(r->type, r->storage);
        if (op.negated) {
          if (!v->getType()->isIntegerTy(1))
            unsupported(ins, "'!' applies to predicates only");
          v = b_.CreateNot(v);
        }
        if (v->getType()->isIntegerTy(1) && !want->isIntegerTy(1))
          return convert(b_.CreateZExt(v, b_.getInt32Ty()), want, false);
        return convert(v, want, sign_extend);
      }
    if (Value* s = special_register(op))
      return convert(s, want, false);
    if (op.name_view() == "WARP_SZ")
      return convert(b_.getInt32(32), want, false);
    // Shared and local variables name offsets in their windows (cvta makes them generic).
    // On a GPU, shared addresses are LDS addresses and local ones generic addresses.
    if (gpu())
      if (info_.shared_var(op.name_view()) || locals_.count(op.name_view())) {
        Value* p = symbol_address(op.name_view());
        if (op.offset)
          p = b_.CreateGEP(b_.getInt8Ty(), p, b_.getInt64(uint64_t(op.offset)));
        return convert(b_.CreatePtrToInt(p, b_.getInt64Ty()), want, false);
      }
    if (const auto* v = info_.shared_var(op.name_view()))
      return convert(b_.getInt64(v->offset + uint64_t(op.offset)), want, false);
    if (auto it = locals_.find(op.name_view()); it != locals_.end())
      return convert(b_.getInt64(it->second + uint64_t(op.offset)), want, false);
    if (Value* addr = symbol_address(op.name_view())) {
      Value* p = op.offset ? b_.CreateGEP(b_.getInt8Ty(), addr, b_.getInt64(uint64_t(op.offset))) : addr;
      return convert(b_.CreatePtrToInt(p, b_.getInt64Ty()), want, false);
    }
    unsupported(ins, "operand '" + std::string(op.name_view()) + "' is not a register or symbol the code generator knows");
  }
  case ptx::OperandKind::Int:
    if (want->isFloatingPointTy())
      return op.unsigned_literal ? ConstantFP::get(want, double(op.u)) : ConstantFP::get(want, double(op.i));
    return ConstantInt::get(want, op.u);
  case ptx::OperandKind::F32: {
    uint32_t bits = uint32_t(op.u);
    float f;
    std::memcpy(&f, &bits, 4);
    if (want->isFloatTy())
      return ConstantFP::get(want, APFloat(f));
    if (want->isDoubleTy())
      return ConstantFP::get(want, double(f));
    return ConstantInt::get(want, bits);
  }
  case ptx::OperandKind::F64: {
    double d;
    std::memcpy(&d, &op.u, 8);
    if (want->isFloatingPointTy())
      return ConstantFP::get(want, d);
    return ConstantInt::get(want, op.u);
  }
  case ptx::OperandKind::Decimal:
    if (want->isFloatingPointTy())
      return ConstantFP::get(want, op.d);
    return ConstantInt::get(want, uint64_t(int64_t(op.d)));
  default:
    unsupported(ins, "this operand form is not supported yet");
  }
}

void FunctionLowering::store(const ptx::Instruction& ins, const ptx::Operand& op, Value* v, bool sign_extend) {
  if (op.kind == ptx::OperandKind::Sink)
    return;
  if (op.kind != ptx::OperandKind::Name || op.component != ptx::Component::None)
    unsupported(ins, "the destination must be a register");
  Register* r = reg(op.name_view());
  if (!r)
    unsupported(ins, "destination '" + std::string(op.name_view()) + "' is not a declared register");
  if (r->type->isIntegerTy(1) && !v->getType()->isIntegerTy(1))
    v = b_.CreateICmpNE(v, Constant::getNullValue(v->getType()));
  b_.CreateStore(convert(v, r->type, sign_extend), r->storage);
}

Value* FunctionLowering::address(const ptx::Instruction& ins, const ptx::Operand& op, ptx::Modifier space) {
  if (op.kind != ptx::OperandKind::Address || op.count != 1)
    unsupported(ins, "this address form is not supported yet");
  const ptx::Operand& base = op.elems[0];
  Value* p = nullptr;
  if (base.kind == ptx::OperandKind::Name && base.component == ptx::Component::None) {
    if (Register* r = reg(base.name_view())) {
      Value* v = convert(b_.CreateLoad(r->type, r->storage), b_.getIntNTy(r->type->getPrimitiveSizeInBits() < 64 ? 32 : 64), false);
      v = b_.CreateZExt(v, b_.getInt64Ty());
      if (space == ptx::Modifier::SharedCluster) // a cluster of one block: its own window
        lowering_.facts[fn_].cluster = true;
      if (gpu())
        p = gpu_address(space, v);
      else if (space == ptx::Modifier::Shared || space == ptx::Modifier::SharedCta || space == ptx::Modifier::SharedCluster)
        p = b_.CreateGEP(b_.getInt8Ty(), shared_base(), v);
      else if (space == ptx::Modifier::Local)
        p = b_.CreateGEP(b_.getInt8Ty(), local_base(), v);
      else
        p = b_.CreateIntToPtr(v, b_.getPtrTy());
    } else if (Value* s = symbol_address(base.name_view())) {
      p = s;
    } else {
      unsupported(ins, "address '" + std::string(base.name_view()) + "' is not a register or symbol");
    }
  } else if (base.kind == ptx::OperandKind::Int) {
    p = gpu() ? gpu_address(space, b_.getInt64(base.u)) : b_.CreateIntToPtr(b_.getInt64(base.u), b_.getPtrTy());
  } else {
    unsupported(ins, "this address form is not supported yet");
  }
  if (base.offset)
    p = b_.CreateGEP(b_.getInt8Ty(), p, b_.getInt64(uint64_t(base.offset)));
  return p;
}

// ---------------------------------------------------------------- control flow

void FunctionLowering::collect_labels(const ptx::Block& block) {
  for (const ptx::Statement& s : block.statements) {
    if (s.kind == ptx::StatementKind::Label)
      labels_[s.text_view()] = BasicBlock::Create(ctx(), std::string(s.text_view()), fn_);
    else if (s.kind == ptx::StatementKind::BranchTargets)
      branch_tables_[s.labeled->label] = s.labeled->targets;
    else if (s.kind == ptx::StatementKind::Block)
      collect_labels(*s.block);
  }
}

BasicBlock* FunctionLowering::label(const ptx::Instruction& ins, std::string_view name) {
  auto it = labels_.find(name);
  if (it == labels_.end())
    unsupported(ins, "branch target '" + std::string(name) + "' is not a label of this function");
  return it->second;
}

void FunctionLowering::start_block_if_terminated() {
  if (b_.GetInsertBlock()->getTerminator())
    b_.SetInsertPoint(BasicBlock::Create(ctx(), "dead", fn_));
}

void FunctionLowering::note_block_facts(const ptx::Instruction& ins) {
  auto forget = [&](const ptx::Operand& op, auto& self) -> void {
    if (op.kind == ptx::OperandKind::Name)
      block_facts_.erase(op.name_view());
    else if (op.kind == ptx::OperandKind::Vector || op.kind == ptx::OperandKind::Pair ||
             op.kind == ptx::OperandKind::List)
      for (const ptx::Operand& e : op.children())
        self(e, self);
  };
  // The destination is the first operand; a call's results are among the others.
  for (size_t i = 0; i < ins.num_operands && (i == 0 || ins.opcode == ptx::Opcode::Call); ++i)
    forget(ins.operands[i], forget);
  if (!ins.guard.empty() || ins.num_operands == 0 || ins.operands[0].kind != ptx::OperandKind::Name ||
      instruction_type(ins) != ptx::Modifier::F32)
    return;
  std::string_view d = ins.operands[0].name_view();
  if (ins.opcode == ptx::Opcode::Mov && ins.num_operands == 2 && ins.operands[1].kind == ptx::OperandKind::F32)
    block_facts_[d].literal = std::bit_cast<float>(uint32_t(ins.operands[1].u));
  else if (ins.has(ptx::Modifier::Sat) &&
           (ins.opcode == ptx::Opcode::Cvt || ins.opcode == ptx::Opcode::Add || ins.opcode == ptx::Opcode::Sub ||
            ins.opcode == ptx::Opcode::Mul || ins.opcode == ptx::Opcode::Fma || ins.opcode == ptx::Opcode::Mad ||
            ins.opcode == ptx::Opcode::Min || ins.opcode == ptx::Opcode::Max))
    block_facts_[d].unit_interval = true;
}

std::optional<float> FunctionLowering::f32_literal(const ptx::Operand& op) const {
  if (op.kind == ptx::OperandKind::F32)
    return std::bit_cast<float>(uint32_t(op.u));
  if (op.kind == ptx::OperandKind::Name)
    if (auto it = block_facts_.find(op.name_view()); it != block_facts_.end())
      return it->second.literal;
  return std::nullopt;
}

bool FunctionLowering::in_unit_interval(const ptx::Operand& op) const {
  if (op.kind != ptx::OperandKind::Name || op.negated)
    return false;
  auto it = block_facts_.find(op.name_view());
  return it != block_facts_.end() && it->second.unit_interval;
}

void FunctionLowering::lower_block(const ptx::Block& block) {
  scopes_.emplace_back();
  for (const ptx::Statement& s : block.statements)
    if (s.kind == ptx::StatementKind::Var)
      declare(*s.var);
  for (size_t i = 0; i < block.statements.size(); ++i) {
    const ptx::Statement& s = block.statements[i];
    if (size_t chain = warp_chain_length(block, i)) {
      start_block_if_terminated();
      lower_warp_chain(block, i, chain);
      block_facts_.clear();
      i += chain - 1;
      continue;
    }
    switch (s.kind) {
    case ptx::StatementKind::Label: {
      block_facts_.clear();
      BasicBlock* target = labels_.at(s.text_view());
      if (!b_.GetInsertBlock()->getTerminator())
        b_.CreateBr(target);
      b_.SetInsertPoint(target);
      break;
    }
    case ptx::StatementKind::Instruction: {
      start_block_if_terminated();
      const ptx::Instruction& ins = *s.instruction;
      lowering_.current = &ins;
      if (!ins.guard.empty() && ins.opcode != ptx::Opcode::Bra) {
        Register* g = reg(ins.guard);
        if (!g || !g->type->isIntegerTy(1))
          unsupported(ins, "guard '" + std::string(ins.guard) + "' is not a predicate register");
        Value* cond = b_.CreateLoad(g->type, g->storage);
        if (ins.guard_negated)
          cond = b_.CreateNot(cond);
        BasicBlock* then = BasicBlock::Create(ctx(), "guarded", fn_);
        BasicBlock* after = BasicBlock::Create(ctx(), "after", fn_);
        b_.CreateCondBr(cond, then, after);
        b_.SetInsertPoint(then);
        lower_instruction(ins);
        if (!b_.GetInsertBlock()->getTerminator())
          b_.CreateBr(after);
        b_.SetInsertPoint(after);
      } else {
        lower_instruction(ins);
      }
      note_block_facts(ins);
      break;
    }
    case ptx::StatementKind::Block:
      start_block_if_terminated();
      block_facts_.clear();
      lower_block(*s.block);
      block_facts_.clear();
      break;
    case ptx::StatementKind::Var:
      if (s.var->space == ptx::Modifier::Param) { // a call sequence's parameter or return value
        IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
        size_t bytes = std::max<size_t>(ptx::declared_size(*s.var), 1);
        AllocaInst* a = entry.CreateAlloca(ArrayType::get(b_.getInt8Ty(), bytes), nullptr, std::string(s.var->name));
        a->setAlignment(Align(std::max<size_t>(16, runtime::declared_align(*s.var))));
        scopes_.back().params[s.var->name] = a;
        break;
      }
      // .shared variables are in the kernel's shared layout (runtime::KernelInfo::shared),
      // .local ones in the thread's frame (layout_locals).
      if (s.var->space == ptx::Modifier::Shared && info_.shared_var(s.var->name))
        break;
      if (s.var->space == ptx::Modifier::Local && locals_.count(s.var->name))
        break;
      if (s.var->space != ptx::Modifier::Reg)
        throw LoweringError{"line " + std::to_string(s.loc.line) + ": ." + ptx::modifier_text(s.var->space) +
                            " variables in a function body are not supported yet"};
      break;
    case ptx::StatementKind::Pragma:
    case ptx::StatementKind::Loc:
    case ptx::StatementKind::BranchTargets: // read by collect_labels for brx.idx
    case ptx::StatementKind::CallTargets:   // hints for indirect calls: any address is called
    case ptx::StatementKind::CallPrototype:
      break;
    default:
      throw LoweringError{"line " + std::to_string(s.loc.line) + ": this directive is not supported yet"};
    }
  }
  scopes_.pop_back();
}

Function* FunctionLowering::run() {
  for (size_t i = 0; i < info_.params.size(); ++i)
    kernel_params_[f_.params[i].name] = info_.params[i].offset;
  layout_locals(*f_.body);
  if (gpu())
    return run_gpu();
  Type* i32 = Type::getInt32Ty(ctx());
  Type* ptr = PointerType::get(ctx(), 0);
  FunctionType* type = FunctionType::get(Type::getVoidTy(ctx()), {ptr, ptr, i32, i32, i32}, false);
  fn_ = Function::Create(type, GlobalValue::ExternalLinkage, "mimic_kernel_" + std::to_string(index_), lowering_.module());
  lowering_.facts[fn_].frame = 0;
  params_ = fn_->getArg(0);
  block_ = fn_->getArg(1);
  lowering_.facts[fn_].block = fn_->getArg(1);
  Value* begin = fn_->getArg(2);
  Value* end = fn_->getArg(3);
  Value* resume = fn_->getArg(4);
  params_->setName("params");
  block_->setName("block");
  // The parameter buffer is read-only and nothing else points into it; it and the block
  // state are whole (the executor's own memory, at least 8-byte aligned):
  // their invariant loads may be hoisted out of conditional code in the thread loop.
  fn_->addParamAttr(0, Attribute::NoAlias);
  fn_->addParamAttr(0, Attribute::ReadOnly);
  if (info_.param_bytes)
    fn_->addDereferenceableParamAttr(0, info_.param_bytes);
  fn_->addParamAttr(0, Attribute::getWithAlignment(ctx(), Align(8)));
  fn_->addDereferenceableParamAttr(1, sizeof(BlockState));
  fn_->addParamAttr(1, Attribute::getWithAlignment(ctx(), Align(8)));
  // Where loads from the shared window may be read ahead (codegen/uniform_loads.h).
  fn_->addFnAttr(kStaticSharedAttribute, std::to_string(info_.static_shared_bytes));
  begin->setName("begin");
  end->setName("end");
  resume->setName("resume");
  warp_chunks_ = computes_warps_from_tid(*f_.body);
  plan_warp_chains(*f_.body);
  plan_loop_prefetches(*f_.body);
  // entry -> head: t < end ? dispatch : done; dispatch: switch (resume) to the body or a
  // resume point; every stop goes to latch: ++t, back to head.
  BasicBlock* entry = BasicBlock::Create(ctx(), "entry", fn_);
  BasicBlock* rows = BasicBlock::Create(ctx(), "rows", fn_);
  BasicBlock* head = BasicBlock::Create(ctx(), "head", fn_);
  BasicBlock* next_row = BasicBlock::Create(ctx(), "next_row", fn_);
  BasicBlock* dispatch = BasicBlock::Create(ctx(), "dispatch", fn_);
  BasicBlock* done = BasicBlock::Create(ctx(), "done", fn_);
  done_ = done;
  latch_ = BasicBlock::Create(ctx(), "latch", fn_);
  body_ = BasicBlock::Create(ctx(), "body", fn_);
  b_.SetInsertPoint(entry);
  thread_ = b_.CreateAlloca(i32, nullptr, "thread");
  row_end_ = b_.CreateAlloca(i32, nullptr, "row_end");
  row_base_ = b_.CreateAlloca(i32, nullptr, "row_base");
  tid_y_ = b_.CreateAlloca(i32, nullptr, "tid_y");
  tid_z_ = b_.CreateAlloca(i32, nullptr, "tid_z");
  b_.CreateStore(begin, thread_);
  // entry -> chains: switch (resume) to the warp chains to compute first (warp_chain.cpp)
  // -> enter -> rows.
  BasicBlock* chains = BasicBlock::Create(ctx(), "chains", fn_);
  enter_ = BasicBlock::Create(ctx(), "enter", fn_);
  b_.CreateBr(chains);
  b_.SetInsertPoint(chains);
  chain_dispatch_ = b_.CreateSwitch(resume, enter_);
  b_.SetInsertPoint(enter_);
  b_.CreateBr(rows);
  b_.SetInsertPoint(rows);
  emit_row_setup(b_, head);
  b_.SetInsertPoint(head);
  b_.CreateCondBr(b_.CreateICmpULT(thread_index(), b_.CreateLoad(i32, row_end_)), dispatch, next_row);
  b_.SetInsertPoint(next_row);
  b_.CreateCondBr(b_.CreateICmpULT(b_.CreateLoad(i32, row_end_), end), rows, done);
  one_head_ = head;
  one_next_row_ = next_row;
  b_.SetInsertPoint(dispatch);
  dispatch_ = b_.CreateSwitch(resume, done);
  dispatch_->addCase(b_.getInt32(kResumeStart), body_);
  b_.SetInsertPoint(done);
  b_.CreateRetVoid();
  b_.SetInsertPoint(latch_);
  b_.CreateStore(b_.CreateAdd(thread_index(), b_.getInt32(1)), thread_);
  BranchInst* back = b_.CreateBr(head);
  back->setMetadata(kThreadLatchMetadata, MDNode::get(ctx(), {}));
  mark_thread_loop(back);

  b_.SetInsertPoint(body_);
  collect_labels(*f_.body);
  lower_block(*f_.body);
  // Falling off the end, and blocks left open (labels at the end), end the thread.
  for (BasicBlock& bb : *fn_)
    if (!bb.getTerminator()) {
      b_.SetInsertPoint(&bb);
      stop_thread(kThreadExited);
    }
  const auto& facts = lowering_.facts[fn_];
  calls = !facts.callees.empty() || facts.indirect;
  insert_spills();
  split_thread_loop(end);
  chain_in_step();
  plain_exit = drop_exit_markers();
  return fn_;
}

// A kernel whose threads can only run to their end in one call (no split point, no trap,
// assertion or memory check, no call of a function that may end the thread) need not say
// where they stopped: its stores of next[t] = exited go, and the executor neither clears
// nor reads next[] for it (LoweredKernel::plain_exit). A 256-thread block of STREAM triad
// otherwise writes, clears and scans 1 KB of next[] beside 3 KB of data (8% of its time).
bool FunctionLowering::drop_exit_markers() {
  const auto& facts = lowering_.facts[fn_];
  if (!splits.empty() || !facts.callees.empty() || facts.indirect)
    return false;
  for (StoreInst* marker : stop_markers_) {
    auto* code = dyn_cast<ConstantInt>(marker->getValueOperand());
    if (!code || code->getZExtValue() != kThreadExited)
      return false;
  }
  for (StoreInst* marker : stop_markers_)
    marker->eraseFromParent();
  stop_markers_.clear();
  return true;
}

// Whether a body computes a warp or lane number from %tid.x: `shr r, t, 5`, `div r, t, 32`,
// `and r, t, 31` or `rem r, t, 32` of a register t moved from %tid.x (as nvcc writes
// threadIdx.x / 32 and threadIdx.x % 32).
static bool computes_warps_from_tid(const ptx::Block& body) {
  std::set<std::string_view> tid;
  auto is_int = [](const ptx::Operand& o, int64_t v) { return o.kind == ptx::OperandKind::Int && o.i == v; };
  auto is_tid = [&](const ptx::Operand& o) { return o.is_name() && tid.count(o.name_view()); };
  ptx::any_instruction(body, [&](const ptx::Instruction& ins) {
    const ptx::Operand* op = ins.operands;
    if (ins.opcode == ptx::Opcode::Mov && ins.num_operands >= 2 && op[0].is_name() && op[1].is_name() &&
        op[1].name_view() == "%tid" && op[1].component == ptx::Component::X)
      tid.insert(op[0].name_view());
    return false;
  });
  return !tid.empty() && ptx::any_instruction(body, [&](const ptx::Instruction& ins) {
    if (ins.num_operands != 3)
      return false;
    const ptx::Operand* op = ins.operands;
    switch (ins.opcode) {
    case ptx::Opcode::Shr:
      return is_tid(op[1]) && is_int(op[2], 5);
    case ptx::Opcode::Div:
    case ptx::Opcode::Rem:
      return is_tid(op[1]) && is_int(op[2], 32);
    case ptx::Opcode::And:
      return (is_tid(op[1]) && is_int(op[2], 31)) || (is_tid(op[2]) && is_int(op[1], 31));
    default:
      return false;
    }
  });
}

// A call runs threads [begin, end) of a block, which may span rows (same %tid.y and
// %tid.z); the thread loop goes row by row, so that %tid.x = t - row_base is affine in
// the loop's index and the row's values are invariant in it. The row's values are also
// published in the block state for functions that are not inlined (they read %tid
// through @mimic.sreg). They are tagged !mimic.row (codegen/spill_remat.h).
void FunctionLowering::emit_row_setup(IRBuilder<>& b, BasicBlock* head, bool whole_rows) {
  Type* i32 = b.getInt32Ty();
  auto field = [&](size_t offset) { return block_field(b, offset, i32); };
  Value* nx = field(offsetof(BlockState, block_dim));
  Value* ny = field(offsetof(BlockState, block_dim) + 4);
  Value* first = b.CreateLoad(i32, thread_);
  // In the copy for whole rows, the row's first thread is below 1024 (a block's most), and
  // saying so lets SCEV see that base + nx does not wrap, hence the loop's constant trip
  // count; the flags on the add are not enough (SCEV's expander drops them where it
  // reuses the add).
  if (whole_rows)
    first = b.CreateAnd(first, b.getInt32(kMaxBlockThreads - 1), "first_below_1024");
  auto tag = [&](Value* v, unsigned kind) {
    if (auto* i = dyn_cast<Instruction>(v))
      i->setMetadata(kRowMetadata, MDNode::get(ctx(), {ConstantAsMetadata::get(b.getInt32(kind))}));
    return v;
  };
  Value* row = b.CreateUDiv(first, nx);
  Value* base = tag(b.CreateMul(row, nx), 0);
  Value* y = tag(b.CreateURem(row, ny), 1);
  Value* z = tag(b.CreateUDiv(row, ny), 2);
  Value* end = fn_->getArg(3);
  // Every row whole (copy_full_rows): the loop goes from base to base + nx, which cannot
  // wrap (a block has at most 1024 threads). The sum without the flags is not built at
  // all: CSE would merge the two and keep the flags neither has.
  Value* row_end = whole_rows ? nullptr : b.CreateAdd(base, nx);
  Value* clamped = whole_rows ? b.CreateAdd(base, nx, "whole_row_end", /*HasNUW=*/true, /*HasNSW=*/true)
                              : b.CreateSelect(b.CreateICmpULT(row_end, end), row_end, end);
  if (whole_rows)
    b.CreateStore(base, thread_);
  if (warp_chunks_) {
    // The row's threads may go in pieces of 32 %tid.x values, where WarpIndices finds
    // that worth it (codegen/warp_indices.h): the piece's warp, its end, and the row's.
    auto mark = [&](Value* v, unsigned kind) {
      cast<Instruction>(v)->setMetadata(kWarpMetadata, MDNode::get(ctx(), {ConstantAsMetadata::get(b.getInt32(kind))}));
    };
    Value* warp = b.CreateLShr(b.CreateSub(first, base), 5);
    Value* piece_end = b.CreateAdd(base, b.CreateShl(b.CreateAdd(warp, b.getInt32(1)), 5));
    mark(warp, kPieceWarp);
    mark(b.CreateSelect(b.CreateICmpULT(piece_end, clamped), piece_end, clamped), kPieceEnd);
    mark(clamped, kRowEnd);
  }
  b.CreateStore(clamped, row_end_);
  b.CreateStore(base, row_base_);
  b.CreateStore(y, tid_y_);
  b.CreateStore(z, tid_z_);
  auto publish = [&](SpecialRegister r, Value* v) {
    b.CreateStore(v, b.CreateConstInBoundsGEP1_64(i32, block_, uint64_t(r)));
  };
  publish(SpecialRegister::RowBase, base);
  publish(SpecialRegister::TidY, y);
  publish(SpecialRegister::TidZ, z);
  b.CreateBr(head);
}

// One thread loop per resume point instead of one loop that dispatches on the resume point
// for every thread: each entry's loop holds a copy of the code reachable from it up to the
// next stops (where its threads stop, they go to its latch). The code between two barriers
// becomes a plain loop over the threads, which LLVM can vectorise, with no switch in it.
// The copies together are about the size of the original when the split points divide the
// kernel into regions, as they do.
void FunctionLowering::split_thread_loop(Value* end) {
  if (dispatch_->getNumCases() < 2) { // one entry: the loop is that entry's already
    // It too gets a copy for calls of the whole block where a kernel reads %tid.y or
    // %tid.z (copy_full_rows): a 2-D kernel without barriers.
    if (gets_full_rows() && !inlined_waiting_call_) {
      BasicBlock* dispatch = dispatch_->getParent();
      std::vector<BasicBlock*> blocks{dispatch};
      SmallPtrSet<BasicBlock*, 32> seen{dispatch};
      for (size_t k = 0; k < blocks.size(); ++k)
        for (BasicBlock* s : successors(blocks[k]))
          if (s != latch_ && s != dispatch_->getDefaultDest() && seen.insert(s).second)
            blocks.push_back(s);
      BasicBlock* pick = BasicBlock::Create(ctx(), "pick_rows", fn_);
      Instruction* br = enter_->getTerminator();
      BasicBlock* rows = br->getSuccessor(0);
      br->setSuccessor(0, pick);
      copy_full_rows("", pick, rows, one_head_, latch_, blocks, one_next_row_, dispatch_->getDefaultDest());
    }
    return;
  }
  // Kernels with functions inlined because they wait (device-debug builds) keep the one
  // loop: split, they loop forever (tests/cuda's -G variants of warp_shfl and cg_tiles; a
  // -G kernel calling a function with a shuffle in a loop), a fault not found yet. At O3
  // the one-loop form of such a kernel hangs too, so some per-thread state of inlined
  // calls seems to survive a split only by accident. Debug builds matter least for speed.
  if (inlined_waiting_call_)
    return;
  BasicBlock* done = dispatch_->getDefaultDest();
  Value* resume = fn_->getArg(4);
  std::vector<std::pair<ConstantInt*, BasicBlock*>> cases;
  for (auto c : dispatch_->cases())
    cases.push_back({c.getCaseValue(), c.getCaseSuccessor()});
  SwitchInst* top = nullptr;
  // The blocks a thread entering at each resume point runs before it stops.
  std::vector<std::vector<BasicBlock*>> regions;
  std::vector<SmallPtrSet<BasicBlock*, 32>> members;
  size_t copied = 0, original = 0;
  for (BasicBlock& bb : *fn_)
    original += bb.size();
  for (auto [value, start] : cases) {
    std::vector<BasicBlock*>& region = regions.emplace_back();
    SmallPtrSet<BasicBlock*, 32>& seen = members.emplace_back();
    std::vector<BasicBlock*> work{start};
    seen.insert(start);
    while (!work.empty()) {
      BasicBlock* bb = work.back();
      work.pop_back();
      region.push_back(bb);
      copied += bb->size();
      for (BasicBlock* s : successors(bb))
        if (s != latch_ && seen.insert(s).second)
          work.push_back(s);
    }
  }
  // Where split points sit inside loops, each region runs on around the loop and through
  // the rest of the kernel: the copies would multiply the code (and the compile time, by 4
  // on bench/kernels). Such kernels keep the one loop.
  if (copied > original + original / 2)
    return;
  // A block of one region moves into that region's loop rather than being copied (copying
  // and then deleting the originals was a fifth of the lowering of bitonic's kernel of
  // 35,000 instructions), where no block outside the region but the dispatch, which goes,
  // branches to it.
  BasicBlock* dispatch = dispatch_->getParent();
  DenseMap<BasicBlock*, unsigned> regions_of;
  for (const std::vector<BasicBlock*>& region : regions)
    for (BasicBlock* bb : region)
      ++regions_of[bb];
  // (Where the exit or the entry is in a region, everything is copied, as it was.)
  const bool may_move = !regions_of.count(done) && !regions_of.count(enter_) && !regions_of.count(dispatch);
  SmallPtrSet<BasicBlock*, 32> moving;
  for (size_t c = 0; c < regions.size() && may_move; ++c)
    for (BasicBlock* bb : regions[c])
      if (regions_of[bb] == 1 &&
          llvm::all_of(predecessors(bb), [&](BasicBlock* p) { return p == dispatch || members[c].count(p); }))
        moving.insert(bb);
  {
    Instruction* br = enter_->getTerminator();
    IRBuilder<> b(br);
    top = b.CreateSwitch(resume, done, unsigned(cases.size()));
    br->eraseFromParent();
  }
  for (size_t c = 0; c < cases.size(); ++c) {
    auto [value, start] = cases[c];
    const std::vector<BasicBlock*>& region = regions[c];
    const SmallPtrSet<BasicBlock*, 32>& seen = members[c];
    std::string tag = std::to_string(value->getZExtValue());
    BasicBlock* head = BasicBlock::Create(ctx(), "threads" + tag, fn_);
    BasicBlock* latch = BasicBlock::Create(ctx(), "next_thread" + tag, fn_);
    // Before the blocks that move go to the new latch.
    const unsigned stop = single_stop(region);
    const std::optional<StopPair> pair = stop ? std::nullopt : two_stops(region);
    ValueToValueMapTy map;
    map[latch_] = latch;
    std::vector<BasicBlock*> copies; // the loop's blocks: copies, and the blocks that move
    for (BasicBlock* bb : region) {
      if (moving.count(bb)) {
        bb->moveAfter(&fn_->back()); // where its copy would have gone
        copies.push_back(bb);
        continue;
      }
      BasicBlock* copy = CloneBasicBlock(bb, map, "." + tag, fn_);
      map[bb] = copy;
      copies.push_back(copy);
    }
    remapInstructionsInBlocks(copies, map);
    // φ-nodes keep only the edges of this copy.
    for (BasicBlock* copy : copies)
      for (PHINode& phi : make_early_inc_range(copy->phis()))
        for (unsigned i = phi.getNumIncomingValues(); i-- > 0;)
          if (!seen.count(phi.getIncomingBlock(i)) && !llvm::is_contained(copies, phi.getIncomingBlock(i)))
            phi.removeIncomingValue(i, false);
    BasicBlock* rows = BasicBlock::Create(ctx(), "rows" + tag, fn_);
    BasicBlock* next_row = BasicBlock::Create(ctx(), "next_row" + tag, fn_);
    BasicBlock* loop_entry = rows;
    // Calls of the whole block (every row whole) take a copy of the loop (copy_full_rows),
    // in kernels written for blocks of several rows (they read %tid.y or %tid.z): the copy
    // of a kernel of one-row blocks would be dead code that its first compile still
    // optimised (scan's three kernels 143-147 -> 185-216 ms cold).
    BasicBlock* pick = gets_full_rows() ? BasicBlock::Create(ctx(), "pick_rows" + tag, fn_) : nullptr;
    if (pick)
      loop_entry = pick;
    IRBuilder<> b(rows);
    emit_row_setup(b, head);
    b.SetInsertPoint(head);
    b.CreateCondBr(b.CreateICmpULT(b.CreateLoad(b.getInt32Ty(), thread_), b.CreateLoad(b.getInt32Ty(), row_end_)),
                   moving.count(start) ? start : cast<BasicBlock>(map[start]), next_row);
    b.SetInsertPoint(next_row);
    b.CreateCondBr(b.CreateICmpULT(b.CreateLoad(b.getInt32Ty(), row_end_), end), rows, done);
    if (stop) {
      loop_stops_[next_row] = stop;
      collect_lazy_stop(next_row, stop, region, map, moving);
    } else if (pair && count_stops(*pair, next_row, region, map, moving)) {
      // The counts start from zero where the loop is entered (from the dispatch or the
      // chain), not at each row.
      BasicBlock* counted = BasicBlock::Create(ctx(), "count_stops" + tag, fn_);
      IRBuilder<> cb(counted);
      cb.CreateStore(cb.getInt32(0), stop_count_);
      cb.CreateStore(cb.getInt32(0), stop_sum_);
      cb.CreateBr(pick ? pick : rows);
      loop_entry = counted;
    }
    b.SetInsertPoint(latch);
    b.CreateStore(b.CreateAdd(b.CreateLoad(b.getInt32Ty(), thread_), b.getInt32(1)), thread_);
    BranchInst* back = b.CreateBr(head);
    back->setMetadata(kThreadLatchMetadata, MDNode::get(ctx(), {}));
    mark_thread_loop(back);
    top->addCase(value, loop_entry);
    if (pick)
      copy_full_rows(tag, pick, rows, head, latch, copies, next_row, done);
  }
  // The shared loop is unreachable now. Its blocks that were copied, and the dispatch, lose
  // their branches first: the φ-nodes of the blocks that moved no longer list them.
  auto cut = [&](BasicBlock* bb) {
    bb->getTerminator()->eraseFromParent();
    new UnreachableInst(ctx(), bb);
  };
  if (may_move) {
    for (const auto& [bb, n] : regions_of)
      if (!moving.count(bb))
        cut(bb);
    cut(dispatch);
  }
  dispatch_ = nullptr;
  removeUnreachableBlocks(*fn_);
}

bool full_rows_enabled() {
  return config::switched_on("MIMIC_FULL_ROWS");
}

// Whether the thread loops get copies for whole rows (copy_full_rows): in kernels written
// for blocks of several rows (they read %tid.y or %tid.z), whose rows do not go in warp
// pieces (codegen/warp_indices.h).
bool FunctionLowering::gets_full_rows() const {
  return full_rows_enabled() && reads_rows_ && !warp_chunks_;
}

// A copy of a thread loop and its rows for a call of the whole block of several rows,
// where every row is whole (FullRows): each row's loop goes from its first thread to
// first + ntid.x. Where the block's shape is known (codegen/block_shape.h), that is a
// constant trip count: the vectoriser needs no remainder and no run-time checks of the
// row's indices (one worker, 1 MiB in cache: stencil 263 -> 214 us, transpose 145 ->
// 110-117, sgemm 2205 -> 1404-1524). `pick` (entered where the loop is) chooses; the copy
// of `rows`' set-up, `head`, `blocks` and `latch` leaves through a copy of `exit` (the
// loop's next_row) to `done`, and the chain learns of that exit what it knows of `exit`.
void FunctionLowering::copy_full_rows(const std::string& tag, BasicBlock* pick, BasicBlock* rows, BasicBlock* head,
                                      BasicBlock* latch, const std::vector<BasicBlock*>& blocks, BasicBlock* exit,
                                      BasicBlock* done) {
  Type* i32 = b_.getInt32Ty();
  Value* end = fn_->getArg(3);
  BasicBlock* full_rows = BasicBlock::Create(ctx(), "full_rows" + tag, fn_);
  BasicBlock* full_next = BasicBlock::Create(ctx(), "full_next_row" + tag, fn_);
  BasicBlock* full_head = BasicBlock::Create(ctx(), "full_threads" + tag, fn_);
  IRBuilder<> b(pick);
  Value* nx = block_field(b, offsetof(BlockState, block_dim), i32);
  Value* n = block_field(b, offsetof(BlockState, nthreads), i32);
  Value* whole = b.CreateAnd({b.CreateICmpEQ(b.CreateLoad(i32, thread_), b.getInt32(0)), b.CreateICmpEQ(end, n),
                              b.CreateICmpUGT(n, nx)});
  b.CreateCondBr(whole, full_rows, rows);
  b.SetInsertPoint(full_rows);
  emit_row_setup(b, full_head, /*whole_rows=*/true);
  b.SetInsertPoint(full_next);
  b.CreateCondBr(b.CreateICmpULT(b.CreateLoad(i32, row_end_), end), full_rows, done);
  ValueToValueMapTy map;
  map[exit] = full_next;
  std::vector<BasicBlock*> copies;
  BasicBlock* head_copy = CloneBasicBlock(head, map, ".full", fn_);
  full_head->splice(full_head->end(), head_copy);
  head_copy->eraseFromParent();
  map[head] = full_head;
  copies.push_back(full_head);
  for (BasicBlock* bb : blocks) {
    BasicBlock* copy = CloneBasicBlock(bb, map, ".full", fn_);
    map[bb] = copy;
    copies.push_back(copy);
  }
  BasicBlock* latch_copy = CloneBasicBlock(latch, map, ".full", fn_);
  map[latch] = latch_copy;
  copies.push_back(latch_copy);
  remapInstructionsInBlocks(copies, map);
  mark_thread_loop(latch_copy->getTerminator());
  if (edge_threads_enabled()) {
    // LLVM's peeling leaves the copy alone (it peels as many iterations as it may, for it):
    // the code only a row's first or last thread runs moves after the loop instead, which
    // keeps the loop's trip count (codegen/edge_threads.h).
    Instruction* back = latch_copy->getTerminator();
    SmallVector<Metadata*, 4> ops{nullptr};
    MDNode* id = back->getMetadata(LLVMContext::MD_loop);
    for (unsigned k = 1; k < id->getNumOperands(); ++k)
      ops.push_back(id->getOperand(k));
    ops.push_back(MDNode::get(ctx(), {MDString::get(ctx(), "llvm.loop.peeled.count"),
                                      ConstantAsMetadata::get(b.getInt32(kMaxBlockThreads))}));
    MDNode* with = MDNode::getDistinct(ctx(), ops);
    with->replaceOperandWith(0, with);
    back->setMetadata(LLVMContext::MD_loop, with);
  }
  // The copies of the stops' stores are stops' stores too (drop_exit_markers, LazyStop).
  for (SmallPtrSet<StoreInst*, 16>* stores : {&stop_markers_, &wait_stores_}) {
    SmallVector<StoreInst*, 16> copied;
    for (StoreInst* store : *stores)
      if (auto it = map.find(store); it != map.end())
        copied.push_back(cast<StoreInst>(&*it->second));
    stores->insert(copied.begin(), copied.end());
  }
  // What the chain knows of the loop's exit it knows of the copy's.
  if (auto it = loop_stops_.find(exit); it != loop_stops_.end())
    loop_stops_[full_next] = it->second;
  if (auto it = stop_pairs_.find(exit); it != stop_pairs_.end())
    stop_pairs_[full_next] = it->second;
  if (auto it = lazy_stops_.find(exit); it != lazy_stops_.end()) {
    LazyStop lazy = it->second;
    for (StoreInst*& store : lazy.stores)
      store = cast<StoreInst>(&*map[store]);
    lazy_stops_[full_next] = std::move(lazy);
  }
}

// A thread stops where stop_thread left it: the store of its code into next[t] and a
// branch to the latch. The codes the loop over `region` stops its threads with, when each
// is a split point whose word split_words_ knows or the thread's end, and no other block
// goes to the latch (a call whose callee ended the thread does, without a store); nothing
// otherwise.
std::optional<SmallVector<unsigned, 2>> FunctionLowering::stop_codes(const std::vector<BasicBlock*>& region) const {
  SmallVector<unsigned, 2> codes;
  for (BasicBlock* bb : region) {
    if (!is_contained(successors(bb), latch_))
      continue;
    auto* br = dyn_cast<BranchInst>(bb->getTerminator());
    auto* marker = dyn_cast_or_null<StoreInst>(br ? br->getPrevNode() : nullptr);
    auto* code = marker && stop_markers_.count(marker) ? dyn_cast<ConstantInt>(marker->getValueOperand()) : nullptr;
    if (!br || br->isConditional() || !code)
      return std::nullopt;
    const uint64_t k = code->getZExtValue();
    if (k != kThreadExited && (k == 0 || k > splits.size() || !split_words_[k - 1]))
      return std::nullopt;
    if (!is_contained(codes, unsigned(k)))
      codes.push_back(unsigned(k));
  }
  return codes;
}

// The loop's one stop (every thread ending counts: the chain says so), or 0.
unsigned FunctionLowering::single_stop(const std::vector<BasicBlock*>& region) const {
  std::optional<SmallVector<unsigned, 2>> codes = stop_codes(region);
  return codes && codes->size() == 1 ? codes->front() : 0;
}

static void vectorise_by(BranchInst* back, unsigned width);

bool stop_counts_enabled() {
  return config::switched_on("MIMIC_STOP_COUNTS");
}

// The loop's two stops (StopPair), where it has two (stop_codes) and no block of the
// region is in a cycle (the counts would
// be values carried from thread to thread, which keeps an inner loop from being
// interchanged: thread_interchange.cpp).
std::optional<FunctionLowering::StopPair> FunctionLowering::two_stops(const std::vector<BasicBlock*>& region) const {
  if (!stop_counts_enabled())
    return std::nullopt;
  std::optional<SmallVector<unsigned, 2>> codes = stop_codes(region);
  if (!codes || codes->size() != 2)
    return std::nullopt;
  // A cycle: a block reached again from itself without leaving the region.
  SmallPtrSet<BasicBlock*, 32> in_region(region.begin(), region.end());
  DenseMap<BasicBlock*, int> state; // 1: on the path, 2: done
  std::function<bool(BasicBlock*)> cyclic = [&](BasicBlock* bb) {
    state[bb] = 1;
    for (BasicBlock* s : successors(bb)) {
      if (!in_region.count(s))
        continue;
      int seen = state.lookup(s);
      if (seen == 1 || (seen == 0 && cyclic(s)))
        return true;
    }
    state[bb] = 2;
    return false;
  };
  for (BasicBlock* bb : region)
    if (!state.lookup(bb) && cyclic(bb))
      return std::nullopt;
  auto word = [&](unsigned k) { return k == kThreadExited ? nullptr : split_words_[k - 1]; };
  return StopPair{(*codes)[0], (*codes)[1], word((*codes)[0]), word((*codes)[1])};
}

// Each thread of the loop that stops at pair.first adds one to stop_count_ and its index to
// stop_sum_ (at the loop's copies of the markers of `region`). False, changing nothing,
// where a marker's copy is not found.
bool FunctionLowering::count_stops(const StopPair& pair, BasicBlock* exit, const std::vector<BasicBlock*>& region,
                                   const ValueToValueMapTy& map, const SmallPtrSetImpl<BasicBlock*>& moving) {
  Type* i32 = b_.getInt32Ty();
  SmallPtrSet<BasicBlock*, 32> in_region(region.begin(), region.end());
  SmallVector<StoreInst*, 8> counted;
  for (StoreInst* marker : stop_markers_) {
    if (!in_region.count(marker->getParent()))
      continue;
    auto* code = dyn_cast<ConstantInt>(marker->getValueOperand());
    if (!code || code->getZExtValue() != pair.first)
      continue;
    StoreInst* copy = nullptr;
    if (moving.count(marker->getParent()))
      copy = marker;
    else if (auto it = map.find(marker); it != map.end())
      copy = dyn_cast<StoreInst>(&*it->second);
    if (!copy)
      return false;
    counted.push_back(copy);
  }
  if (counted.empty())
    return false;
  if (!stop_count_) {
    IRBuilder<> eb(&*fn_->getEntryBlock().getFirstInsertionPt());
    stop_count_ = eb.CreateAlloca(i32, nullptr, "stop_count");
    stop_sum_ = eb.CreateAlloca(i32, nullptr, "stop_sum");
    // Read by the chain after any loop; zero where the loop that ran counted nothing.
    eb.CreateStore(eb.getInt32(0), stop_count_);
    eb.CreateStore(eb.getInt32(0), stop_sum_);
  }
  for (StoreInst* copy : counted) {
    IRBuilder<> cb(copy);
    Value* t = cb.CreateLoad(i32, thread_);
    cb.CreateStore(cb.CreateAdd(cb.CreateLoad(i32, stop_count_), cb.getInt32(1)), stop_count_);
    cb.CreateStore(cb.CreateAdd(cb.CreateLoad(i32, stop_sum_), t), stop_sum_);
  }
  stop_pairs_[exit] = pair;
  return true;
}

bool lazy_stops_enabled() {
  return config::switched_on("MIMIC_LAZY_STOPS");
}

// The stores of a loop's one stop that the chain may leave out (LazyStop): the loop's
// copies of stop_thread's markers and of publish_wait's words, where every word it
// publishes is the stop's own. Not in kernels that call functions: a call reads next[t]
// to see whether its callee ended the thread.
void FunctionLowering::collect_lazy_stop(BasicBlock* exit, unsigned stop, const std::vector<BasicBlock*>& region,
                                         const ValueToValueMapTy& map, const SmallPtrSetImpl<BasicBlock*>& moving) {
  const auto& facts = lowering_.facts[fn_];
  if (!lazy_stops_enabled() || !facts.callees.empty() || facts.indirect)
    return;
  LazyStop lazy{stop == kThreadExited ? nullptr : split_words_[stop - 1], {}};
  if (stop != kThreadExited && !lazy.word)
    return;
  SmallPtrSet<BasicBlock*, 32> in_region(region.begin(), region.end());
  auto copy_of = [&](StoreInst* original) -> StoreInst* {
    if (moving.count(original->getParent()))
      return original;
    auto it = map.find(original);
    return it == map.end() ? nullptr : dyn_cast<StoreInst>(&*it->second);
  };
  for (StoreInst* marker : stop_markers_)
    if (in_region.count(marker->getParent())) {
      StoreInst* copy = copy_of(marker);
      if (!copy)
        return;
      lazy.stores.push_back(copy);
    }
  for (StoreInst* wait : wait_stores_)
    if (in_region.count(wait->getParent())) {
      StoreInst* copy = copy_of(wait);
      if (!copy || !lazy.word || copy->getValueOperand() != lazy.word)
        return;
      lazy.stores.push_back(copy);
    }
  lazy_stops_[exit] = std::move(lazy);
}

// From `at` on: next[t] = stop (and barrier[t] = word, unless null) for the call's threads
// [begin, end), then a branch to `then`; `b` is left in the loop's exit block.
void FunctionLowering::fill_stops(IRBuilder<>& b, BasicBlock* at, Value* stop, Value* word, BasicBlock* then) {
  Type* i32 = b.getInt32Ty();
  Value* begin = fn_->getArg(2);
  Value* end = fn_->getArg(3);
  BasicBlock* loop = BasicBlock::Create(ctx(), "chain_fill_stops", fn_);
  BasicBlock* tail = BasicBlock::Create(ctx(), "chain_fill_stops_end", fn_);
  b.SetInsertPoint(at);
  Value* next = block_field(b, offsetof(BlockState, next), b.getPtrTy());
  Value* words = word ? block_field(b, offsetof(BlockState, barrier), b.getPtrTy()) : nullptr;
  b.CreateCondBr(b.CreateICmpULT(begin, end), loop, then);
  b.SetInsertPoint(loop);
  PHINode* t = b.CreatePHI(i32, 2, "t");
  t->addIncoming(begin, at);
  Value* index = b.CreateZExt(t, b.getInt64Ty());
  b.CreateStore(stop, b.CreateGEP(i32, next, index));
  if (words)
    b.CreateStore(word, b.CreateGEP(i32, words, index));
  Value* t_next = b.CreateAdd(t, b.getInt32(1));
  t->addIncoming(t_next, loop);
  vectorise_by(b.CreateCondBr(b.CreateICmpULT(t_next, end), loop, tail), 8);
  b.SetInsertPoint(tail);
  b.CreateBr(then);
}

// Releases threads [lo, hi), whole warps waiting at a warp operation with full member
// masks, as the executor releases them (jit.cpp run_block): their masks, and the values
// they published for the operation (exchange, shfl_exchange) where the operation reads
// them (released, shfl_released), for the kinds of operation the kernel has (a kernel whose
// shuffles are all in warp chains reads neither: layernorm copied 3 KiB a block sum).
void FunctionLowering::release_warps(IRBuilder<>& b, Value* lo, Value* hi) {
  Type* i32 = b.getInt32Ty();
  Type* i64 = b.getInt64Ty();
  Value* first = b.CreateZExt(lo, i64);
  Value* count = b.CreateZExt(b.CreateSub(hi, lo), i64);
  auto array = [&](size_t offset, Type* element) {
    return b.CreateGEP(element, block_field(b, offset, b.getPtrTy()), first);
  };
  b.CreateMemSet(array(offsetof(BlockState, warp_mask), i32), b.getInt8(0xff), b.CreateShl(count, 2), Align(4));
  if (publishes_exchange_)
    b.CreateMemCpy(array(offsetof(BlockState, released), i64), Align(8), array(offsetof(BlockState, exchange), i64),
                   Align(8), b.CreateShl(count, 3));
  if (publishes_shuffle_)
    b.CreateMemCpy(array(offsetof(BlockState, shfl_released), i32), Align(4),
                   array(offsetof(BlockState, shfl_exchange), i32), Align(4), b.CreateShl(count, 2));
}

// The chain's scans of the threads' stops are vectorised `width` threads at a time
// without interleaving: left to the vectoriser, they got epilogue loops and interleaved
// copies, which made first compiles longer for nothing.
static void vectorise_by(BranchInst* back, unsigned width) {
  LLVMContext& c = back->getContext();
  Type* i32 = Type::getInt32Ty(c);
  auto option = [&](const char* name, Metadata* value) { return MDNode::get(c, {MDString::get(c, name), value}); };
  Metadata* on = ConstantAsMetadata::get(ConstantInt::getTrue(c));
  MDNode* id = MDNode::getDistinct(c, {nullptr, option("llvm.loop.vectorize.enable", on),
                                       option("llvm.loop.vectorize.width", ConstantAsMetadata::get(ConstantInt::get(i32, width))),
                                       option("llvm.loop.interleave.count", ConstantAsMetadata::get(ConstantInt::get(i32, 1))),
                                       MDNode::get(c, {MDString::get(c, "llvm.loop.unroll.disable")})});
  id->replaceOperandWith(0, id);
  back->setMetadata(LLVMContext::MD_loop, id);
}

// From `at` on: a loop over threads [lo, hi) (lo < hi) that ORs `mismatch(b, t)`, then a
// branch to `ok` when it was 0 for every thread and to `otherwise` if not; `b` is left
// at the end of the loop's exit block.
template <typename Mismatch>
static void or_over_threads(IRBuilder<>& b, BasicBlock* at, const std::string& name, Value* lo, Value* hi,
                            Mismatch mismatch, BasicBlock* ok, BasicBlock* otherwise) {
  Function* f = at->getParent();
  LLVMContext& c = f->getContext();
  Type* i32 = b.getInt32Ty();
  BasicBlock* loop = BasicBlock::Create(c, name, f);
  BasicBlock* tail = BasicBlock::Create(c, name + "_end", f);
  b.SetInsertPoint(at);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  PHINode* t = b.CreatePHI(i32, 2);
  PHINode* bad = b.CreatePHI(i32, 2);
  t->addIncoming(lo, at);
  bad->addIncoming(b.getInt32(0), at);
  Value* bad_next = b.CreateOr(bad, mismatch(b, t));
  Value* t_next = b.CreateAdd(t, b.getInt32(1));
  t->addIncoming(t_next, loop);
  bad->addIncoming(bad_next, loop);
  vectorise_by(b.CreateCondBr(b.CreateICmpULT(t_next, hi), loop, tail), 8);
  b.SetInsertPoint(tail);
  b.CreateCondBr(b.CreateICmpEQ(bad_next, b.getInt32(0)), ok, otherwise);
}

// When every thread a call ran stopped at the same warp operation with every lane in its
// member mask, and the call ran whole warps, or the call ran the whole block and every
// thread stopped at the same full barrier, the call goes on from there itself, as the
// executor would let it (jit.cpp run_block), without a return to the executor and its
// scans of the block. Anything else (a partial warp, threads that stopped elsewhere or
// ended, counted barriers, bar.arrive, bar.red, mbarrier waits, matrix operations)
// returns. The checks read what the threads published (next, barrier): one pass over the
// threads where the executor makes several.
void FunctionLowering::chain_in_step() {
  if (splits.empty() || inlined_waiting_call_)
    return;
  if (std::find(splits.begin(), splits.end(), SplitKind::Arrive) != splits.end())
    return; // arrivals counted by the executor would be missed
  BasicBlock* done = done_;
  if (done->size() != 1 || !isa<ReturnInst>(done->getTerminator()))
    return;
  Type* i32 = b_.getInt32Ty();
  Type* i64 = b_.getInt64Ty();
  Type* ptr = b_.getPtrTy();
  Argument* resume = fn_->getArg(4);
  Value* begin = fn_->getArg(2);
  Value* end = fn_->getArg(3);
  // A resume value the kernel does not know returns at once (not through the chain).
  BasicBlock* unknown = BasicBlock::Create(ctx(), "unknown_resume", fn_);
  ReturnInst::Create(ctx(), unknown);
  for (BasicBlock& bb : *fn_)
    if (auto* sw = dyn_cast<SwitchInst>(bb.getTerminator()); sw && sw->getCondition() == resume && sw != chain_dispatch_)
      sw->setDefaultDest(unknown);
  // The resume point becomes a φ of the call's own and the one the chain goes on from.
  BasicBlock* entry = &fn_->getEntryBlock();
  BasicBlock* header = entry->splitBasicBlock(entry->getTerminator(), "chain");
  PHINode* point = PHINode::Create(i32, 3, "point", header->begin());
  point->addIncoming(resume, entry);
  resume->replaceUsesWithIf(point, [&](Use& u) { return u.getUser() != point; });

  done->getTerminator()->eraseFromParent();
  // Each of the chain's returns says whether all the call's threads have exited
  // (BlockState::ended); the outermost call of a chain that calls itself returns last.
  auto returning = [&](const char* name, uint32_t ended) {
    BasicBlock* bb = BasicBlock::Create(ctx(), name, fn_);
    IRBuilder<> rb(bb);
    rb.CreateStore(rb.getInt32(ended), rb.CreateConstInBoundsGEP1_64(rb.getInt8Ty(), block_, offsetof(BlockState, ended)));
    rb.CreateRetVoid();
    return bb;
  };
  BasicBlock* exit = returning("chain_exit", 0);
  BasicBlock* all_ended = returning("chain_ended", 1);
  BasicBlock* which = BasicBlock::Create(ctx(), "chain_which", fn_);
  BasicBlock* barrier_check = BasicBlock::Create(ctx(), "chain_barrier", fn_);
  BasicBlock* warp_check = BasicBlock::Create(ctx(), "chain_warp", fn_);
  BasicBlock* again = BasicBlock::Create(ctx(), "chain_again", fn_);
  BasicBlock* general = BasicBlock::Create(ctx(), "chain_block", fn_);
  BasicBlock* pick = BasicBlock::Create(ctx(), "chain_pick", fn_);
  BasicBlock* known = BasicBlock::Create(ctx(), "chain_known", fn_);
  IRBuilder<> b(done);
  // The split point where the loop that ran stopped every thread, where it has one stop
  // only (split_thread_loop): no need to read the threads' stops.
  PHINode* single = b.CreatePHI(i32, 4, "single_stop");
  for (BasicBlock* from : predecessors(done))
    single->addIncoming(b.getInt32(loop_stops_.lookup(from)), from);
  // Such a loop does not store its stop for each thread (LazyStop): where the chain goes on
  // from it, nothing reads them; the paths that do (the executor, the scans of the block)
  // get them from fill_stops. `lazy` says whether the loop that ran left them out.
  PHINode* lazy = nullptr;
  PHINode* lazy_word = nullptr;
  if (!lazy_stops_.empty()) {
    lazy = b.CreatePHI(b.getInt1Ty(), 4, "lazy_stop");
    lazy_word = b.CreatePHI(i32, 4, "lazy_word");
    for (BasicBlock* from : predecessors(done)) {
      auto it = lazy_stops_.find(from);
      lazy->addIncoming(b.getInt1(it != lazy_stops_.end()), from);
      lazy_word->addIncoming(it != lazy_stops_.end() && it->second.word ? it->second.word : b.getInt32(0), from);
    }
    for (BasicBlock* from : predecessors(done))
      if (auto it = lazy_stops_.find(from); it != lazy_stops_.end()) {
        for (StoreInst* store : it->second.stores) {
          stop_markers_.erase(store);
          wait_stores_.erase(store);
          store->eraseFromParent();
        }
        it->second.stores.clear(); // an exit may be listed once for each edge
      }
  }
  // A loop with two stops (StopPair): which, and their words.
  PHINode* paired = nullptr;
  std::array<PHINode*, 4> pair_of{}; // first and second stop, their words
  if (!stop_pairs_.empty()) {
    paired = b.CreatePHI(b.getInt1Ty(), 4, "paired");
    const char* names[] = {"pair_first", "pair_second", "pair_first_word", "pair_second_word"};
    for (size_t k = 0; k < 4; ++k)
      pair_of[k] = b.CreatePHI(i32, 4, names[k]);
    for (BasicBlock* from : predecessors(done)) {
      auto it = stop_pairs_.find(from);
      const bool counted = it != stop_pairs_.end();
      StopPair pair = counted ? it->second : StopPair{};
      paired->addIncoming(b.getInt1(counted), from);
      pair_of[0]->addIncoming(b.getInt32(pair.first), from);
      pair_of[1]->addIncoming(b.getInt32(pair.second), from);
      pair_of[2]->addIncoming(pair.first_word ? pair.first_word : b.getInt32(0), from);
      pair_of[3]->addIncoming(pair.second_word ? pair.second_word : b.getInt32(0), from);
    }
  }
  auto field = [&](size_t offset, Type* type) { return block_field(b, offset, type); };
  Value* n = field(offsetof(BlockState, nthreads), i32);
  // What the call ran: the whole block (a barrier may go on), whole warps (a warp operation).
  Value* whole = b.CreateAnd(b.CreateICmpEQ(begin, b.getInt32(0)), b.CreateICmpEQ(end, n));
  Value* warps_whole = b.CreateICmpEQ(b.CreateAnd(b.CreateOr(begin, end), 31), b.getInt32(0));
  // A loop with two stops (StopPair) counted the threads that stopped at its first and
  // summed their indices: all of them, none, or a run of them (distinct indices of [begin,
  // end) sum to the least possible only as the first ones, to the most only as the last).
  Value* count = nullptr;
  Value* sum = nullptr;
  Value* one = single; // where every thread the call ran stopped, if at one point
  if (paired) {
    count = b.CreateLoad(i32, stop_count_, "stop_count");
    sum = b.CreateLoad(i32, stop_sum_, "stop_sum");
    Value* ran = b.CreateSub(end, begin);
    Value* counted_one = b.CreateSelect(b.CreateICmpEQ(count, ran), pair_of[0],
                                        b.CreateSelect(b.CreateICmpEQ(count, b.getInt32(0)), pair_of[1], b.getInt32(0)));
    one = b.CreateSelect(paired, counted_one, single, "one_stop");
  }
  b.CreateCondBr(b.CreateICmpULT(begin, end), pick, exit);
  b.SetInsertPoint(pick);
  BasicBlock* pair_check = paired ? BasicBlock::Create(ctx(), "chain_pair", fn_) : which;
  b.CreateCondBr(b.CreateICmpNE(one, b.getInt32(0)), known, pair_check);
  b.SetInsertPoint(which);
  Value* next = field(offsetof(BlockState, next), ptr);
  Value* barrier = field(offsetof(BlockState, barrier), ptr);
  auto at = [&](IRBuilder<>& bb, Value* array, Value* t) {
    return bb.CreateLoad(i32, bb.CreateGEP(i32, array, bb.CreateZExt(t, i64)));
  };
  Value* stop = at(b, next, begin);
  Value* last = b.CreateSub(end, b.getInt32(1));
  Value* last_stop = at(b, next, last);
  Value* last_word = at(b, barrier, last);
  SwitchInst* kind = b.CreateSwitch(stop, exit);
  for (size_t k = 0; k < splits.size(); ++k)
    if (splits[k] == SplitKind::Barrier || splits[k] == SplitKind::Warp)
      kind->addCase(b.getInt32(uint32_t(k + 1)), splits[k] == SplitKind::Barrier ? barrier_check : warp_check);
  // A loop over [begin, end) ORing `mismatch(t)`; goes to `ok` when it is 0 everywhere.
  auto all_threads = [&](BasicBlock* at_block, const char* name, auto mismatch, BasicBlock* ok) {
    or_over_threads(b, at_block, name, begin, end, mismatch, ok, general);
  };
  // Barrier: the whole block, the same id everywhere, for every thread (count 0). The
  // last thread is looked at first: where it stopped elsewhere (`if (warp == 0)` left the
  // first warp at a shuffle), the scan would fail.
  b.SetInsertPoint(barrier_check);
  Value* word = b.CreateLoad(i32, barrier);
  BasicBlock* barrier_scan = BasicBlock::Create(ctx(), "chain_barrier_scan", fn_);
  Value* last_same = b.CreateAnd(b.CreateICmpEQ(last_stop, stop), b.CreateICmpEQ(last_word, word));
  b.CreateCondBr(b.CreateAnd({whole, b.CreateICmpULT(word, b.getInt32(0x100)), last_same}), barrier_scan, general);
  all_threads(barrier_scan, "chain_barrier_loop", [&](IRBuilder<>& bb, Value* t) {
    return bb.CreateOr(bb.CreateXor(at(bb, next, t), stop), bb.CreateXor(at(bb, barrier, t), word));
  }, again);
  BasicBlock* barrier_tail = b.GetInsertBlock();
  // Warp operation: whole warps, every lane waiting for all 32 (the executor releases the
  // lanes of each warp by themselves).
  b.SetInsertPoint(warp_check);
  BasicBlock* warp_scan = BasicBlock::Create(ctx(), "chain_warp_scan", fn_);
  BasicBlock* release = BasicBlock::Create(ctx(), "chain_release", fn_);
  Value* last_full = b.CreateAnd(b.CreateICmpEQ(last_stop, stop), b.CreateICmpEQ(last_word, b.getInt32(~0u)));
  b.CreateCondBr(b.CreateAnd(warps_whole, last_full), warp_scan, general);
  all_threads(warp_scan, "chain_warp_loop", [&](IRBuilder<>& bb, Value* t) {
    return bb.CreateOr(bb.CreateXor(at(bb, next, t), stop), bb.CreateNot(at(bb, barrier, t)));
  }, release);
  BasicBlock* warp_tail = b.GetInsertBlock();
  // The loop that ran had one stop: a full barrier goes on for a call of the whole block,
  // a warp operation with a full mask for a call of whole warps; else as any other stop.
  b.SetInsertPoint(known);
  BasicBlock* known_barrier = BasicBlock::Create(ctx(), "chain_known_barrier", fn_);
  BasicBlock* known_warp = BasicBlock::Create(ctx(), "chain_known_warp", fn_);
  SwitchInst* known_kind = b.CreateSwitch(one, which);
  // Where the loop left its stops out: every thread of the call stopped at `single` (with
  // the word `lazy_word`), as the scans and the executor then read them.
  auto filled_before = [&](BasicBlock* then, bool exits, const char* name) {
    if (!lazy)
      return then;
    BasicBlock* check = BasicBlock::Create(ctx(), name, fn_);
    BasicBlock* fill = BasicBlock::Create(ctx(), std::string(name) + "_fill", fn_);
    IRBuilder<> fb(check);
    fb.CreateCondBr(lazy, fill, then);
    fill_stops(fb, fill, single, exits ? nullptr : lazy_word, then);
    return check;
  };
  if (llvm::any_of(loop_stops_, [](const auto& stop) { return stop.second == kThreadExited; })) {
    // The executor reads nothing of a call whose threads all ended (BlockState::ended), but
    // a call the chain made for some warps (chain_whole_block) is read by its caller.
    BasicBlock* ended = all_ended;
    if (lazy) {
      ended = BasicBlock::Create(ctx(), "chain_known_ended", fn_);
      IRBuilder<> eb(ended);
      eb.CreateCondBr(whole, all_ended, filled_before(all_ended, true, "chain_ended_stops"));
    }
    known_kind->addCase(b.getInt32(kThreadExited), ended);
  }
  for (size_t k = 0; k < splits.size(); ++k)
    if (split_words_[k])
      known_kind->addCase(b.getInt32(uint32_t(k + 1)), splits[k] == SplitKind::Barrier ? known_barrier : known_warp);
  b.SetInsertPoint(known_barrier);
  b.CreateCondBr(whole, again, filled_before(general, false, "chain_barrier_stops"));
  b.SetInsertPoint(known_warp);
  b.CreateCondBr(warps_whole, release, filled_before(general, false, "chain_warp_stops"));
  b.SetInsertPoint(release);
  PHINode* released = b.CreatePHI(i32, 2, "released_at");
  released->addIncoming(stop, warp_tail);
  released->addIncoming(one, known_warp);
  release_warps(b, begin, end);
  b.CreateBr(again);
  b.SetInsertPoint(again);
  PHINode* go_on = b.CreatePHI(i32, 3, "go_on_at");
  go_on->addIncoming(stop, barrier_tail);
  go_on->addIncoming(released, release);
  go_on->addIncoming(one, known_barrier);
  b.CreateStore(begin, thread_);
  b.CreateBr(header);
  point->addIncoming(go_on, again);
  KnownRuns runs = chain_whole_block(general, exit, header, point);
  if (!paired) {
    if (runs.entry)
      DeleteDeadBlock(runs.entry);
    return;
  }
  // Two runs, one at each of the pair's stops, in a call of the whole block: the look at
  // the whole block goes on from its scan's result.
  b.SetInsertPoint(pair_check);
  if (!runs.entry) {
    b.CreateBr(which);
    return;
  }
  Value* first_sum = b.CreateAdd(b.CreateMul(count, begin),
                                 b.CreateLShr(b.CreateMul(count, b.CreateSub(count, b.getInt32(1))), 1));
  Value* last_sum = b.CreateSub(b.CreateMul(count, b.CreateSub(end, b.getInt32(1))),
                                b.CreateLShr(b.CreateMul(count, b.CreateSub(count, b.getInt32(1))), 1));
  Value* some = b.CreateICmpNE(count, b.getInt32(0));
  Value* first_run = b.CreateAnd(some, b.CreateICmpEQ(sum, first_sum));
  Value* last_run = b.CreateAnd(some, b.CreateICmpEQ(sum, last_sum));
  Value* runs_known = b.CreateAnd({paired, whole, b.CreateOr(first_run, last_run)});
  runs.first_point->addIncoming(b.CreateSelect(first_run, pair_of[0], pair_of[1]), pair_check);
  runs.first_word->addIncoming(b.CreateSelect(first_run, pair_of[2], pair_of[3]), pair_check);
  runs.last_point->addIncoming(b.CreateSelect(last_run, pair_of[0], pair_of[1]), pair_check);
  runs.last_word->addIncoming(b.CreateSelect(last_run, pair_of[2], pair_of[3]), pair_check);
  runs.first_count->addIncoming(b.CreateSelect(first_run, count, b.CreateSub(b.CreateSub(end, begin), count)), pair_check);
  b.CreateCondBr(runs_known, runs.entry, which);
}

// The chain's look at the whole block, when the threads the call ran did not all stop at
// one point that lets them go on. `if (warp == 0) { shuffles }` between two barriers
// leaves warp 0 at a shuffle and the other warps at the second barrier; warp 0 then stops
// at that barrier by itself. As the executor would (jit.cpp run_block), whole warps whose
// every lane waits at one warp operation with a full member mask go on first (while the
// others wait at a barrier or have ended), and when every thread of the block waits at
// one full barrier (count 0, one id), the block goes on from it. The block is read as at
// most two runs of threads: those that stopped as its first thread did (same point and
// barrier word) from thread 0 on, and those that stopped as its last thread did up to the
// end; one pass over next[] and barrier[], branch-free (it vectorises), counts and bounds
// them. The released warps run in a call of their own, and the block is read again when it
// returns. Anything else (threads that exited while others wait, a third kind of stop, a
// run of warps in the middle, partial warps, counted barriers, other kinds of split)
// returns to the executor, and so does a call the executor made for some warps only.
FunctionLowering::KnownRuns FunctionLowering::chain_whole_block(BasicBlock* general, BasicBlock* exit,
                                                               BasicBlock* header, PHINode* point) {
  IRBuilder<> b(general);
  Type* i32 = b.getInt32Ty();
  Type* i64 = b.getInt64Ty();
  Type* ptr = b.getPtrTy();
  // Which split points are barriers and which warp operations, as bits of the point
  // (next[t] is the split's index + 1; kThreadExited and the stop codes are past 63).
  if (splits.size() >= 63) {
    b.CreateBr(exit);
    return {};
  }
  uint64_t barrier_bits = 0, warp_bits = 0;
  for (size_t k = 0; k < splits.size(); ++k) {
    if (splits[k] == SplitKind::Barrier) barrier_bits |= uint64_t(1) << (k + 1);
    if (splits[k] == SplitKind::Warp) warp_bits |= uint64_t(1) << (k + 1);
  }
  auto field = [&](size_t offset, Type* type) { return block_field(b, offset, type); };
  auto at = [&](Value* array, Value* t) { return b.CreateLoad(i32, b.CreateGEP(i32, array, b.CreateZExt(t, i64))); };
  Value* n = field(offsetof(BlockState, nthreads), i32);
  Value* next = field(offsetof(BlockState, next), ptr);
  Value* barrier = field(offsetof(BlockState, barrier), ptr);
  BasicBlock* loop = BasicBlock::Create(ctx(), "chain_block_loop", fn_);
  BasicBlock* tail = BasicBlock::Create(ctx(), "chain_block_end", fn_);
  BasicBlock* scan = BasicBlock::Create(ctx(), "chain_block_scan", fn_);
  // Only a call the executor made for the whole block may go on with threads outside
  // the range the chain ran last: the executor then reads every warp's stop from next[]
  // when the call returns. After a call for some warps, it holds the others' states.
  Value* whole_call = b.CreateAnd(b.CreateICmpEQ(fn_->getArg(2), b.getInt32(0)), b.CreateICmpEQ(fn_->getArg(3), n));
  b.CreateCondBr(b.CreateAnd(whole_call, b.CreateICmpNE(n, b.getInt32(0))), scan, exit);
  b.SetInsertPoint(scan);
  // The scan is entered again after the released warps ran, from blocks `general` does
  // not dominate where the runs were known (KnownRuns): the fields are read here again.
  n = field(offsetof(BlockState, nthreads), i32);
  next = field(offsetof(BlockState, next), ptr);
  barrier = field(offsetof(BlockState, barrier), ptr);
  Value* last_thread = b.CreateSub(n, b.getInt32(1));
  Value* first_point = at(next, b.getInt32(0));
  Value* first_word = at(barrier, b.getInt32(0));
  Value* last_point = at(next, last_thread);
  Value* last_word = at(barrier, last_thread);
  // One pass over the threads: every thread stopped as the first or the last, and none as
  // the first after one that did not (the one before thread 0 counts as one that did).
  // Then the threads that stopped as thread 0 are [0, first_count) and the rest stopped
  // as the last thread. Branch-free, 8 threads a step (the previous thread's answer is
  // a recurrence the vectoriser shifts in). At 16, AVX2 packed the two halves' tests into
  // bytes and back every step (layernorm at 1 MiB on one worker: 359-376 -> 349-357 us).
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  PHINode* t = b.CreatePHI(i32, 2, "t");
  PHINode* first_count = b.CreatePHI(i32, 2, "first_count"); // threads stopped as thread 0
  PHINode* bad = b.CreatePHI(i32, 2, "bad");
  PHINode* before_first = b.CreatePHI(b.getInt1Ty(), 2, "before_first");
  t->addIncoming(b.getInt32(0), scan);
  first_count->addIncoming(b.getInt32(0), scan);
  bad->addIncoming(b.getInt32(0), scan);
  before_first->addIncoming(b.getTrue(), scan);
  auto as = [&](Value* u, Value* point_of, Value* word_of) {
    return b.CreateAnd(b.CreateICmpEQ(at(next, u), point_of), b.CreateICmpEQ(at(barrier, u), word_of));
  };
  Value* as_first = as(t, first_point, first_word);
  Value* as_last = as(t, last_point, last_word);
  Value* wrong = b.CreateOr(b.CreateNot(b.CreateOr(as_first, as_last)), b.CreateAnd(as_first, b.CreateNot(before_first)));
  Value* t_next = b.CreateAdd(t, b.getInt32(1));
  Value* first_count_next = b.CreateAdd(first_count, b.CreateZExt(as_first, i32));
  Value* bad_next = b.CreateOr(bad, b.CreateZExt(wrong, i32));
  t->addIncoming(t_next, loop);
  first_count->addIncoming(first_count_next, loop);
  bad->addIncoming(bad_next, loop);
  before_first->addIncoming(as_first, loop);
  BranchInst* back = b.CreateCondBr(b.CreateICmpULT(t_next, n), loop, tail);
  vectorise_by(back, 8);
  // Or the runs, known without the scan (KnownRuns: the caller fills the φ-nodes).
  KnownRuns runs;
  runs.entry = BasicBlock::Create(ctx(), "chain_block_runs", fn_);
  b.SetInsertPoint(runs.entry);
  runs.first_point = b.CreatePHI(i32, 1, "runs_first_point");
  runs.first_word = b.CreatePHI(i32, 1, "runs_first_word");
  runs.last_point = b.CreatePHI(i32, 1, "runs_last_point");
  runs.last_word = b.CreatePHI(i32, 1, "runs_last_word");
  runs.first_count = b.CreatePHI(i32, 1, "runs_first_count");
  b.CreateBr(tail);
  b.SetInsertPoint(tail);
  auto scanned_or_known = [&](Value* scanned, Value* known, const char* name) {
    PHINode* phi = b.CreatePHI(i32, 2, name);
    phi->addIncoming(scanned, loop);
    phi->addIncoming(known, runs.entry);
    return phi;
  };
  first_point = scanned_or_known(first_point, runs.first_point, "first_point");
  first_word = scanned_or_known(first_word, runs.first_word, "first_word");
  last_point = scanned_or_known(last_point, runs.last_point, "last_point");
  last_word = scanned_or_known(last_word, runs.last_word, "last_word");
  Value* first_total = scanned_or_known(first_count_next, runs.first_count, "first_total");
  Value* any_bad = scanned_or_known(bad_next, b.getInt32(0), "any_bad");
  n = field(offsetof(BlockState, nthreads), i32); // `general` no longer dominates
  next = field(offsetof(BlockState, next), ptr);
  barrier = field(offsetof(BlockState, barrier), ptr);
  BasicBlock* tail_end = tail;
  auto kind = [&](Value* p, uint64_t bits) {
    Value* bit = b.CreateShl(b.getInt64(1), b.CreateZExt(b.CreateAnd(p, b.getInt32(63)), i64));
    return b.CreateAnd(b.CreateICmpULT(p, b.getInt32(64)),
                       b.CreateICmpNE(b.CreateAnd(bit, b.getInt64(bits)), b.getInt64(0)));
  };
  auto full_barrier = [&](Value* p, Value* w) { return b.CreateAnd(kind(p, barrier_bits), b.CreateICmpULT(w, b.getInt32(0x100))); };
  auto full_warps = [&](Value* p, Value* w) { return b.CreateAnd(kind(p, warp_bits), b.CreateICmpEQ(w, b.getInt32(~0u))); };
  auto aligned = [&](Value* v) { return b.CreateICmpEQ(b.CreateAnd(v, b.getInt32(31)), b.getInt32(0)); };
  Value* one_run = b.CreateAnd(b.CreateICmpEQ(any_bad, b.getInt32(0)), b.CreateICmpEQ(first_total, n));
  Value* two_runs = b.CreateAnd(b.CreateICmpEQ(any_bad, b.getInt32(0)), b.CreateICmpNE(first_total, n));
  Value* split = first_total; // where the last run starts
  // The block goes on from one barrier; or the warps of one run go on from their operation
  // while the other run waits at a barrier or has ended (reduce's warp 0 shuffles after
  // the other warps exited).
  auto waits_or_ended = [&](Value* p, Value* w) {
    return b.CreateOr(full_barrier(p, w), b.CreateICmpEQ(p, b.getInt32(kThreadExited)));
  };
  Value* all_at_barrier = b.CreateAnd(one_run, full_barrier(first_point, first_word));
  Value* first_warps = b.CreateAnd({two_runs, full_warps(first_point, first_word), waits_or_ended(last_point, last_word),
                                    aligned(split)});
  Value* last_warps = b.CreateAnd({two_runs, waits_or_ended(first_point, first_word), full_warps(last_point, last_word),
                                   aligned(split), aligned(n)});
  BasicBlock* all = BasicBlock::Create(ctx(), "chain_block_barrier", fn_);
  BasicBlock* release = BasicBlock::Create(ctx(), "chain_block_release", fn_);
  BasicBlock* warps = BasicBlock::Create(ctx(), "chain_block_warps", fn_);
  b.CreateCondBr(all_at_barrier, all, warps);
  b.SetInsertPoint(warps);
  Value* lo = b.CreateSelect(first_warps, b.getInt32(0), split);
  Value* hi = b.CreateSelect(first_warps, split, n);
  Value* warp_point = b.CreateSelect(first_warps, first_point, last_point);
  Value* other_point = b.CreateSelect(first_warps, last_point, first_point);
  Value* other_word = b.CreateSelect(first_warps, last_word, first_word);
  Value* other_waits = full_barrier(other_point, other_word);
  b.CreateCondBr(b.CreateOr(first_warps, last_warps), release, exit);
  // The warps at their operation go on, released as the executor releases them, in a call
  // of their own (which returns where they stop, for another look at the block). The
  // block's own range stays the call's: thread loops keep `end` an argument.
  b.SetInsertPoint(release);
  release_warps(b, lo, hi);
  b.CreateCall(fn_, {fn_->getArg(0), fn_->getArg(1), lo, hi, warp_point});
  // Only the warps that ran moved: where the others wait at a barrier and these warps
  // stopped there too, the whole block waits at it (the common case, `if (warp == 0)`
  // between two barriers); a look at them alone tells. Anything else reads the block again.
  BasicBlock* joined = BasicBlock::Create(ctx(), "chain_block_joined", fn_);
  b.CreateCondBr(other_waits, joined, scan);
  or_over_threads(b, joined, "chain_block_joined_loop", lo, hi, [&](IRBuilder<>& bb, Value* u) {
    return bb.CreateOr(bb.CreateXor(at(next, u), other_point), bb.CreateXor(at(barrier, u), other_word));
  }, all, scan);
  BasicBlock* joined_end = b.GetInsertBlock();
  // Every thread at the one barrier: the block goes on from it.
  b.SetInsertPoint(all);
  PHINode* barrier_point = b.CreatePHI(i32, 2, "barrier_point");
  barrier_point->addIncoming(first_point, tail_end);
  barrier_point->addIncoming(other_point, joined_end);
  b.CreateStore(b.getInt32(0), thread_);
  b.CreateBr(header);
  point->addIncoming(barrier_point, all);
  return runs;
}

// A .func: `void @f(ptr %argv, ptr %retv, ptr %block, i32 %thread, i64 %sp)`, where argv
// and retv point to each parameter's and return value's storage, and sp is where its
// frame starts in the thread's local window.
void FunctionLowering::run_function() {
  layout_locals(*f_.body);
  params_ = nullptr;
  argv_ = fn_->getArg(0);
  retv_ = fn_->getArg(1);
  block_ = fn_->getArg(2);
  lowering_.facts[fn_].block = gpu() ? nullptr : fn_->getArg(2);
  local_sp_ = gpu() ? nullptr : fn_->getArg(4);
  BasicBlock* entry = BasicBlock::Create(ctx(), "entry", fn_);
  body_ = BasicBlock::Create(ctx(), "body", fn_);
  b_.SetInsertPoint(entry);
  if (gpu()) { // the frame is the function's own (AMDGPU has a stack); no thread loop
    gpu_frame();
    b_.CreateBr(body_);
    b_.SetInsertPoint(body_);
    scopes_.emplace_back();
    bind_parameters(f_);
    collect_labels(*f_.body);
    lower_block(*f_.body);
    for (BasicBlock& bb : *fn_)
      if (!bb.getTerminator()) {
        b_.SetInsertPoint(&bb);
        return_from_function();
      }
    scopes_.pop_back();
    return;
  }
  thread_ = b_.CreateAlloca(b_.getInt32Ty(), nullptr, "thread");
  b_.CreateStore(fn_->getArg(3), thread_);
  // A frame past the thread's stack is a stack overflow: the thread traps.
  size_t frame = (local_bytes_ + 15) / 16 * 16;
  if (frame) {
    BasicBlock* overflow = BasicBlock::Create(ctx(), "stack_overflow", fn_);
    Value* stride = block_field(offsetof(BlockState, local_stride), b_.getInt64Ty());
    b_.CreateCondBr(b_.CreateICmpUGT(b_.CreateAdd(local_sp_, b_.getInt64(frame)), stride), overflow, body_);
    b_.SetInsertPoint(overflow);
    stop_thread(kThreadTrapped);
  } else {
    b_.CreateBr(body_);
  }
  b_.SetInsertPoint(body_);
  scopes_.emplace_back(); // the parameters' scope
  bind_parameters(f_);
  collect_labels(*f_.body);
  lower_block(*f_.body);
  for (BasicBlock& bb : *fn_)
    if (!bb.getTerminator()) {
      b_.SetInsertPoint(&bb);
      return_from_function();
    }
  scopes_.pop_back();
  ModuleLowering::FunctionFacts& facts = lowering_.facts[fn_];
  facts.frame = frame;
}

// The parameters and return values of `f` as the body sees them: .param ones through
// argv/retv, .reg ones (the old register ABI) as registers loaded from argv.
void FunctionLowering::bind_parameters(const ptx::Function& f) {
  for (size_t i = 0; i < f.params.size(); ++i) {
    const ptx::VarDecl& p = f.params[i];
    if (p.space == ptx::Modifier::Reg) {
      declare(p);
      Register* r = reg(p.name);
      Value* at = b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_64(b_.getPtrTy(), argv_, i));
      b_.CreateStore(b_.CreateLoad(r->type, at), r->storage);
    } else {
      func_params_[p.name] = i;
    }
  }
  for (size_t i = 0; i < f.returns.size(); ++i) {
    const ptx::VarDecl& r = f.returns[i];
    if (r.space == ptx::Modifier::Reg)
      declare(r);
    else
      func_returns_[r.name] = i;
  }
}

// `ret` in a .func: .reg return values go to their storage.
void FunctionLowering::return_from_function() {
  const ptx::Function& f = inline_stack_.empty() ? f_ : *inline_stack_.back().callee;
  for (size_t i = 0; i < f.returns.size(); ++i) {
    const ptx::VarDecl& r = f.returns[i];
    if (r.space != ptx::Modifier::Reg)
      continue;
    Register* reg_ = reg(r.name);
    Value* at = b_.CreateLoad(b_.getPtrTy(), b_.CreateConstGEP1_64(b_.getPtrTy(), retv_, i));
    b_.CreateStore(b_.CreateLoad(reg_->type, reg_->storage), at);
  }
  if (!inline_stack_.empty())
    b_.CreateBr(inline_stack_.back().exit);
  else
    b_.CreateRetVoid();
}

// ---------------------------------------------------------------- module

namespace {

// LLVM's warnings and remarks about the code Mimic made (a thread loop marked for
// vectorisation that could not be: "loop not vectorized") are not the application's: they
// stay off its standard error, unless MIMIC_LLVM_OPTIONS is set (studying the code, where
// -pass-remarks asks for them). Errors print as LLVM prints them.
struct QuietDiagnostics final : DiagnosticHandler {
  bool handleDiagnostics(const DiagnosticInfo& d) override {
    if (d.getSeverity() == DS_Error)
      return false;
    const char* options = std::getenv("MIMIC_LLVM_OPTIONS");
    return !(options && *options);
  }
};

} // namespace

void quiet_llvm_diagnostics(LLVMContext& context) {
  context.setDiagnosticHandler(std::make_unique<QuietDiagnostics>());
}

ModuleLowering::ModuleLowering(const runtime::Program& program, const LowerOptions& options)
    : program_(program), target_(options.target), context_(std::make_unique<LLVMContext>()),
      module_(std::make_unique<Module>("mimic", *context_)) {
  quiet_llvm_diagnostics(*context_);
  for (const auto& m : program.modules)
    for (const ptx::TopLevel& item : m->items)
      if (item.kind == ptx::DirectiveKind::Var && item.var->space == ptx::Modifier::Shared)
        shared_names_.insert(item.var->name);
      else if (item.kind == ptx::DirectiveKind::Function && !item.function->is_entry) {
        auto& slot = functions_[item.function->name];
        if (slot && slot->body && item.function->body && slot != item.function && ambiguous_.empty())
          ambiguous_ = std::string(item.function->name);
        if (!slot || (!slot->body && item.function->body))
          slot = item.function;
      }
}

const ptx::Function* ModuleLowering::ptx_function(std::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second;
}


// Whether `f` names a module-level .shared variable, itself or through what it calls.
bool ModuleLowering::reaches_shared(const ptx::Function& f) {
  if (auto it = reaches_shared_.find(&f); it != reaches_shared_.end())
    return it->second;
  reaches_shared_[&f] = false; // recursion: assume not while looking
  bool found = false;
  if (f.body) {
    std::vector<std::string_view> names;
    runtime::mentioned_names(*f.body, names);
    for (std::string_view n : names) {
      if (shared_names_.count(n)) {
        found = true;
        break;
      }
      if (const ptx::Function* g = ptx_function(n); g && g != &f && reaches_shared(*g)) {
        found = true;
        break;
      }
    }
  }
  reaches_shared_[&f] = found;
  return found;
}

Function* ModuleLowering::callee(const ptx::Function& f, const runtime::KernelInfo& kernel, size_t kernel_index) {
  std::string key(f.name);
  if (reaches_shared(f))
    key += "@kernel" + std::to_string(kernel_index);
  if (auto failed = failed_callees_.find(key); failed != failed_callees_.end())
    throw LoweringError{failed->second};
  if (auto it = callees_.find(key); it != callees_.end())
    return it->second;
  Type* ptr = PointerType::get(*context_, 0);
  FunctionType* type = FunctionType::get(Type::getVoidTy(*context_),
                                         {ptr, ptr, ptr, Type::getInt32Ty(*context_), Type::getInt64Ty(*context_)}, false);
  Function* fn = Function::Create(type, GlobalValue::InternalLinkage, "mimic_func." + key, module_.get());
  callees_[key] = fn;
  try {
    FunctionLowering fl(*this, kernel, kernel_index, f, fn);
    fl.run_function();
  } catch (const LoweringError& e) {
    std::string message = "in function '" + std::string(f.name) + "': " + e.message;
    failed_callees_[key] = message;
    callees_.erase(key);
    fn->eraseFromParent();
    throw LoweringError{message};
  }
  return fn;
}

bool ModuleLowering::has_split_points(const ptx::Function& f) {
  if (auto it = split_functions_.find(&f); it != split_functions_.end())
    return it->second;
  split_functions_[&f] = false; // recursion: decided by the rest of the body
  bool found = f.body && ptx::any_instruction(*f.body, [&](const ptx::Instruction& ins) {
    switch (ins.opcode) {
    case ptx::Opcode::Bar:
    case ptx::Opcode::Barrier:
    case ptx::Opcode::Shfl:
    case ptx::Opcode::Vote:
    case ptx::Opcode::Match:
    case ptx::Opcode::Redux:
    case ptx::Opcode::Activemask:
    case ptx::Opcode::Elect:
    case ptx::Opcode::Mma:
    case ptx::Opcode::Wmma:
    case ptx::Opcode::Ldmatrix:
    case ptx::Opcode::Stmatrix:
    case ptx::Opcode::Movmatrix:
    case ptx::Opcode::Nanosleep:
      return true;
    case ptx::Opcode::Mbarrier:
      return ins.has(ptx::Modifier::TestWait) || ins.has(ptx::Modifier::TryWait);
    case ptx::Opcode::Call:
      for (const ptx::Operand& op : ins.ops())
        if (op.kind == ptx::OperandKind::Name)
          if (const ptx::Function* g = ptx_function(op.name_view()); g && g->body && has_split_points(*g))
            return true;
      return false;
    default:
      return false;
    }
  });
  split_functions_[&f] = found;
  return found;
}

bool ModuleLowering::reaches(Function* f, bool FunctionFacts::* which) {
  std::set<Function*> seen;
  std::function<bool(Function*)> visit = [&](Function* g) {
    if (!seen.insert(g).second)
      return false;
    const FunctionFacts& ff = facts[g];
    if (ff.*which)
      return true;
    for (Function* c : ff.callees)
      if (visit(c))
        return true;
    return false;
  };
  return visit(f);
}

size_t ModuleLowering::call_stack_bytes(Function* f) {
  // Deepest chain of frames below f; a cycle or an indirect call gets kRecursionStack.
  std::map<Function*, int> state; // 1 on the path, 2 done
  std::map<Function*, size_t> depth;
  bool unbounded = false;
  std::function<size_t(Function*)> visit = [&](Function* g) -> size_t {
    if (state[g] == 1) {
      unbounded = true;
      return 0;
    }
    if (state[g] == 2)
      return depth[g];
    state[g] = 1;
    const FunctionFacts& ff = facts[g];
    unbounded |= ff.indirect;
    size_t below = 0;
    for (Function* c : ff.callees)
      below = std::max(below, facts[c].frame + visit(c));
    state[g] = 2;
    return depth[g] = below;
  };
  size_t bytes = visit(f);
  return unbounded ? bytes + kRecursionStack : bytes;
}

Function* ModuleLowering::sreg_fn() {
  if (!sreg_) {
    Type* i32 = Type::getInt32Ty(*context_);
    sreg_ = Function::Create(FunctionType::get(i32, {PointerType::get(*context_, 0), i32, i32}, false),
                             GlobalValue::ExternalLinkage, "mimic.sreg", module_.get());
  }
  return sreg_;
}

Function* ModuleLowering::helper(const char* name, Type* result, std::initializer_list<Type*> params) {
  if (gpu()) {
    if (Function* f = gpu_helper(name))
      return f;
    if (!gpu_links_helper(name))
      throw_missing_gpu_helper(name);
  }
  auto& f = helpers_[name];
  if (!f) {
    f = Function::Create(FunctionType::get(result, std::vector<Type*>(params), false), GlobalValue::ExternalLinkage,
                         name, module_.get());
    f->setDoesNotThrow();
  }
  return f;
}

GlobalVariable* ModuleLowering::global(std::string_view name) {
  if (auto it = globals_.find(name); it != globals_.end())
    return it->second;
  if (!program_.global(name))
    return nullptr;
  // On a GPU, in the global address space (1).
  auto* g = new GlobalVariable(*module_, Type::getInt8Ty(*context_), false, GlobalValue::ExternalLinkage, nullptr,
                               global_symbol(name), nullptr, GlobalValue::NotThreadLocal, gpu() ? 1u : 0u);
  globals_[std::string(name)] = g;
  global_names_.push_back(std::string(name));
  return g;
}

namespace {

// The executor's per-thread arrays (spill slots, stop points, warp exchange ...) are never
// the program's memory, nor each other. Accesses to each get an alias scope of its own and
// "not the others", every other memory access "none of them", so that LLVM may keep spilled
// values in registers across the program's stores, drop a reload stored back unchanged,
// and vectorise without checking them against each other. An access is to an array when
// its address is based on a pointer loaded from that BlockState field.
void tag_executor_memory(Module& m, const std::map<Function*, ModuleLowering::FunctionFacts>& facts) {
  static const size_t kArrays[] = {offsetof(BlockState, spill),     offsetof(BlockState, next),
                                   offsetof(BlockState, exchange),  offsetof(BlockState, released),
                                   offsetof(BlockState, warp_mask), offsetof(BlockState, fragments),
                                   offsetof(BlockState, barrier),   offsetof(BlockState, shfl_exchange),
                                   offsetof(BlockState, shfl_released)};
  constexpr size_t kCount = std::size(kArrays);
  const DataLayout& dl = m.getDataLayout();
  // Which array an address is in (-1: the program's memory).
  auto array_of = [&](Value* address, Argument* block) -> int {
    auto* base = dyn_cast<LoadInst>(getUnderlyingObject(address));
    if (!base)
      return -1;
    Value* field = base->getPointerOperand();
    APInt offset(64, 0);
    Value* root = field->stripAndAccumulateConstantOffsets(dl, offset, true);
    if (root != block)
      return -1;
    for (size_t a = 0; a < kCount; ++a)
      if (offset == kArrays[a])
        return int(a);
    return -1;
  };
  // A register's save or restore names its slot (insert_spills).
  auto slot_of = [](Instruction& i) -> int64_t {
    if (MDNode* md = i.getMetadata(kSpillMetadata))
      return int64_t(mdconst::extract<ConstantInt>(md->getOperand(1))->getZExtValue());
    if (MDNode* md = i.getMetadata(kSlotMetadata))
      return int64_t(mdconst::extract<ConstantInt>(md->getOperand(0))->getZExtValue());
    return -1;
  };
  // One scope per array other than the spill area, and one per spill slot in use.
  struct Access {
    Instruction* i;
    int array;
    int64_t slot;
  };
  std::vector<Access> accesses;
  int64_t slots = 0;
  for (auto& [fn, f] : facts) {
    if (!f.block || fn->isDeclaration())
      continue;
    for (BasicBlock& bb : *fn)
      for (Instruction& i : bb) {
        Value* address = nullptr;
        if (auto* l = dyn_cast<LoadInst>(&i))
          address = l->getPointerOperand();
        else if (auto* s = dyn_cast<StoreInst>(&i))
          address = s->getPointerOperand();
        else if (auto* a = dyn_cast<AtomicRMWInst>(&i))
          address = a->getPointerOperand();
        else if (auto* x = dyn_cast<AtomicCmpXchgInst>(&i))
          address = x->getPointerOperand();
        else if (!isa<MemIntrinsic>(&i))
          continue;
        int a = address ? array_of(address, f.block) : -1;
        int64_t slot = a == 0 ? slot_of(i) : -1;
        accesses.push_back({&i, a, slot});
        slots = std::max(slots, slot + 1);
      }
  }
  LLVMContext& c = m.getContext();
  MDBuilder md(c);
  MDNode* domain = md.createAnonymousAliasScopeDomain("mimic executor");
  // Scope k: array k for k in [1, kCount); spill slot s: kCount + s; the spill area as a
  // whole (an access whose slot is not known): 0.
  SmallVector<Metadata*, 64> scopes;
  for (int64_t k = 0; k < int64_t(kCount) + slots; ++k)
    scopes.push_back(md.createAnonymousAliasScope(domain, "executor " + std::to_string(k)));
  auto scope_of = [&](const Access& a) { return a.array == 0 && a.slot >= 0 ? size_t(kCount + a.slot) : size_t(a.array); };
  MDNode* all = MDNode::get(c, scopes);
  std::map<size_t, std::pair<MDNode*, MDNode*>> tags; // scope -> (its own, all the others)
  auto tag = [&](size_t k) -> std::pair<MDNode*, MDNode*>& {
    auto it = tags.find(k);
    if (it != tags.end())
      return it->second;
    SmallVector<Metadata*, 64> rest;
    for (size_t o = 0; o < scopes.size(); ++o) {
      if (o == k)
        continue;
      // The spill area as a whole may be any slot, and any slot part of it.
      if ((k == 0 && o >= kCount) || (k >= kCount && o == 0))
        continue;
      rest.push_back(scopes[o]);
    }
    return tags[k] = {MDNode::get(c, {scopes[k]}), MDNode::get(c, rest)};
  };
  for (const Access& a : accesses) {
    if (a.array < 0) {
      a.i->setMetadata(LLVMContext::MD_noalias, all);
      continue;
    }
    auto& [own, others] = tag(scope_of(a));
    a.i->setMetadata(LLVMContext::MD_alias_scope, own);
    a.i->setMetadata(LLVMContext::MD_noalias, others);
  }
}

} // namespace

Result<LoweredProgram> ModuleLowering::run() {
  std::string failures;
  LoweredProgram out;
  for (size_t i = 0; i < program_.kernels.size(); ++i) {
    const runtime::KernelInfo& k = program_.kernels[i];
    try {
      FunctionLowering fl(*this, k, i);
      Function* fn = fl.run();
      current = nullptr;
      size_t frame = (fl.local_bytes() + 15) / 16 * 16;
      out.kernels.push_back({fn->getName().str(), fl.splits, frame + call_stack_bytes(fn), fl.spill_slots,
                             reaches(fn, &FunctionFacts::grid_sync), reaches(fn, &FunctionFacts::cluster),
                             fl.plain_exit, fl.calls});
    } catch (const LoweringError& e) {
      failures += "\n  kernel '" + k.name + "': " + e.message;
    }
  }
  // Functions whose addresses tables of function pointers hold are compiled too, with
  // symbols the backend can look up.
  if (!program_.kernels.empty()) {
    std::vector<std::string_view> named;
    std::function<void(const ptx::Operand&)> walk = [&](const ptx::Operand& op) {
      if (op.kind == ptx::OperandKind::Name || op.kind == ptx::OperandKind::GenericOf ||
          op.kind == ptx::OperandKind::MaskedName)
        named.push_back(op.name_view());
      else if (op.kind == ptx::OperandKind::InitList)
        for (const ptx::Operand& e : op.children())
          walk(e);
    };
    for (const auto& m : program_.modules)
      for (const ptx::TopLevel& item : m->items)
        if (item.kind == ptx::DirectiveKind::Var && item.var->init)
          walk(*item.var->init);
    std::set<std::string_view> done;
    for (std::string_view n : named) {
      const ptx::Function* f = ptx_function(n);
      if (!f || !f->body || !done.insert(n).second)
        continue;
      try {
        Function* fn = callee(*f, program_.kernels[0], 0);
        fn->setLinkage(GlobalValue::ExternalLinkage);
        out.address_taken.push_back({std::string(n), fn->getName().str()});
      } catch (const LoweringError& e) {
        failures += "\n  function '" + std::string(n) + "' (its address is in a global): " + e.message;
      }
    }
  }
  if (!failures.empty())
    return Error(program_.origin + ": the code generator cannot translate:" + failures, CUDA_ERROR_INVALID_PTX);
  if (!gpu())
    tag_executor_memory(*module_, facts);
  std::string broken;
  raw_string_ostream os(broken);
  if (verifyModule(*module_, &os))
    return Error(program_.origin + ": internal error, the generated IR is invalid: " + broken, CUDA_ERROR_INVALID_PTX);
  out.globals = global_names_;
  out.module = std::move(module_);
  out.context = std::move(context_);
  return out;
}

std::vector<KernelVerdict> ModuleLowering::check() {
  std::vector<KernelVerdict> out;
  for (size_t i = 0; i < program_.kernels.size(); ++i) {
    KernelVerdict v;
    v.name = program_.kernels[i].name;
    try {
      FunctionLowering fl(*this, program_.kernels[i], i);
      Function* fn = fl.run();
      std::string broken;
      raw_string_ostream os(broken);
      if (verifyFunction(*fn, &os))
        v.error = "internal error, invalid IR: " + broken;
      else
        v.translates = true;
    } catch (const LoweringError& e) {
      v.error = e.message;
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<KernelVerdict> check_kernels(const runtime::Program& program, Target target) {
  ModuleLowering m(program, {target, false});
  return m.check();
}

std::string global_symbol(std::string_view name) { return "mimic_global." + std::string(name); }

Result<LoweredProgram> lower(const runtime::Program& program, bool check_memory) {
  return lower(program, LowerOptions{Target::Cpu, check_memory});
}

Result<LoweredProgram> lower(const runtime::Program& program, const LowerOptions& options) {
  // Programs of several modules (-rdc builds, cuLink images) are linked by name: a
  // function or variable declared .extern in one module is the one another defines.
  ModuleLowering m(program, options);
  m.check_memory = options.check_memory && options.target == Target::Cpu;
  if (!m.ambiguous().empty())
    return Error(program.origin + ": several of its PTX modules define '" + m.ambiguous() +
                     "'; the code generator links modules by name and cannot tell them apart",
                 CUDA_ERROR_NOT_SUPPORTED);
  return m.run();
}

} // namespace mimic::codegen
