// PTX programs compiled into AMDGPU code objects in-process (code_object.h): the shared
// lowering in its GPU form (codegen/lower_gpu.cpp), LLVM's AMDGPU backend for RDNA in wave32
// with code object version 5 (what ROCm 6 and 7 load), and lld linking the relocatable
// object into the shared object the HIP runtime loads. The facts a launch needs (argument
// segment size, static LDS) are read back from the code object's own metadata note.
#include "backends/amdgpu/code_object.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <mutex>
#include <optional>
#include <unistd.h>

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/Transforms/Scalar/InferAddressSpaces.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <lld/Common/Driver.h>

#include "backends/amdgpu/object_cache.h"
#include "backends/amdgpu/texture_library.h"
#include "codegen/lower.h"
#include "runtime/program.h"

LLD_HAS_DRIVER(elf)

namespace mimic::amdgpu {

namespace {

constexpr unsigned kCodeObjectVersion = 5; // ROCm 6 and 7 load v5 (v6 needs ROCm 6.2+ loaders)

// LLVM's AMDGPU target, registered once (the CPU backend registers only the host's).
void initialise_amdgpu() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
}

// LLVM reports errors of code generation (LDS over the limit, unsupported operations)
// through the context; they are collected and returned instead of ending the process.
struct Diagnostics {
  std::string errors;
  static void handle(const llvm::DiagnosticInfo* info, void* self) {
    if (info->getSeverity() != llvm::DS_Error) return;
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info->print(printer);
    if (text.starts_with("<unknown>:0:0: ")) // no source location: the IR is Mimic's own
      text.erase(0, 15);
    auto* d = static_cast<Diagnostics*>(self);
    if (!d->errors.empty()) d->errors += "; ";
    d->errors += text;
  }
};

Result<std::unique_ptr<llvm::TargetMachine>> make_target_machine(std::string_view gfx) {
  initialise_amdgpu();
  llvm::Triple triple("amdgcn-amd-amdhsa");
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return Error("the LLVM this Mimic was built with has no AMDGPU target: " + error,
                 CUDA_ERROR_NOT_SUPPORTED);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, std::string(gfx), "+wavefrontsize32", options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return Error("LLVM cannot generate code for " + std::string(gfx), CUDA_ERROR_NOT_SUPPORTED);
  return tm;
}

// The lowering leaves allocas in address space 0; AMDGPU keeps them in private memory (5).
// Each becomes a private alloca seen through a generic pointer, which InferAddressSpaces
// and SROA turn back into private accesses or registers.
void move_allocas_to_private(llvm::Module& m) {
  unsigned space = m.getDataLayout().getAllocaAddrSpace();
  std::vector<llvm::AllocaInst*> moved;
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb)
        if (auto* a = llvm::dyn_cast<llvm::AllocaInst>(&i); a && a->getAddressSpace() != space)
          moved.push_back(a);
  for (llvm::AllocaInst* a : moved) {
    llvm::IRBuilder<> b(a);
    llvm::AllocaInst* fresh = b.CreateAlloca(a->getAllocatedType(), space, a->getArraySize());
    fresh->setAlignment(a->getAlign());
    fresh->takeName(a);
    a->replaceAllUsesWith(b.CreateAddrSpaceCast(fresh, a->getType()));
    a->eraseFromParent();
  }
}

