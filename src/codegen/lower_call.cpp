// Calls: `call (rets), f, (args)` to a .func with a body becomes an LLVM call with the
// parameters passed by reference (argv/retv arrays of pointers to their storage: a call
// sequence's .param variables, or temporaries for the .reg ABI and constants); calls
// through a register call the address `mov r, f` took. The CUDA device runtime's .extern
// functions (vprintf, __assertfail, malloc, free) call the backend's implementations.
#include "codegen/lower_impl.h"

namespace mimic::codegen {

using namespace llvm;

Value* FunctionLowering::param_storage(std::string_view name) {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
    if (auto it = s->params.find(name); it != s->params.end())
      return it->second;
  return nullptr;
}

// The callee ended the thread (exit, trap, assert): next[t] says how; this function
// stops here too.
void FunctionLowering::propagate_stop() {
  if (is_kernel_)
    b_.CreateBr(latch_);
  else
    b_.CreateRetVoid();
}

namespace {

struct CallOperands {
  const ptx::Operand* rets = nullptr;
  const ptx::Operand* target = nullptr;
  const ptx::Operand* args = nullptr;
};

CallOperands call_operands(const ptx::Instruction& ins) {
  CallOperands c;
  size_t i = 0;
  if (ins.num_operands > 0 && ins.operands[0].kind == ptx::OperandKind::List)
    c.rets = &ins.operands[i++];
  if (i < ins.num_operands)
    c.target = &ins.operands[i++];
  if (i < ins.num_operands && ins.operands[i].kind == ptx::OperandKind::List)
    c.args = &ins.operands[i++];
  return c;
}

} // namespace

void FunctionLowering::lower_call(const ptx::Instruction& ins) {
  CallOperands c = call_operands(ins);
  if (!c.target || c.target->kind != ptx::OperandKind::Name)
    unsupported(ins, "a call needs a function name or a register holding its address");
  std::string_view name = c.target->name_view();
  const ptx::Function* decl = lowering_.ptx_function(name);
  Value* callee = nullptr;
  auto& facts = lowering_.facts[fn_];
  if (decl && !decl->body) {
    if (lower_builtin_call(ins, name, c.rets, c.args))
      return;
    unsupported(ins, "'" + std::string(name) +
                         "' is an external function that neither the program nor the CUDA device runtime "
                         "(printf, assert, malloc, free) defines");
  }
  // (A GPU has no split points: functions that wait for other threads are called too.)
  const bool in_place = !gpu() && decl && lowering_.has_split_points(*decl);
  if (in_place) {
    // lowered below, where the arguments are
  } else if (decl) {
    Function* fn = lowering_.callee(*decl, info_, index_);
    facts.callees.push_back(fn);
    callee = fn;
  } else if (Register* r = reg(name)) {
    callee = b_.CreateIntToPtr(convert(b_.CreateLoad(r->type, r->storage), b_.getInt64Ty(), false), b_.getPtrTy());
    facts.indirect = true;
  } else {
    unsupported(ins, "'" + std::string(name) + "' is not a function of this program");
  }
  // Parameters and return values by reference.
  std::vector<std::pair<const ptx::Operand*, AllocaInst*>> register_returns;
  auto references = [&](const ptx::Operand* list, std::span<const ptx::VarDecl> declared, bool returns) -> Value* {
    if (!list || list->count == 0)
      return ConstantPointerNull::get(b_.getPtrTy());
    IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    AllocaInst* array = entry.CreateAlloca(ArrayType::get(b_.getPtrTy(), list->count));
    for (uint32_t j = 0; j < list->count; ++j) {
      const ptx::Operand& e = list->elems[j];
      Value* storage = e.kind == ptx::OperandKind::Name ? param_storage(e.name_view()) : nullptr;
      if (!storage) { // the .reg ABI: a register or a constant, through a temporary
        Type* t = nullptr;
        if (j < declared.size())
          t = type_of(declared[j].type);
        else if (e.kind == ptx::OperandKind::Name)
          if (Register* r = reg(e.name_view()))
            t = r->type;
        if (!t)
          t = b_.getInt64Ty();
        AllocaInst* tmp = entry.CreateAlloca(t);
        if (returns)
          register_returns.push_back({&e, tmp});
        else
          b_.CreateStore(value(ins, e, t, false), tmp);
        storage = tmp;
      }
      b_.CreateStore(storage, b_.CreateConstGEP1_64(b_.getPtrTy(), array, j));
    }
    return array;
  };
  Value* argv = references(c.args, decl ? decl->params : std::span<const ptx::VarDecl>(), false);
  Value* retv = references(c.rets, decl ? decl->returns : std::span<const ptx::VarDecl>(), true);
  if (in_place) {
    inline_call(ins, *decl, argv, retv);
    for (auto& [operand, tmp] : register_returns)
      store(ins, *operand, b_.CreateLoad(tmp->getAllocatedType(), tmp), false);
    return;
  }
  Value* sp = b_.getInt64((local_bytes_ + 15) / 16 * 16);
  if (local_sp_)
    sp = b_.CreateAdd(local_sp_, sp);
  Type* ptr = b_.getPtrTy();
  FunctionType* type = FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, b_.getInt32Ty(), b_.getInt64Ty()}, false);
  if (gpu()) { // no block state, thread loop or shared local window; a trap ends the wave
    b_.CreateCall(type, callee, {argv, retv, ConstantPointerNull::get(b_.getPtrTy()), b_.getInt32(0), b_.getInt64(0)});
    for (auto& [operand, tmp] : register_returns)
      store(ins, *operand, b_.CreateLoad(tmp->getAllocatedType(), tmp), false);
    return;
  }
  b_.CreateCall(type, callee, {argv, retv, block_, thread_index(), sp});
  for (auto& [operand, tmp] : register_returns)
    store(ins, *operand, b_.CreateLoad(tmp->getAllocatedType(), tmp), false);
  // The callee may have ended the thread.
  Value* next = block_field(offsetof(BlockState, next), ptr);
  Value* code = b_.CreateLoad(b_.getInt32Ty(), b_.CreateGEP(b_.getInt32Ty(), next, thread_index()));
  BasicBlock* stopped = BasicBlock::Create(ctx(), "callee_stopped", fn_);
  BasicBlock* after = BasicBlock::Create(ctx(), "after_call", fn_);
  b_.CreateCondBr(b_.CreateICmpUGE(code, b_.getInt32(kThreadStopped)), stopped, after);
  b_.SetInsertPoint(stopped);
  propagate_stop();
  b_.SetInsertPoint(after);
}

