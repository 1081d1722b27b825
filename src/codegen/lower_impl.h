// Internals of the PTX -> LLVM lowering, shared by lower.cpp (structure, operands) and
// lower_instructions.cpp (one lowering per instruction family).
#pragma once

#include <cstring>
#include <cuda.h>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "codegen/lower.h"
#include "ptx/printer.h"
#include "ptx/summary.h"

namespace mimic::codegen {

// Thrown inside the lowering of one kernel; turned into that kernel's entry in the error.
struct LoweringError {
  std::string message;
};

class ModuleLowering {
public:
  explicit ModuleLowering(const runtime::Program& program);
  Result<LoweredProgram> run();
  std::vector<KernelVerdict> check();

  llvm::Module* module() { return module_.get(); }
  llvm::Function* sreg_fn();
  // The external global standing for a module-level variable, or null if none is named so.
  llvm::GlobalVariable* global(std::string_view name);

private:
  const runtime::Program& program_;
  std::unique_ptr<llvm::LLVMContext> context_;
  std::unique_ptr<llvm::Module> module_;
  llvm::Function* sreg_ = nullptr;
  std::map<std::string, llvm::GlobalVariable*, std::less<>> globals_;
  std::vector<std::string> global_names_;
};

class FunctionLowering {
public:
  FunctionLowering(ModuleLowering& m, const runtime::KernelInfo& info, size_t index)
      : lowering_(m), info_(info), f_(*info.function), index_(index), b_(m.module()->getContext()) {}
  llvm::Function* run();

private:
  struct Register {
    llvm::AllocaInst* storage = nullptr;
    llvm::Type* type = nullptr;
    ptx::Modifier ptx_type = ptx::Modifier::None;
  };
  struct Scope {
    std::map<std::string_view, const ptx::VarDecl*> names;
    std::map<std::string_view, const ptx::VarDecl*> ranges;
  };

  llvm::LLVMContext& ctx() { return b_.getContext(); }
  llvm::Type* type_of(ptx::Modifier t);
  static bool is_signed(ptx::Modifier t);
  static bool is_float(ptx::Modifier t);
  [[noreturn]] void unsupported(const ptx::Instruction& ins, const std::string& what);

  void declare(const ptx::VarDecl& d);
  Register* reg(std::string_view name);
  llvm::Value* convert(llvm::Value* v, llvm::Type* to, bool sign_extend);
  llvm::Value* special_register(const ptx::Operand& op);
  llvm::Value* symbol_address(std::string_view name);
  llvm::Value* value(const ptx::Instruction& ins, const ptx::Operand& op, llvm::Type* want, bool sign_extend);
  void store(const ptx::Instruction& ins, const ptx::Operand& op, llvm::Value* v, bool sign_extend);
  llvm::Value* address(const ptx::Instruction& ins, const ptx::Operand& op, ptx::Modifier space);
  void collect_labels(const ptx::Block& block);
  llvm::BasicBlock* label(const ptx::Instruction& ins, std::string_view name);
  void start_block_if_terminated();
  void lower_block(const ptx::Block& block);

  // lower_instructions.cpp
  void lower_instruction(const ptx::Instruction& ins);
  ptx::Modifier instruction_type(const ptx::Instruction& ins, size_t nth = 0);
  void lower_integer_or_float(const ptx::Instruction& ins);
  void lower_setp(const ptx::Instruction& ins);
  void lower_cvt(const ptx::Instruction& ins);
  void lower_memory(const ptx::Instruction& ins);
  void lower_atomic(const ptx::Instruction& ins);
  llvm::Value* flush_denormal(llvm::Value* v);
  llvm::Value* saturate(llvm::Value* v);

  ModuleLowering& lowering_;
  const runtime::KernelInfo& info_;
  const ptx::Function& f_;
  size_t index_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::Value* params_ = nullptr;
  llvm::Value* state_ = nullptr;
  std::vector<Scope> scopes_;
  std::unordered_map<std::string, Register> registers_;
  std::map<std::string_view, llvm::BasicBlock*> labels_;
  std::map<std::string_view, size_t> kernel_params_;
};

} // namespace mimic::codegen