// Math the AMDGPU backend has no instruction or library call for: exp2/tanh/log2/sin/cos on
// halves go through f32 (PTX's f16 approximations are within f32's), so do the f64 ones
// (PTX has no f64 ex2 or tanh: the shared lowering computes halves' ex2 and tanh in f64,
// and f32 carries more than a half's result needs), and tanh.approx.f32 is computed from exp2
// (within PTX's 2^-11 relative error: an odd polynomial near 0, where (1 - e) / (1 + e) would
// cancel).
void lower_unsupported_math(llvm::Module& m) {
  std::vector<llvm::IntrinsicInst*> calls;
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb)
        if (auto* c = llvm::dyn_cast<llvm::IntrinsicInst>(&i)) switch (c->getIntrinsicID()) {
          case llvm::Intrinsic::tanh:
          case llvm::Intrinsic::exp2:
          case llvm::Intrinsic::log2:
          case llvm::Intrinsic::sin:
          case llvm::Intrinsic::cos:
            calls.push_back(c);
            break;
          default:
            break;
          }
  for (llvm::IntrinsicInst* c : calls) {
    llvm::IRBuilder<> b(c);
    llvm::Value* x = c->getArgOperand(0);
    llvm::Type* type = x->getType();
    llvm::Type* element = type->getScalarType();
    bool narrow = element->isHalfTy() || element->isBFloatTy();
    if (!narrow && !element->isDoubleTy() &&
        !(element->isFloatTy() && c->getIntrinsicID() == llvm::Intrinsic::tanh))
      continue;
    llvm::Type* f32 = type->getWithNewType(b.getFloatTy());
    llvm::Value* wide = element->isFloatTy() ? x
                        : narrow             ? b.CreateFPExt(x, f32)
                                             : b.CreateFPTrunc(x, f32);
    llvm::Value* r;
    if (c->getIntrinsicID() == llvm::Intrinsic::tanh) {
      llvm::Value* a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, wide);
      llvm::Value* e = b.CreateUnaryIntrinsic(
          llvm::Intrinsic::exp2,
          b.CreateFMul(a, llvm::ConstantFP::get(f32, -2.0 * 1.4426950408889634)));
      llvm::Value* far = b.CreateFDiv(b.CreateFSub(llvm::ConstantFP::get(f32, 1.0), e),
                                      b.CreateFAdd(llvm::ConstantFP::get(f32, 1.0), e));
      llvm::Value* a2 = b.CreateFMul(a, a);
      // a - a^3/3 + 2a^5/15 - 17a^7/315
      llvm::Value* poly = llvm::ConstantFP::get(f32, -17.0 / 315.0);
      poly = b.CreateFAdd(b.CreateFMul(poly, a2), llvm::ConstantFP::get(f32, 2.0 / 15.0));
      poly = b.CreateFAdd(b.CreateFMul(poly, a2), llvm::ConstantFP::get(f32, -1.0 / 3.0));
      poly = b.CreateFAdd(b.CreateFMul(b.CreateFMul(poly, a2), a), a);
      llvm::Value* near = b.CreateFCmpOLT(a, llvm::ConstantFP::get(f32, 0.0625));
      r = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, b.CreateSelect(near, poly, far), wide);
      r = b.CreateSelect(b.CreateFCmpUNO(wide, wide), wide, r); // NaN stays NaN
    } else {
      r = b.CreateUnaryIntrinsic(c->getIntrinsicID(), wide);
    }
    if (narrow)
      r = b.CreateFPTrunc(r, type);
    else if (element->isDoubleTy())
      r = b.CreateFPExt(r, type);
    c->replaceAllUsesWith(r);
    c->eraseFromParent();
  }
}

void optimise(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  {
    llvm::FunctionPassManager first;
    first.addPass(llvm::InferAddressSpacesPass());
    first.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(first)));
  }
  mpm.addPass(pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2));
  mpm.run(m, mam);
}

