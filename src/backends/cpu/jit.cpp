// The CPU backend's compiler and executor (first stage, docs/codegen-plan.md): the shared
// IR is optimised and JIT-compiled with LLVM ORC; a launch runs the grid's blocks on a
// pool of threads, each block as a loop over its threads calling the one-thread kernel.
// Kernels with barriers, shared memory or warp operations are refused at load time by
// the lowering until the region-splitting stage lands.
#include "backends/cpu/jit.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include <llvm/ExecutionEngine/Orc/AbsoluteSymbols.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>

#include "codegen/lower.h"

namespace mimic::cpu {

namespace {

using KernelEntry = void (*)(const void* params, const uint32_t* state);
constexpr size_t kStateWords = size_t(codegen::SpecialRegister::Count_);

class CpuCompiledProgram final : public runtime::CompiledProgram {
public:
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::vector<KernelEntry> kernels;
};

// i32 @mimic.sreg(ptr %state, i32 %which): the special registers are an array of u32.
void define_special_registers(llvm::Module& m) {
  llvm::Function* f = m.getFunction("mimic.sreg");
  if (!f)
    return;
  llvm::LLVMContext& c = m.getContext();
  f->setLinkage(llvm::GlobalValue::InternalLinkage);
  f->addFnAttr(llvm::Attribute::AlwaysInline);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  llvm::Value* slot = b.CreateGEP(b.getInt32Ty(), f->getArg(0), f->getArg(1));
  b.CreateRet(b.CreateLoad(b.getInt32Ty(), slot));
}

void optimise(llvm::Module& m) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(m, mam);
}

void initialise_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

} // namespace

Result<std::shared_ptr<runtime::CompiledProgram>> compile_for_cpu(
    const runtime::Program& program, const std::map<std::string, void*, std::less<>>& globals) {
  initialise_llvm();
  // One compilation at a time: LLVM's pass setup shares process-wide state (the real file
  // system object), and compiles are rare next to launches.
  static std::mutex compile_mutex;
  std::lock_guard compile_lock(compile_mutex);
  auto lowered = codegen::lower(program);
  if (!lowered)
    return lowered.error();
  codegen::LoweredProgram& lp = lowered.value();
  define_special_registers(*lp.module);
  optimise(*lp.module);

  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    return Error("cannot start the JIT: " + llvm::toString(jit.takeError()), CUDA_ERROR_UNKNOWN);
  auto out = std::make_shared<CpuCompiledProgram>();
  out->jit = std::move(jit.get());
  llvm::orc::JITDylib& dylib = out->jit->getMainJITDylib();
  llvm::orc::SymbolMap symbols;
  for (const std::string& name : lp.globals) {
    auto it = globals.find(name);
    if (it == globals.end())
      return Error(program.origin + ": global '" + name + "' has no address in this module", CUDA_ERROR_INVALID_PTX);
    symbols[out->jit->mangleAndIntern("mimic_global." + name)] = {
        llvm::orc::ExecutorAddr::fromPtr(it->second), llvm::JITSymbolFlags::Exported};
  }
  if (!symbols.empty())
    if (llvm::Error e = dylib.define(llvm::orc::absoluteSymbols(std::move(symbols))))
      return Error("binding globals: " + llvm::toString(std::move(e)), CUDA_ERROR_UNKNOWN);
  // Kernels may call the C library's math functions (sin, exp2 ...): resolve them in the process.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      out->jit->getDataLayout().getGlobalPrefix());
  if (!process)
    return Error("cannot search the process for symbols: " + llvm::toString(process.takeError()), CUDA_ERROR_UNKNOWN);
  dylib.addGenerator(std::move(process.get()));
  if (llvm::Error e = out->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(lp.module), std::move(lp.context))))
    return Error("adding the module to the JIT: " + llvm::toString(std::move(e)), CUDA_ERROR_UNKNOWN);
  for (const std::string& name : lp.kernels) {
    auto address = out->jit->lookup(name);
    if (!address)
      return Error(program.origin + ": compiling " + name + ": " + llvm::toString(address.takeError()),
                   CUDA_ERROR_INVALID_PTX);
    out->kernels.push_back(address->toPtr<KernelEntry>());
  }
  return std::shared_ptr<runtime::CompiledProgram>(std::move(out));
}

CUresult launch_on_cpu(runtime::CompiledProgram& compiled, size_t kernel, const runtime::LaunchShape& shape,
                       const void* args) {
  auto& program = static_cast<CpuCompiledProgram&>(compiled);
  if (kernel >= program.kernels.size())
    return CUDA_ERROR_INVALID_HANDLE;
  KernelEntry entry = program.kernels[kernel];
  const uint64_t blocks = uint64_t(shape.grid[0]) * shape.grid[1] * shape.grid[2];
  const unsigned threads_per_block = shape.block[0] * shape.block[1] * shape.block[2];
  unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  if (uint64_t(workers) > blocks)
    workers = unsigned(blocks);
  std::atomic<uint64_t> next{0};
  auto run_blocks = [&] {
    using R = codegen::SpecialRegister;
    uint32_t state[kStateWords] = {};
    auto set = [&](R r, uint32_t v) { state[size_t(r)] = v; };
    set(R::NtidX, shape.block[0]);
    set(R::NtidY, shape.block[1]);
    set(R::NtidZ, shape.block[2]);
    set(R::NctaidX, shape.grid[0]);
    set(R::NctaidY, shape.grid[1]);
    set(R::NctaidZ, shape.grid[2]);
    set(R::NWarpId, (threads_per_block + 31) / 32);
    set(R::NSmId, std::max(1u, std::thread::hardware_concurrency()));
    set(R::DynamicSmemSize, uint32_t(shape.dynamic_shared_bytes));
    // Blocks are handed out in chunks so that small blocks do not contend on the counter.
    const uint64_t chunk = std::max<uint64_t>(1, blocks / (uint64_t(workers) * 16));
    for (uint64_t first; (first = next.fetch_add(chunk)) < blocks;) {
      for (uint64_t b = first; b < std::min(blocks, first + chunk); ++b) {
        set(R::CtaidX, uint32_t(b % shape.grid[0]));
        set(R::CtaidY, uint32_t((b / shape.grid[0]) % shape.grid[1]));
        set(R::CtaidZ, uint32_t(b / (uint64_t(shape.grid[0]) * shape.grid[1])));
        unsigned linear = 0;
        for (unsigned z = 0; z < shape.block[2]; ++z)
          for (unsigned y = 0; y < shape.block[1]; ++y)
            for (unsigned x = 0; x < shape.block[0]; ++x, ++linear) {
              set(R::TidX, x);
              set(R::TidY, y);
              set(R::TidZ, z);
              set(R::LaneId, linear % 32);
              set(R::WarpId, linear / 32);
              uint32_t lane = linear % 32;
              set(R::LanemaskEq, 1u << lane);
              set(R::LanemaskLt, (1u << lane) - 1);
              set(R::LanemaskLe, lane == 31 ? ~0u : (2u << lane) - 1);
              set(R::LanemaskGe, ~((1u << lane) - 1));
              set(R::LanemaskGt, lane == 31 ? 0u : ~((2u << lane) - 1));
              entry(args, state);
            }
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < workers; ++w)
    pool.emplace_back(run_blocks);
  run_blocks();
  for (auto& t : pool)
    t.join();
  return CUDA_SUCCESS;
}

} // namespace mimic::cpu