void FunctionLowering::inline_call(const ptx::Instruction& ins, const ptx::Function& callee, Value* argv,
                                   Value* retv) {
  for (const InlineFrame& frame : inline_stack_)
    if (frame.callee == &callee)
      unsupported(ins, "'" + std::string(callee.name) +
                           "' waits for other threads (a barrier or warp operation) and is recursive: it cannot "
                           "be inlined into the kernel");
  if (!is_kernel_)
    throw LoweringError{"function '" + std::string(f_.name) + "' calls '" + std::string(callee.name) +
                        "', which waits for other threads, and is itself called through a pointer or recursively"};
  // The callee sees its own registers, labels, parameters and .local variables (placed
  // after the kernel's, in the thread's frame).
  auto saved_scopes = std::move(scopes_);
  auto saved_labels = std::move(labels_);
  auto saved_tables = std::move(branch_tables_);
  auto saved_params = std::move(func_params_);
  auto saved_returns = std::move(func_returns_);
  auto saved_locals = std::move(locals_);
  Value* saved_argv = argv_;
  Value* saved_retv = retv_;
  scopes_.clear();
  labels_.clear();
  branch_tables_.clear();
  func_params_.clear();
  func_returns_.clear();
  locals_.clear();
  argv_ = argv;
  retv_ = retv;
  layout_locals(*callee.body);
  inlined_waiting_call_ = true;
  BasicBlock* exit = BasicBlock::Create(ctx(), "inlined_" + std::string(callee.name) + "_end", fn_);
  inline_stack_.push_back({&callee, exit});
  scopes_.emplace_back();
  bind_parameters(callee);
  collect_labels(*callee.body);
  lower_block(*callee.body);
  if (!b_.GetInsertBlock()->getTerminator())
    return_from_function();
  inline_stack_.pop_back();
  scopes_ = std::move(saved_scopes);
  labels_ = std::move(saved_labels);
  branch_tables_ = std::move(saved_tables);
  func_params_ = std::move(saved_params);
  func_returns_ = std::move(saved_returns);
  locals_ = std::move(saved_locals);
  argv_ = saved_argv;
  retv_ = saved_retv;
  b_.SetInsertPoint(exit);
}