// With no runtime addresses (`mimic compile`), the code object defines the module's
// variables itself, named as in PTX, with their initial values. An initializer that names
// a symbol (a variable, a function) becomes a relocated 64-bit address.
Status define_globals(const runtime::Program& program, const codegen::LoweredProgram& lp,
                      llvm::Module& m) {
  llvm::LLVMContext& c = m.getContext();
  llvm::Type* i8 = llvm::Type::getInt8Ty(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  // Each initializer is written twice with different stand-ins for symbol addresses: the
  // 64-bit words that differ are addresses, the stand-in says which symbol and offset.
  std::vector<std::string> named;
  auto stand_in = [&](uint64_t tag) {
    return [&named, tag](std::string_view name) -> Result<uint64_t> {
      size_t k = 0;
      while (k < named.size() && named[k] != name)
        ++k;
      if (k == named.size()) named.emplace_back(name);
      return (uint64_t(k + 1) << 40) | tag;
    };
  };
  struct Pending {
    llvm::GlobalVariable* old;
    const runtime::GlobalInfo* info;
  };
  std::vector<Pending> pending;
  for (const std::string& name : lp.globals) {
    llvm::GlobalVariable* g = m.getNamedGlobal(codegen::global_symbol(name));
    const runtime::GlobalInfo* info = program.global(name);
    if (!g || !info)
      return Error(program.origin + ": internal error, no variable '" + name + "' to define",
                   CUDA_ERROR_INVALID_PTX);
    pending.push_back({g, info});
  }
  for (const Pending& p : pending) {
    const runtime::GlobalInfo& info = *p.info;
    std::vector<uint8_t> a(info.size), b(info.size);
    if (Status s = runtime::initialize_global(info, a.data(), stand_in(0)); !s)
      return Error(program.origin + ": " + s.error().message(), CUDA_ERROR_INVALID_PTX);
    if (Status s = runtime::initialize_global(info, b.data(), stand_in(1ull << 62)); !s)
      return Error(program.origin + ": " + s.error().message(), CUDA_ERROR_INVALID_PTX);
    std::vector<llvm::Constant*> parts;
    std::vector<uint8_t> run;
    auto flush = [&] {
      if (!run.empty()) parts.push_back(llvm::ConstantDataArray::get(c, run));
      run.clear();
    };
    for (size_t at = 0; at < info.size;) {
      if (at % 8 == 0 && at + 8 <= info.size && std::memcmp(&a[at], &b[at], 8) != 0) {
        uint64_t word;
        std::memcpy(&word, &a[at], 8);
        size_t k = size_t(word >> 40) - 1;
        uint64_t offset = word & ((1ull << 40) - 1);
        if (k >= named.size())
          return Error(program.origin + ": cannot read the initializer of '" + info.name + "'",
                       CUDA_ERROR_INVALID_PTX);
        llvm::Constant* target = m.getNamedGlobal(codegen::global_symbol(named[k]));
        if (!target)
          for (const auto& [ptx_name, symbol] : lp.address_taken)
            if (ptx_name == named[k]) target = m.getFunction(symbol);
        if (!target)
          return Error(program.origin + ": the initializer of '" + info.name + "' names '" +
                           named[k] +
                           "', which is neither a variable nor a function of the program",
                       CUDA_ERROR_INVALID_PTX);
        flush();
        llvm::Constant* address = llvm::ConstantExpr::getPtrToInt(target, i64);
        if (offset)
          address = llvm::ConstantExpr::getAdd(address, llvm::ConstantInt::get(i64, offset));
        parts.push_back(address);
        at += 8;
        continue;
      }
      run.push_back(a[at++]);
    }
    flush();
    llvm::Constant* init = parts.size() == 1 && !parts[0]->getType()->isIntegerTy()
                               ? parts[0]
                               : llvm::ConstantStruct::getAnon(c, parts, true);
    if (parts.empty()) init = llvm::ConstantAggregateZero::get(llvm::ArrayType::get(i8, 1));
    auto* g =
        new llvm::GlobalVariable(m, init->getType(), false, llvm::GlobalValue::ExternalLinkage,
                                 init, info.name, nullptr, llvm::GlobalValue::NotThreadLocal, 1);
    g->setAlignment(llvm::Align(std::max<size_t>(info.align, 1)));
    g->setVisibility(llvm::GlobalValue::ProtectedVisibility);
    p.old->replaceAllUsesWith(g);
    p.old->eraseFromParent();
    if (g->getName() != info.name)
      return Error(program.origin + ": the variable '" + info.name +
                       "' has the name of another symbol",
                   CUDA_ERROR_INVALID_PTX);
  }
  return {};
}

// Bytes of vprintf's argument buffer for `format` (CUDA's packing: each argument aligned to
// its size; integers 4 bytes unless long, floating point 8, strings and pointers 8).
size_t printf_argument_bytes(std::string_view format) {
  size_t at = 0;
  auto take = [&](size_t size) { at = (at + size - 1) / size * size + size; };
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') continue;
    if (i + 1 < format.size() && format[i + 1] == '%') {
      ++i;
      continue;
    }
    ++i;
    while (i < format.size() && std::strchr("-+ #0123456789.", format[i]))
      ++i;
    bool wide = false;
    while (i < format.size() && std::strchr("hlLqjzt", format[i])) {
      wide |= format[i] != 'h';
      ++i;
    }
    if (i >= format.size()) break;
    switch (format[i]) {
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o':
    case 'c':
      take(wide ? 8 : 4);
      break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
    case 's':
    case 'p':
      take(8);
      break;
    default: // not a conversion: printed as written, takes no argument
      break;
    }
  }
  return at;
}

// The PTX text of the string constant `p` points into (a module variable), or nothing.
std::optional<std::string> constant_string(const runtime::Program& program, llvm::Value* p,
                                           const llvm::DataLayout& dl) {
  llvm::APInt offset(64, 0);
  auto* g =
      llvm::dyn_cast<llvm::GlobalVariable>(p->stripAndAccumulateConstantOffsets(dl, offset, true));
  if (!g) return std::nullopt;
  std::string name = g->getName().str();
  if (name.starts_with(codegen::global_symbol("")))
    name = name.substr(codegen::global_symbol("").size());
  const runtime::GlobalInfo* info = program.global(name);
  if (!info) return std::nullopt;
  std::vector<uint8_t> bytes(info->size);
  if (!runtime::initialize_global(*info, bytes.data(),
                                  [](std::string_view) -> Result<uint64_t> { return 0; }))
    return std::nullopt;
  size_t start = offset.getZExtValue();
  if (start >= bytes.size()) return std::nullopt;
  std::string text(bytes.begin() + long(start), bytes.end());
  return text.substr(0, text.find('\0'));
}

// printf, assert and texture traps (codegen::kGpuPrintf, kGpuAssert, kGpuTrap) as records
// in the device log (code_object.h). Returns whether the module uses the log.
Result<bool> lower_device_log(const runtime::Program& program, llvm::Module& m) {
  llvm::Function* printf_fn = m.getFunction(codegen::kGpuPrintf);
  llvm::Function* assert_fn = m.getFunction(codegen::kGpuAssert);
  llvm::Function* trap_fn = m.getFunction(codegen::kGpuTrap);
  std::vector<llvm::CallInst*> calls;
  for (llvm::Function* f : {printf_fn, assert_fn, trap_fn})
    if (f)
      for (llvm::User* u : f->users())
        if (auto* c = llvm::dyn_cast<llvm::CallInst>(u)) calls.push_back(c);
  if (calls.empty()) return false;
  llvm::LLVMContext& c = m.getContext();
  llvm::Type* i8 = llvm::Type::getInt8Ty(c);
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  auto* log = m.getNamedGlobal(kDeviceLogSymbol);
  if (!log)
    log = new llvm::GlobalVariable(m, llvm::ArrayType::get(i8, 0), false,
                                   llvm::GlobalValue::ExternalLinkage, nullptr, kDeviceLogSymbol,
                                   nullptr, llvm::GlobalValue::NotThreadLocal, 1);
  log->setAlignment(llvm::Align(16));
  for (llvm::CallInst* call : calls) {
    bool is_printf = call->getCalledFunction() == printf_fn;
    bool is_trap = call->getCalledFunction() == trap_fn;
    uint32_t bytes = 64; // an assert or trap record
    if (is_printf) {
      auto format = constant_string(program, call->getArgOperand(0), m.getDataLayout());
      if (!format)
        return Error(program.origin + ": printf in '" + call->getFunction()->getName().str() +
                         "' has a format that is not a constant string of the program; amdgpu "
                         "needs it at compile time",
                     CUDA_ERROR_NOT_SUPPORTED);
      bytes = uint32_t((16 + printf_argument_bytes(*format) + 7) / 8 * 8);
    }
    llvm::IRBuilder<> b(call);
    llvm::SyncScope::ID agent = c.getOrInsertSyncScopeID("agent");
    llvm::Value* used = b.CreateConstInBoundsGEP1_64(i8, log, 8);
    llvm::Value* offset = b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, used, b.getInt64(bytes),
                                            llvm::Align(8), llvm::AtomicOrdering::Monotonic, agent);
    llvm::Value* capacity = b.CreateAlignedLoad(i64, log, llvm::Align(16));
    llvm::Value* fits = b.CreateICmpULE(b.CreateAdd(offset, b.getInt64(bytes)), capacity);
    llvm::Instruction* then = llvm::SplitBlockAndInsertIfThen(fits, call, false);
    b.SetInsertPoint(then);
    llvm::Value* record = b.CreateGEP(i8, log, b.CreateAdd(offset, b.getInt64(16)));
    auto put = [&](uint64_t at, llvm::Value* v) {
      b.CreateAlignedStore(v, b.CreateConstInBoundsGEP1_64(i8, record, at), llvm::Align(4));
    };
    auto address = [&](llvm::Value* p) {
      return b.CreatePtrToInt(b.CreateAddrSpaceCast(p, b.getPtrTy()), i64);
    };
    DeviceLogKind kind = is_printf ? DeviceLogKind::Printf
                         : is_trap ? DeviceLogKind::Trap
                                   : DeviceLogKind::Assert;
    put(0, b.getInt32(uint32_t(kind)));
    put(4, b.getInt32(bytes));
    if (is_printf) {
      put(8, address(call->getArgOperand(0)));
      if (bytes > 16)
        b.CreateMemCpy(b.CreateConstInBoundsGEP1_64(i8, record, 16), llvm::Align(8),
                       call->getArgOperand(1), llvm::Align(8), bytes - 16);
    } else {
      if (is_trap) {
        put(8, call->getArgOperand(0));  // reason
        put(12, call->getArgOperand(1)); // instruction
        put(16, call->getArgOperand(2)); // handle
        put(24, call->getArgOperand(3)); // PTX line
        put(28, b.getInt32(0));
        put(32, b.getInt32(0));
      } else {
        put(8, address(call->getArgOperand(0)));
        put(16, address(call->getArgOperand(1)));
        put(24, address(call->getArgOperand(3)));
        put(32, call->getArgOperand(2));
      }
      const llvm::Intrinsic::ID ids[] = {
          llvm::Intrinsic::amdgcn_workgroup_id_x, llvm::Intrinsic::amdgcn_workgroup_id_y,
          llvm::Intrinsic::amdgcn_workgroup_id_z, llvm::Intrinsic::amdgcn_workitem_id_x,
          llvm::Intrinsic::amdgcn_workitem_id_y,  llvm::Intrinsic::amdgcn_workitem_id_z};
      for (size_t k = 0; k < 6; ++k)
        put(36 + 4 * k, b.CreateIntrinsic(ids[k], llvm::ArrayRef<llvm::Type*>{},
                                          llvm::ArrayRef<llvm::Value*>{}));
      put(60, b.getInt32(0));
    }
    if (!call->getType()->isVoidTy())
      call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), 0));
    call->eraseFromParent();
  }
  for (llvm::Function* f : {printf_fn, assert_fn, trap_fn})
    if (f && f->use_empty()) f->eraseFromParent();
  (void)i32;
  return true;
}