bool FunctionLowering::lower_builtin_call(const ptx::Instruction& ins, std::string_view name, const ptx::Operand* rets,
                                          const ptx::Operand* args) {
  Type* i32 = b_.getInt32Ty();
  Type* i64 = b_.getInt64Ty();
  Type* ptr = b_.getPtrTy();
  auto arg = [&](uint32_t j, Type* t) -> Value* {
    if (!args || j >= args->count)
      unsupported(ins, "'" + std::string(name) + "' is called with too few arguments");
    const ptx::Operand& e = args->elems[j];
    if (e.kind == ptx::OperandKind::Name)
      if (Value* storage = param_storage(e.name_view()))
        return b_.CreateLoad(t, storage);
    return value(ins, e, t, false);
  };
  auto as_pointer = [&](Value* v) { return b_.CreateIntToPtr(v, ptr); };
  auto set_return = [&](Value* v) {
    if (!rets || rets->count == 0)
      return;
    const ptx::Operand& e = rets->elems[0];
    if (e.kind == ptx::OperandKind::Name)
      if (Value* storage = param_storage(e.name_view())) {
        b_.CreateStore(v, storage);
        return;
      }
    store(ins, e, v, false);
  };
  if (gpu() && name == "malloc") { // from the device heap (backends/amdgpu/code_object.h)
    Function* f = lowering_.gpu_log_function(kGpuMalloc, ptr, {i64});
    set_return(b_.CreatePtrToInt(b_.CreateCall(f, {arg(0, i64)}), i64));
    return true;
  }
  if (gpu() && name == "free") {
    Function* f = lowering_.gpu_log_function(kGpuFree, b_.getVoidTy(), {ptr});
    b_.CreateCall(f, {as_pointer(arg(0, i64))});
    return true;
  }
  if (gpu() && name == "vprintf") { // a record in the device log (backends/amdgpu/code_object.h)
    Function* f = lowering_.gpu_log_function(kGpuPrintf, i32, {ptr, ptr});
    set_return(b_.CreateCall(f, {as_pointer(arg(0, i64)), as_pointer(arg(1, i64))}));
    return true;
  }
  if (gpu() && name == "__assertfail") { // a record in the device log, then the wave traps
    Function* f = lowering_.gpu_log_function(kGpuAssert, b_.getVoidTy(), {ptr, ptr, i32, ptr});
    b_.CreateCall(f, {as_pointer(arg(0, i64)), as_pointer(arg(1, i64)), arg(2, i32), as_pointer(arg(3, i64))});
    stop_thread(kThreadAsserted);
    start_block_if_terminated();
    return true;
  }
  if (name == "vprintf") {
    Function* f = lowering_.helper("mimic_vprintf", i32, {ptr, ptr});
    set_return(b_.CreateCall(f, {as_pointer(arg(0, i64)), as_pointer(arg(1, i64))}));
    return true;
  }
  if (name == "malloc") {
    Function* f = lowering_.helper("mimic_device_malloc", ptr, {i64});
    set_return(b_.CreatePtrToInt(b_.CreateCall(f, {arg(0, i64)}), i64));
    return true;
  }
  if (name == "free") {
    Function* f = lowering_.helper("mimic_device_free", b_.getVoidTy(), {ptr});
    b_.CreateCall(f, {as_pointer(arg(0, i64))});
    return true;
  }
  if (name == "__assertfail") {
    // __assertfail(message, file, line, function, charSize): report, and the thread stops;
    // the launch ends with CUDA_ERROR_ASSERT.
    Function* f = lowering_.helper("mimic_assert_fail", b_.getVoidTy(), {ptr, i32, ptr, ptr, i32, ptr});
    b_.CreateCall(f, {block_, thread_index(), as_pointer(arg(0, i64)), as_pointer(arg(1, i64)), arg(2, i32),
                      as_pointer(arg(3, i64))});
    stop_thread(kThreadAsserted);
    start_block_if_terminated();
    return true;
  }
  return false;
}

} // namespace mimic::codegen