// malloc and free (codegen::kGpuMalloc, kGpuFree) on the device heap (code_object.h).
// Returns whether the module uses it.
bool lower_device_heap(llvm::Module& m) {
  llvm::Function* malloc_fn = m.getFunction(codegen::kGpuMalloc);
  llvm::Function* free_fn = m.getFunction(codegen::kGpuFree);
  if (!malloc_fn && !free_fn) return false;
  llvm::LLVMContext& c = m.getContext();
  llvm::Type* i8 = llvm::Type::getInt8Ty(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  auto* heap = new llvm::GlobalVariable(
      m, llvm::ArrayType::get(i8, 0), false, llvm::GlobalValue::ExternalLinkage, nullptr,
      kDeviceHeapSymbol, nullptr, llvm::GlobalValue::NotThreadLocal, 1);
  heap->setAlignment(llvm::Align(16));
  std::vector<llvm::CallInst*> calls;
  for (llvm::Function* f : {malloc_fn, free_fn})
    if (f)
      for (llvm::User* u : f->users())
        if (auto* call = llvm::dyn_cast<llvm::CallInst>(u)) calls.push_back(call);
  for (llvm::CallInst* call : calls) {
    if (call->getCalledFunction() == free_fn) { // the memory stays taken (code_object.h)
      call->eraseFromParent();
      continue;
    }
    llvm::IRBuilder<> b(call);
    llvm::Value* bytes =
        b.CreateAnd(b.CreateAdd(call->getArgOperand(0), b.getInt64(15)), b.getInt64(~uint64_t(15)));
    bytes = b.CreateSelect(b.CreateICmpEQ(bytes, b.getInt64(0)), b.getInt64(16), bytes);
    llvm::Value* offset = b.CreateAtomicRMW(
        llvm::AtomicRMWInst::Add, b.CreateConstInBoundsGEP1_64(i8, heap, 8), bytes, llvm::Align(8),
        llvm::AtomicOrdering::Monotonic, c.getOrInsertSyncScopeID("agent"));
    llvm::Value* capacity = b.CreateAlignedLoad(i64, heap, llvm::Align(16));
    llvm::Value* end = b.CreateAdd(offset, bytes);
    // Past the end (or wrapped around): NULL.
    llvm::Value* fits = b.CreateAnd(b.CreateICmpULE(end, capacity), b.CreateICmpUGE(end, offset));
    llvm::Value* block = b.CreateAddrSpaceCast(
        b.CreateGEP(i8, heap, b.CreateAdd(offset, b.getInt64(16))), b.getPtrTy());
    call->replaceAllUsesWith(
        b.CreateSelect(fits, block, llvm::ConstantPointerNull::get(b.getPtrTy())));
    call->eraseFromParent();
  }
  for (llvm::Function* f : {malloc_fn, free_fn})
    if (f && f->use_empty()) f->eraseFromParent();
  return true;
}

// The relocatable object (or assembly) of the lowered module.
Result<std::string> emit(llvm::Module& m, llvm::TargetMachine& tm, llvm::CodeGenFileType type,
                         Diagnostics& d) {
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    return Error("LLVM cannot emit code for " + tm.getTargetCPU().str(), CUDA_ERROR_NOT_SUPPORTED);
  pm.run(m);
  if (!d.errors.empty()) return Error(d.errors, CUDA_ERROR_INVALID_PTX);
  return std::string(out.begin(), out.end());
}

// lld as a library keeps global state: one link at a time, and none after a link that
// says it cannot run again.
Result<std::vector<uint8_t>> link(const std::string& object,
                                  const std::vector<std::string>& defsyms,
                                  const std::string& origin) {
  static std::mutex mutex;
  static bool broken = false;
  std::lock_guard lock(mutex);
  if (broken)
    return Error("the in-process linker failed earlier and cannot run again in this process",
                 CUDA_ERROR_UNKNOWN);
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("mimic-amdgpu", dir))
    return Error("cannot create a temporary folder to link in: " + ec.message(),
                 CUDA_ERROR_UNKNOWN);
  std::string in = std::string(dir) + "/code.o", out = std::string(dir) + "/code.hsaco";
  auto cleanup = [&] {
    std::remove(in.c_str());
    std::remove(out.c_str());
    llvm::sys::fs::remove(dir);
  };
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec) {
      cleanup();
      return Error("cannot write " + in + ": " + ec.message(), CUDA_ERROR_UNKNOWN);
    }
    os << object;
  }
  // -Bsymbolic: references to the runtime's globals (absolute symbols) go through GOT
  // entries that hold their addresses, with no dynamic relocation left for the loader.
  std::vector<const char*> args{"ld.lld", "-shared",   "-Bsymbolic", "--no-undefined",
                                "-o",     out.c_str(), in.c_str()};
  for (const std::string& d : defsyms)
    args.push_back(d.c_str());
  std::string messages;
  llvm::raw_string_ostream errs(messages);
  llvm::raw_null_ostream outs;
  lld::Result r = lld::lldMain(args, outs, errs, {{lld::Gnu, &lld::elf::link}});
  broken = !r.canRunAgain;
  if (r.retCode != 0) {
    cleanup();
    return Error(origin + ": linking the AMDGPU code object failed: " + messages,
                 CUDA_ERROR_INVALID_PTX);
  }
  auto file = llvm::MemoryBuffer::getFile(out);
  if (!file) {
    cleanup();
    return Error("cannot read the linked code object " + out, CUDA_ERROR_UNKNOWN);
  }
  std::vector<uint8_t> elf((*file)->getBufferStart(), (*file)->getBufferEnd());
  cleanup();
  return elf;
}

// Each kernel's facts from the code object's NT_AMDGPU_METADATA note (msgpack).
Status read_kernel_facts(CodeObject& co) {
  llvm::StringRef bytes(reinterpret_cast<const char*>(co.elf.data()), co.elf.size());
  auto elf = llvm::object::ELF64LEFile::create(bytes);
  if (!elf)
    return Error("the linked code object is not a 64-bit ELF: " + llvm::toString(elf.takeError()),
                 CUDA_ERROR_UNKNOWN);
  auto sections = elf->sections();
  if (!sections) return Error("the linked code object has no section table", CUDA_ERROR_UNKNOWN);
  llvm::msgpack::Document doc;
  bool found = false;
  for (const auto& sec : *sections) {
    if (sec.sh_type != llvm::ELF::SHT_NOTE) continue;
    llvm::Error err = llvm::Error::success();
    for (const auto& note : elf->notes(sec, err))
      if (note.getName() == "AMDGPU" && note.getType() == llvm::ELF::NT_AMDGPU_METADATA) {
        llvm::ArrayRef<uint8_t> desc = note.getDesc(sec.sh_addralign);
        found = doc.readFromBlob(
            llvm::StringRef(reinterpret_cast<const char*>(desc.data()), desc.size()), false);
      }
    if (err)
      return Error("cannot read the code object's notes: " + llvm::toString(std::move(err)),
                   CUDA_ERROR_UNKNOWN);
  }
  if (!found) return Error("the code object has no AMDGPU metadata note", CUDA_ERROR_UNKNOWN);
  auto& root = doc.getRoot().getMap(true);
  auto kernels = root.find(doc.getNode("amdhsa.kernels"));
  if (kernels == root.end() || kernels->second.getKind() != llvm::msgpack::Type::Array)
    return Error("the code object's metadata lists no kernels", CUDA_ERROR_UNKNOWN);
  for (auto& entry : kernels->second.getArray()) {
    if (entry.getKind() != llvm::msgpack::Type::Map) continue;
    auto& k = entry.getMap();
    auto field = [&](const char* key) -> uint64_t {
      auto it = k.find(doc.getNode(key));
      if (it == k.end()) return 0;
      if (it->second.getKind() == llvm::msgpack::Type::UInt) return it->second.getUInt();
      if (it->second.getKind() == llvm::msgpack::Type::Int) return uint64_t(it->second.getInt());
      return 0;
    };
    auto name = k.find(doc.getNode(".name"));
    if (name == k.end() || name->second.getKind() != llvm::msgpack::Type::String) continue;
    for (KernelObject& ko : co.kernels)
      if (ko.name == name->second.getString()) {
        ko.kernarg_bytes = field(".kernarg_segment_size");
        ko.static_lds_bytes = field(".group_segment_fixed_size");
        if (uint64_t n = field(".max_flat_workgroup_size")) ko.max_threads_per_block = unsigned(n);
      }
  }
  return {};
}

struct Lowered {
  bool uses_device_log = false;
  bool uses_grid_workspace = false;
  bool uses_device_heap = false;
  codegen::LoweredProgram program;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_ptr<Diagnostics> diagnostics;
};

// Lowered, made AMDGPU's and optimised: what every output form starts from.
Result<Lowered> lower_for(const runtime::Program& program, std::string_view gfx,
                          const std::map<std::string, void*, std::less<>>* globals) {
  if (!is_supported_target(gfx)) {
    std::string all;
    for (const std::string& t : supported_targets())
      all += (all.empty() ? "" : ", ") + t;
    return Error("'" + std::string(gfx) +
                     "' is not an AMD GPU Mimic generates code for (supported: " + all + ")",
                 CUDA_ERROR_NOT_SUPPORTED);
  }
  auto tm = make_target_machine(gfx);
  if (!tm) return tm.error();
  auto lowered = codegen::lower(program, codegen::LowerOptions{codegen::Target::Amdgpu, false});
  if (!lowered) return lowered.error();
  Lowered out{false,
              false,
              false,
              std::move(lowered.value()),
              std::move(tm.value()),
              std::make_unique<Diagnostics>()};
  llvm::Module& m = *out.program.module;
  m.getContext().setDiagnosticHandlerCallBack(&Diagnostics::handle, out.diagnostics.get());
  m.setTargetTriple(out.tm->getTargetTriple());
  m.setDataLayout(out.tm->createDataLayout());
  m.addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", kCodeObjectVersion * 100);
  if (Status s = link_texture_helpers(m, program.origin); !s)
    return out.diagnostics->errors.empty() ? s.error() : s.error().context(out.diagnostics->errors);
  for (llvm::Function& f : m)
    if (!f.isDeclaration()) {
      f.addFnAttr("target-cpu", gfx);
      f.addFnAttr("target-features", "+wavefrontsize32");
    }
  move_allocas_to_private(m);
  lower_unsupported_math(m);
  if (!globals) {
    if (Status s = define_globals(program, out.program, m); !s) return s.error();
  }
  std::string broken;
  llvm::raw_string_ostream os(broken);
  if (llvm::verifyModule(m, &os))
    return Error(program.origin + ": internal error, the AMDGPU IR is invalid: " + broken,
                 CUDA_ERROR_INVALID_PTX);
  optimise(m, *out.tm);
  // After optimisation, where printf's format has become a constant.
  auto log = lower_device_log(program, m);
  if (!log) return log.error();
  out.uses_device_log = log.value();
  out.uses_device_heap = lower_device_heap(m);
  // mimic compile: a device log of capacity 0 and a grid workspace of the code object's own.
  auto define_zeroed = [&](const char* name, size_t bytes) {
    llvm::GlobalVariable* g = m.getNamedGlobal(name);
    if (!g || !g->isDeclaration()) return;
    auto* type = llvm::ArrayType::get(llvm::Type::getInt64Ty(m.getContext()), bytes / 8);
    auto* defined = new llvm::GlobalVariable(m, type, false, llvm::GlobalValue::ExternalLinkage,
                                             llvm::ConstantAggregateZero::get(type), "", nullptr,
                                             llvm::GlobalValue::NotThreadLocal, 1);
    defined->setAlignment(llvm::Align(16));
    defined->setVisibility(llvm::GlobalValue::ProtectedVisibility);
    g->replaceAllUsesWith(defined);
    g->eraseFromParent();
    defined->setName(name);
  };
  if (!globals) {
    define_zeroed(kDeviceLogSymbol, sizeof(DeviceLogHeader));
    define_zeroed(kGridWorkspaceSymbol, kGridWorkspaceBytes);
    define_zeroed(kDeviceHeapSymbol, sizeof(DeviceHeapHeader)); // capacity 0: malloc returns NULL
  }
  out.uses_grid_workspace = m.getNamedGlobal(kGridWorkspaceSymbol) != nullptr;
  return out;
}

// The optimised relocatable object of `program` for `gfx` and what linking it needs: from
// the code cache when the runtime compiles (its globals are bound at link, so the object is
// the same for every load), else lowered, optimised and emitted now (and cached).
Result<CachedObject> object_for(const runtime::Program& program, std::string_view gfx,
                                const std::map<std::string, void*, std::less<>>* globals) {
  std::string key = globals && !object_cache_directory().empty() && is_supported_target(gfx)
                        ? object_cache_key(program, gfx)
                        : std::string();
  if (!key.empty())
    if (std::optional<CachedObject> hit = object_cache_load(key);
        hit && hit->grid_sync.size() == program.kernels.size())
      return std::move(*hit);
  auto lowered = lower_for(program, gfx, globals);
  if (!lowered) return lowered.error();
  Lowered& l = lowered.value();
  auto object = emit(*l.program.module, *l.tm, llvm::CodeGenFileType::ObjectFile, *l.diagnostics);
  if (!object)
    return Error(program.origin + " for " + std::string(gfx) + ": " + object.error().message(),
                 object.error().code());
  CachedObject code;
  code.object = std::move(object.value());
  code.globals = l.program.globals;
  for (const codegen::LoweredKernel& k : l.program.kernels)
    code.grid_sync.push_back(k.grid_sync);
  code.device_log = l.uses_device_log;
  code.device_heap = l.uses_device_heap;
  code.grid_workspace = l.uses_grid_workspace;
  if (!key.empty()) object_cache_store(key, code);
  return code;
}

} // namespace

Result<CodeObject> compile_code_object(const runtime::Program& program, std::string_view gfx,
                                       const std::map<std::string, void*, std::less<>>* globals) {
  auto object = object_for(program, gfx, globals);
  if (!object) return object.error();
  const CachedObject& code = object.value();
  std::vector<std::string> defsyms;
  auto define = [&](const std::string& symbol, const void* address) {
    char text[32];
    snprintf(text, sizeof text, "0x%llx",
             static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(address)));
    defsyms.push_back("--defsym=" + symbol + "=" + text);
  };
  // The runtime's device log, grid workspace and device heap, when the code uses them.
  auto bind = [&](bool used, const char* symbol, const char* what) -> Status {
    if (!globals || !used) return {};
    auto it = globals->find(symbol);
    if (it == globals->end())
      return Error(program.origin + ": its kernels " + what + ", and the runtime gave no " + symbol,
                   CUDA_ERROR_NOT_SUPPORTED);
    define(symbol, it->second);
    return {};
  };
  if (Status s = bind(code.device_log, kDeviceLogSymbol, "print or assert (the device log)"); !s)
    return s.error();
  if (Status s = bind(code.grid_workspace, kGridWorkspaceSymbol,
                      "wait for the grid (grid.sync's workspace)");
      !s)
    return s.error();
  if (Status s = bind(code.device_heap, kDeviceHeapSymbol, "call malloc or free (the device heap)");
      !s)
    return s.error();
  if (globals)
    for (const std::string& name : code.globals) {
      auto it = globals->find(name);
      if (it == globals->end())
        return Error(program.origin + ": global '" + name + "' has no address in this module",
                     CUDA_ERROR_INVALID_PTX);
      define(codegen::global_symbol(name), it->second);
    }
  auto elf = link(code.object, defsyms, program.origin);
  if (!elf) return elf.error();
  CodeObject co;
  co.target = std::string(gfx);
  co.elf = std::move(elf.value());
  co.uses_device_log = code.device_log;
  co.uses_device_heap = code.device_heap;
  for (size_t i = 0; i < program.kernels.size(); ++i) {
    KernelObject k;
    k.name = program.kernels[i].name;
    k.grid_sync = code.grid_sync[i];
    co.kernels.push_back(std::move(k));
  }
  if (Status s = read_kernel_facts(co); !s) return s.error();
  return co;
}

Result<std::string> compile_to_text(const runtime::Program& program, std::string_view gfx,
                                    TextForm form) {
  auto lowered = lower_for(program, gfx, nullptr);
  if (!lowered) return lowered.error();
  Lowered& l = lowered.value();
  if (form == TextForm::LlvmIr) {
    std::string text;
    llvm::raw_string_ostream os(text);
    l.program.module->print(os, nullptr);
    return text;
  }
  return emit(*l.program.module, *l.tm, llvm::CodeGenFileType::AssemblyFile, *l.diagnostics);
}

} // namespace mimic::amdgpu
