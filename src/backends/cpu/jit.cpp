// The CPU backend's compiler and executor (docs/codegen-plan.md, layer 2). The shared IR is
// optimised and JIT-compiled with LLVM ORC. A launch spreads the grid's blocks over a pool
// of host threads; each block runs as the kernel's resumable thread loop (codegen/
// block_state.h): all threads up to their next split point, then the executor releases
// warps at warp operations and the block at barriers, until every thread has exited.
// A fault inside a kernel (SIGSEGV, SIGBUS, SIGFPE, SIGILL) ends the launch with an error
// instead of the process.
#include "backends/cpu/jit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <future>
#include <mutex>
#include <system_error>
#include <string_view>
#include <thread>

#include <unistd.h>

#include <llvm/AsmParser/Parser.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/ExecutionEngine/ObjectCache.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/TargetParser/X86TargetParser.h>
#include <llvm/ExecutionEngine/Orc/AbsoluteSymbols.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/PassTimingInfo.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Utils/LoopSimplify.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/StringSaver.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/cpu/check.h"
#include "backends/cpu/code_cache.h"
#include "backends/cpu/vector_width.h"
#include "backends/cpu/matrix.h"
#include "backends/cpu/tiers.h"
#include "backends/cpu/worker_pool.h"
#include "codegen/address_gep.h"
#include "codegen/block_shape.h"
#include "codegen/parallel_loops.h"
#include "codegen/prefetch_calls.h"
#include "codegen/row_guards.h"
#include "codegen/edge_threads.h"
#include "codegen/row_unswitch.h"
#include "codegen/shared_store_select.h"
#include "codegen/block_prefetch.h"
#include "codegen/interleaved_scatter.h"
#include "codegen/contiguous_gathers.h"
#include "codegen/lane_steps.h"
#include "codegen/store_masks.h"
#include "codegen/uniform_scatter.h"
#include "codegen/thread_interchange.h"
#include "codegen/spill_remat.h"
#include "codegen/uniform_loads.h"
#include "codegen/warp_indices.h"
#include "codegen/lower.h"
#include "codegen/texture_abi.h"
#include "support/config.h"
#include "support/log.h"

namespace mimic::cpu {

namespace {

using codegen::BlockState;
using KernelEntry = void (*)(const void* params, BlockState* block, uint32_t begin, uint32_t end, uint32_t resume);

struct CompiledKernel {
  std::string name;
  std::string symbol;                       // the kernel's function in the JIT
  std::atomic<KernelEntry> entry = nullptr; // null until compiled (lazily: at its first launch)
  // `entry` is (or, compiled in the background, will be) optimised code for blocks of any
  // shape. Until then it may hold quick code, which serves any shape too.
  std::atomic<bool> any_shape = false;
  // Optimised code for blocks of one shape, its first launch's (codegen/block_shape.h):
  // `shape` is written before `shape_fixed` is set; `shaped` is null until that code is
  // linked (launches of that shape run `entry` meanwhile).
  codegen::BlockShape shape{};
  std::atomic<bool> shape_fixed = false;
  std::atomic<KernelEntry> shaped = nullptr;
  std::vector<codegen::SplitKind> splits;
  size_t local_bytes = 0;
  unsigned spill_slots = 0;
  size_t shared_bytes = 0; // static shared memory (dynamic starts at dynamic_offset)
  bool grid_sync = false;  // blocks wait for each other: all run at once
  bool cluster = false;    // lowered for clusters of one block
  bool plain_exit = false; // codegen::LoweredKernel::plain_exit: next[] is not used
  bool calls = false;      // codegen::LoweredKernel::calls: next[] is cleared per block
  size_t dynamic_offset = 0;

  CompiledKernel() = default;
  CompiledKernel(CompiledKernel&& o) noexcept
      : name(std::move(o.name)), symbol(std::move(o.symbol)), entry(o.entry.load()), any_shape(o.any_shape.load()),
        shape(o.shape), shape_fixed(o.shape_fixed.load()), shaped(o.shaped.load()), splits(std::move(o.splits)),
        local_bytes(o.local_bytes), spill_slots(o.spill_slots), shared_bytes(o.shared_bytes), grid_sync(o.grid_sync),
        cluster(o.cluster), plain_exit(o.plain_exit), calls(o.calls), dynamic_offset(o.dynamic_offset) {}
};

// Keeps the object code LLJIT compiles, for the disk cache.
class ObjectCapture final : public llvm::ObjectCache {
public:
  std::string object;
  void notifyObjectCompiled(const llvm::Module*, llvm::MemoryBufferRef buffer) override {
    object.assign(buffer.getBufferStart(), buffer.getBufferSize());
  }
  std::unique_ptr<llvm::MemoryBuffer> getObject(const llvm::Module*) override { return nullptr; }
};

// Which optimised code of a kernel a compile makes: for blocks of any shape, or for blocks
// of `shape` only (codegen/block_shape.h), under a name of its own.
struct Variant {
  bool shaped = false;
  codegen::BlockShape shape{};

  std::string symbol(const std::string& kernel) const {
    return shaped ? codegen::shaped_symbol(kernel, shape) : kernel;
  }
  std::string blocks() const { // for notes
    return shaped ? " for blocks of " + std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" +
                        std::to_string(shape[2])
                  : "";
  }
};

// A program whose kernels are compiled one by one at their first launch keeps its lowered
// IR until then (an application's module may hold hundreds of kernels and use a few).
// Its cache entry then holds only what the executor needs (an empty object), so that a later
// process starts without lowering, and lowers only when a kernel has no entry of its own.
struct LazyCode {
  const runtime::Program* program = nullptr; // outlives the compiled program (runtime::Module)
  bool check_memory = false;
  llvm::orc::ThreadSafeContext context;
  std::unique_ptr<llvm::Module> module; // destroyed before `context`; null until needed
  std::string key;                      // the program's cache key ("" when not cached)
  std::vector<std::string> globals;
};

class CpuCompiledProgram final : public runtime::CompiledProgram,
                                 public std::enable_shared_from_this<CpuCompiledProgram> {
public:
  ObjectCapture capture; // before `jit`, which holds a pointer to it
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::vector<CompiledKernel> kernels;
  std::map<std::string, uint64_t, std::less<>> functions; // address-taken .func
  std::unique_ptr<LazyCode> lazy;                          // kernels not compiled yet
  std::mutex lazy_mutex;
  // The quick tier's code (tiers.h): a JITDylib of its own, since the optimised code
  // defines the same symbols in the main one. Created at the first quick compile.
  llvm::orc::JITDylib* quick_dylib = nullptr;

  ~CpuCompiledProgram() override {
    if (lazy) lazy->module.reset(); // before the context it lives in
  }
  // Makes sure kernel `i` has code for blocks of `shape`, compiling it now if it has not;
  // an error names the kernel. The first compile of a kernel is for its first launch's
  // shape (codegen/block_shape.h); a launch of another shape then gets code for any shape.
  Status entry(size_t i, const codegen::BlockShape& shape);
  // Kernel `i`'s quick code from the lowered module where it has no code yet, and
  // (QuickTier::On) a request to the background compiler for its optimised code of
  // variant `v`. Called by entry() with its locks held.
  Status quick_entry(size_t i, const Variant& v, const std::string& key, QuickTier tier);
  // Links kernel `i`'s optimised object of variant `v` and makes it the code of the blocks
  // that start from now on (the background compiler's delivery).
  void install(size_t i, const Variant& v, const std::string& object, std::chrono::steady_clock::time_point asked);

  uint64_t function_address(std::string_view name) const override {
    auto it = functions.find(name);
    return it == functions.end() ? 0 : it->second;
  }
  unsigned max_cluster_blocks(size_t kernel) const override {
    return kernel < kernels.size() && kernels[kernel].cluster ? 1 : 0;
  }
};

// i32 @mimic.sreg(ptr %block, i32 %t, i32 %which): thread-dependent registers are derived
// from the linear thread index, the others read from BlockState::sreg. Always inlined, so
// a constant `which` folds to its one case.
void define_special_registers(llvm::Module& m) {
  llvm::Function* f = m.getFunction("mimic.sreg");
  if (!f)
    return;
  using R = codegen::SpecialRegister;
  llvm::LLVMContext& c = m.getContext();
  f->setLinkage(llvm::GlobalValue::InternalLinkage);
  f->addFnAttr(llvm::Attribute::AlwaysInline);
  // It only reads the block state (so a thread loop's special registers write nothing).
  f->setOnlyAccessesArgMemory();
  f->setOnlyReadsMemory();
  f->setWillReturn();
  f->setDoesNotThrow();
  llvm::Value* block = f->getArg(0);
  llvm::Value* t = f->getArg(1);
  llvm::Value* which = f->getArg(2);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(c, "entry", f);
  llvm::BasicBlock* common = llvm::BasicBlock::Create(c, "block_wide", f);
  llvm::IRBuilder<> b(common);
  llvm::LoadInst* field = b.CreateLoad(b.getInt32Ty(), b.CreateGEP(b.getInt32Ty(), block, which));
  field->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(c, {})); // fixed while a block runs
  b.CreateRet(field);
  b.SetInsertPoint(entry);
  llvm::SwitchInst* sw = b.CreateSwitch(which, common);
  auto add_case = [&](R r, auto&& compute) {
    llvm::BasicBlock* bb = llvm::BasicBlock::Create(c, "sreg", f);
    llvm::IRBuilder<> cb(bb);
    cb.CreateRet(compute(cb));
    sw->addCase(b.getInt32(uint32_t(r)), bb);
  };
  // A function that is not inlined reads %tid from the row its caller's thread loop is in
  // (published in sreg by the kernel, row by row: not invariant).
  auto row_field = [&](llvm::IRBuilder<>& cb, R r) {
    return cb.CreateLoad(cb.getInt32Ty(), cb.CreateConstInBoundsGEP1_64(cb.getInt32Ty(), block, uint64_t(r)));
  };
  add_case(R::TidX, [&](llvm::IRBuilder<>& cb) { return cb.CreateSub(t, row_field(cb, R::RowBase)); });
  add_case(R::TidY, [&](llvm::IRBuilder<>& cb) { return row_field(cb, R::TidY); });
  add_case(R::TidZ, [&](llvm::IRBuilder<>& cb) { return row_field(cb, R::TidZ); });
  add_case(R::LaneId, [&](llvm::IRBuilder<>& cb) { return cb.CreateAnd(t, cb.getInt32(31)); });
  add_case(R::WarpId, [&](llvm::IRBuilder<>& cb) { return cb.CreateLShr(t, cb.getInt32(5)); });
  auto lane = [&](llvm::IRBuilder<>& cb) { return cb.CreateAnd(t, cb.getInt32(31)); };
  add_case(R::LanemaskEq, [&](llvm::IRBuilder<>& cb) { return cb.CreateShl(cb.getInt32(1), lane(cb)); });
  add_case(R::LanemaskLt,
           [&](llvm::IRBuilder<>& cb) { return cb.CreateSub(cb.CreateShl(cb.getInt32(1), lane(cb)), cb.getInt32(1)); });
  add_case(R::LanemaskLe,
           [&](llvm::IRBuilder<>& cb) { return cb.CreateSub(cb.CreateShl(cb.getInt32(2), lane(cb)), cb.getInt32(1)); });
  add_case(R::LanemaskGe, [&](llvm::IRBuilder<>& cb) {
    return cb.CreateNot(cb.CreateSub(cb.CreateShl(cb.getInt32(1), lane(cb)), cb.getInt32(1)));
  });
  add_case(R::LanemaskGt, [&](llvm::IRBuilder<>& cb) {
    return cb.CreateNot(cb.CreateSub(cb.CreateShl(cb.getInt32(2), lane(cb)), cb.getInt32(1)));
  });
}

// A TargetMachine for this machine's CPU as LLJIT makes them for JITLink (PIC, small code
// model) at code generation level `level`, or null when LLVM cannot target it; with `cpu`,
// for that x86-64 CPU instead (null when LLVM does not know it). A
// TargetMachine is not safe to share between threads that compile at once (it caches
// subtargets per function): each tier has its own.
std::unique_ptr<llvm::TargetMachine> make_host_target(llvm::CodeGenOptLevel level, const std::string& cpu = {}) {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    llvm::consumeError(jtmb.takeError());
    return nullptr;
  }
  if (!cpu.empty()) { // another x86-64 CPU, with that CPU's own features (`mimic compile --cpu`)
    if (!jtmb->getTargetTriple().isX86() || llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) == llvm::X86::CK_None)
      return nullptr;
    jtmb->setCPU(cpu);
    jtmb->getFeatures() = llvm::SubtargetFeatures();
  }
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  jtmb->setCodeModel(llvm::CodeModel::Small);
  jtmb->setCodeGenOptLevel(level);
  auto made = jtmb->createTargetMachine();
  if (!made) {
    llvm::consumeError(made.takeError());
    return nullptr;
  }
  return std::move(*made);
}

// The host as LLJIT compiles for it (CPU name, features and the default code generation
// level), for the optimiser's cost models (without it the vectorisers do not know the
// vector width) and for `mimic compile`, whose assembly is then the code the JIT runs.
// Used by one thread at a time (under g_compile_mutex).
llvm::TargetMachine* host_target() {
  static llvm::TargetMachine* tm = make_host_target(llvm::CodeGenOptLevel::Default).release();
  return tm;
}

// The quick tier's: fast instruction selection and register allocation (tiers.h).
llvm::TargetMachine* quick_target() {
  static llvm::TargetMachine* tm = make_host_target(llvm::CodeGenOptLevel::None).release();
  return tm;
}

// LLVM's pass setup shares process-wide state (TSan saw it): pipelines are built one at a
// time, also while the background compiler and a first launch compile at once.
std::mutex g_pipeline_mutex;

// Which code a module is optimised for: the quick tier (tiers.h) or the optimised code.
enum class Tier { Quick, Optimised };

// Optimises `m` for `tm`'s CPU. `cancel`, when given, skips the passes not yet run once
// it turns true (the background compiler at exit).
void optimise(llvm::Module& m, llvm::TargetMachine* tm, Tier tier = Tier::Optimised,
              const std::atomic<bool>* cancel = nullptr) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  if (tm) {
    m.setDataLayout(tm->createDataLayout());
    m.setTargetTriple(tm->getTargetTriple());
    std::string cpu = tm->getTargetCPU().str(), features = tm->getTargetFeatureString().str();
    const unsigned vector_bits = preferred_vector_bits(); // vector_width.h
    for (llvm::Function& f : m)
      if (!f.isDeclaration()) {
        f.addFnAttr("target-cpu", cpu);
        f.addFnAttr("target-features", features);
        if (vector_bits) f.addFnAttr("prefer-vector-width", std::to_string(vector_bits));
      }
  }
  const bool quick = tier == Tier::Quick;
  // The thread loops are the kernels' parallel loops: vectorise and unroll them.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  tuning.LoopUnrolling = true;
  std::unique_lock pipeline_lock(g_pipeline_mutex);
  // With MIMIC_LLVM_OPTIONS (studying the code), LLVM's instrumentation runs too, so that
  // -time-passes, -print-after=... and the like work.
  llvm::PassInstrumentationCallbacks instrumentation;
  std::optional<llvm::StandardInstrumentations> standard;
  if (const char* options = std::getenv("MIMIC_LLVM_OPTIONS"); options && *options) {
    standard.emplace(m.getContext(), /*DebugLogging=*/false);
    standard->registerCallbacks(instrumentation, &mam);
  }
  if (cancel)
    instrumentation.registerShouldRunOptionalPassCallback(
        [cancel](llvm::StringRef, llvm::Any) { return !cancel->load(std::memory_order_relaxed); });
  llvm::PassBuilder pb(tm, tuning, std::nullopt, standard || cancel ? &instrumentation : nullptr);
  if (!quick) {
    // Thread loops get a copy per outcome of their row-invariant conditions (row_unswitch.h),
    // after the loop pipeline's invariant code motion and induction-variable passes.
    pb.registerLateLoopOptimizationsEPCallback([](llvm::LoopPassManager& lpm, llvm::OptimizationLevel) {
      lpm.addPass(codegen::UnswitchThreadLoops());
    });
    pb.registerVectorizerStartEPCallback([](llvm::FunctionPassManager& fpm, llvm::OptimizationLevel) {
      fpm.addPass(codegen::AddressesToGep());
      fpm.addPass(codegen::InterchangeThreadLoops());
      fpm.addPass(codegen::ParallelThreadLoops());
      fpm.addPass(codegen::FoldBlockShape());
      // Position tests made once per row, and the thread loops copied for rows where they
      // all hold (row_guards.h).
      fpm.addPass(llvm::LoopSimplifyPass());
      fpm.addPass(codegen::HoistRowGuards());
      fpm.addPass(llvm::createFunctionToLoopPassAdaptor(
          codegen::UnswitchThreadLoops(codegen::UnswitchThreadLoops::kRowGuardsThreshold), /*UseMemorySSA=*/true));
      fpm.addPass(codegen::FoldSettledBranches());
      fpm.addPass(codegen::ExtractEdgeThreads()); // code only one thread runs, after its loop
      fpm.addPass(codegen::SelectSharedStores());
    });
    pb.registerVectorizerEndEPCallback([](llvm::FunctionPassManager& fpm, llvm::OptimizationLevel) {
      fpm.addPass(codegen::UniformScatters());
      fpm.addPass(codegen::SplatLaneSteps());
      fpm.addPass(codegen::BranchOnStoreMasks());
      fpm.addPass(codegen::JoinInterleavedScatters());
      fpm.addPass(codegen::PrefetchNextBlock());
      fpm.addPass(codegen::ExpandPrefetchCalls()); // every prefetch call llvm.prefetch again
      fpm.addPass(codegen::ContiguousGathers());   // after the prefetches: one site per access
    });
  }
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  // O2 with the vectorisers, as clang's -O2. (O3 made a device-debug kernel that calls a
  // function with a shuffle in a loop spin forever; not understood yet.)
  codegen::offer_vector_prefetches(m);
  llvm::ModulePassManager mpm;
  // Registers that are the same in every thread, or computed from the thread index, are
  // computed again after a split point rather than saved and restored per thread. This
  // needs the registers in SSA form and nothing else done yet (codegen/spill_remat.h).
  {
    llvm::FunctionPassManager first;
    first.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    first.addPass(codegen::HoistUniformLoads());
    codegen::RematerialiseSpills remat;
    remat.hoist_row_uniform = !quick;
    first.addPass(std::move(remat));
    first.addPass(codegen::WarpIndices());
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(first)));
  }
  if (quick) {
    // The quick tier: inlining of what must be (the special registers), redundancy and
    // dead code, and loop-invariant code out of loops. Half the time of O1 without
    // vectorisers, whose code ran 1.1-2x faster (measured on the bench kernels).
    mpm.addPass(llvm::AlwaysInlinerPass());
    llvm::FunctionPassManager fpm;
    fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::SimplifyCFGPass());
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(llvm::LICMPass(llvm::LICMOptions()), /*UseMemorySSA=*/true));
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(codegen::ExpandPrefetchCalls());
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  } else {
    mpm.addPass(pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2));
  }
  pipeline_lock.unlock();
  mpm.run(m, mam);
  codegen::withdraw_vector_prefetches(m);
}

// `m` as an object file for `tm` (it optimised `m`).
Result<std::string> emit_object(llvm::Module& m, llvm::TargetMachine& tm, bool assembly = false) {
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  // Assembly with the IR's block names and loop depths as comments, to read it against
  // `--emit llvm`.
  tm.Options.MCOptions.AsmVerbose = assembly;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             assembly ? llvm::CodeGenFileType::AssemblyFile : llvm::CodeGenFileType::ObjectFile))
    return Error("LLVM cannot emit code for this machine's CPU", CUDA_ERROR_NOT_SUPPORTED);
  pm.run(m);
  return std::string(out.begin(), out.end());
}

void initialise_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // MIMIC_LLVM_OPTIONS passes options to LLVM, for studying the code Mimic makes (say
    // "-pass-remarks-missed=loop-vectorize"); it bypasses the JIT cache like MIMIC_DUMP_IR.
    if (const char* options = std::getenv("MIMIC_LLVM_OPTIONS"); options && *options) {
      llvm::SmallVector<const char*, 8> argv{"mimic"};
      llvm::BumpPtrAllocator arena;
      llvm::StringSaver saver(arena);
      llvm::cl::TokenizeGNUCommandLine(options, saver, argv);
      llvm::cl::ParseCommandLineOptions(int(argv.size()), argv.data(), "", &llvm::errs());
    }
  });
}

} // namespace

namespace {

// One compilation at a time: LLVM's pass setup shares process-wide state (the real file
// system object), and compiles are rare next to launches.
std::mutex g_compile_mutex;

// Adds to `worklist` the functions and variables defined in the module that `c` refers to.
void collect_globals(const llvm::Constant* c, llvm::SmallPtrSetImpl<const llvm::GlobalValue*>& seen,
                     llvm::SmallVectorImpl<const llvm::GlobalValue*>& worklist) {
  if (auto* g = llvm::dyn_cast<llvm::GlobalValue>(c)) {
    if (seen.insert(g).second) worklist.push_back(g);
    return;
  }
  for (const llvm::Use& u : c->operands())
    if (auto* operand = llvm::dyn_cast<llvm::Constant>(u.get())) collect_globals(operand, seen, worklist);
}

// Everything `m` defines but `symbol` becomes internal, so that modules of several kernels
// of one program can share a JITDylib (and the optimiser may drop what is not used).
void internalise_all_but(llvm::Module& m, llvm::StringRef symbol) {
  for (llvm::Function& f : m)
    if (!f.isDeclaration() && f.getName() != symbol) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable& v : m.globals())
    if (!v.isDeclaration()) v.setLinkage(llvm::GlobalValue::InternalLinkage);
}

// Kernel `symbol` with the definitions it reaches (the functions it calls, the constants it
// reads) as a module of its own. The kernel stays external; the rest becomes internal, so
// that the modules of several kernels of one program can share a JITDylib.
std::unique_ptr<llvm::Module> extract_kernel(const llvm::Module& m, llvm::StringRef symbol) {
  llvm::SmallPtrSet<const llvm::GlobalValue*, 32> seen;
  llvm::SmallVector<const llvm::GlobalValue*, 32> worklist;
  const llvm::Function* kernel = m.getFunction(symbol);
  seen.insert(kernel);
  worklist.push_back(kernel);
  while (!worklist.empty()) {
    const llvm::GlobalValue* g = worklist.pop_back_val();
    if (auto* f = llvm::dyn_cast<llvm::Function>(g)) {
      for (const llvm::BasicBlock& bb : *f)
        for (const llvm::Instruction& i : bb)
          for (const llvm::Use& u : i.operands())
            if (auto* c = llvm::dyn_cast<llvm::Constant>(u.get())) collect_globals(c, seen, worklist);
    } else if (auto* v = llvm::dyn_cast<llvm::GlobalVariable>(g); v && v->hasInitializer()) {
      collect_globals(v->getInitializer(), seen, worklist);
    }
  }
  llvm::ValueToValueMapTy map;
  std::unique_ptr<llvm::Module> out =
      llvm::CloneModule(m, map, [&](const llvm::GlobalValue* g) { return seen.contains(g); });
  internalise_all_but(*out, symbol);
  return out;
}

// The lazy module itself when `symbol` is its only kernel (no copy: a kernel of 66
// barriers took 23 ms to copy), else a copy with what the kernel reaches.
std::unique_ptr<llvm::Module> take_kernel(std::unique_ptr<llvm::Module>& lazy_module, size_t kernels,
                                          llvm::StringRef symbol) {
  if (kernels > 1) return extract_kernel(*lazy_module, symbol);
  std::unique_ptr<llvm::Module> m = std::move(lazy_module);
  internalise_all_but(*m, symbol);
  return m;
}

// MIMIC_PERF_MAP=1: every function the JIT links is appended to /tmp/perf-PID.map
// ("START SIZE NAME", hexadecimal), which `perf report` reads to name samples in JIT code.
class PerfMapPlugin final : public llvm::orc::ObjectLinkingLayer::Plugin {
public:
  void modifyPassConfig(llvm::orc::MaterializationResponsibility&, llvm::jitlink::LinkGraph&,
                        llvm::jitlink::PassConfiguration& config) override {
    config.PostFixupPasses.push_back([](llvm::jitlink::LinkGraph& g) {
      static std::mutex mutex;
      std::lock_guard lock(mutex);
      const std::string path = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
      if (FILE* f = std::fopen(path.c_str(), "a")) {
        for (llvm::jitlink::Symbol* s : g.defined_symbols())
          if (s->isCallable() && s->getSize() > 0 && s->hasName())
            std::fprintf(f, "%llx %llx %s\n", static_cast<unsigned long long>(s->getAddress().getValue()),
                         static_cast<unsigned long long>(s->getSize()), std::string(*s->getName()).c_str());
        std::fclose(f);
      }
      return llvm::Error::success();
    });
  }
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility&) override { return llvm::Error::success(); }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey, llvm::orc::ResourceKey) override {}
};

bool perf_map_wanted() {
  const char* env = std::getenv("MIMIC_PERF_MAP");
  return env && *env && std::string_view(env) != "0";
}

// A JIT for `out` with the module's globals bound to `globals`' addresses, the device
// runtime's helpers and the process's symbols; `capture` keeps each compiled object (for
// the cache).
Status start_jit(CpuCompiledProgram& out, bool capture, const std::vector<std::string>& used_globals,
                 const std::map<std::string, void*, std::less<>>& globals, const std::string& origin) {
  llvm::orc::LLJITBuilder builder;
  if (capture) {
    ObjectCapture* c = &out.capture;
    builder.setCompileFunctionCreator(
        [c](llvm::orc::JITTargetMachineBuilder jtmb)
            -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
          auto tm = jtmb.createTargetMachine();
          if (!tm)
            return tm.takeError();
          return std::make_unique<llvm::orc::TMOwningSimpleCompiler>(std::move(*tm), c);
        });
  }
  auto jit = builder.create();
  if (!jit)
    return Error("cannot start the JIT: " + llvm::toString(jit.takeError()), CUDA_ERROR_UNKNOWN);
  out.jit = std::move(jit.get());
  if (perf_map_wanted()) {
    if (auto* linking = llvm::dyn_cast<llvm::orc::ObjectLinkingLayer>(&out.jit->getObjLinkingLayer()))
      linking->addPlugin(std::make_shared<PerfMapPlugin>());
    else
      log_warning("MIMIC_PERF_MAP: this JIT does not link with JITLink; no perf map is written");
  }
  llvm::orc::JITDylib& dylib = out.jit->getMainJITDylib();
  llvm::orc::SymbolMap symbols;
  for (const std::string& name : used_globals) {
    auto it = globals.find(name);
    if (it == globals.end())
      return Error(origin + ": global '" + name + "' has no address in this module", CUDA_ERROR_INVALID_PTX);
    symbols[out.jit->mangleAndIntern("mimic_global." + name)] = {
        llvm::orc::ExecutorAddr::fromPtr(it->second), llvm::JITSymbolFlags::Exported};
  }
  auto helper = [&](const char* name, auto* fn) {
    symbols[out.jit->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn), llvm::JITSymbolFlags::Exported};
  };
  helper("mimic_warp_vote", &codegen::mimic_warp_vote);
  helper("mimic_warp_match", &codegen::mimic_warp_match);
  helper("mimic_warp_redux", &codegen::mimic_warp_redux);
  helper("mimic_tex_fetch", &codegen::mimic_tex_fetch);
  helper("mimic_surface_access", &codegen::mimic_surface_access);
  helper("mimic_texture_query", &codegen::mimic_texture_query);
  helper("mimic_vprintf", &codegen::mimic_vprintf);
  helper("mimic_assert_fail", &codegen::mimic_assert_fail);
  helper("mimic_device_malloc", &codegen::mimic_device_malloc);
  helper("mimic_device_free", &codegen::mimic_device_free);
  helper("mimic_wmma_load", &codegen::mimic_wmma_load);
  helper("mimic_wmma_store", &codegen::mimic_wmma_store);
  helper("mimic_check_access", &codegen::mimic_check_access);
  helper("mimic_mbarrier_init", &codegen::mimic_mbarrier_init);
  helper("mimic_clock64", &codegen::mimic_clock64);
  helper("mimic_globaltimer", &codegen::mimic_globaltimer);
  helper("mimic_mbarrier_arrive", &codegen::mimic_mbarrier_arrive);
  helper("mimic_mbarrier_tx", &codegen::mimic_mbarrier_tx);
  helper("mimic_mbarrier_phase", &codegen::mimic_mbarrier_phase);
  if (!symbols.empty())
    if (llvm::Error e = dylib.define(llvm::orc::absoluteSymbols(std::move(symbols))))
      return Error("binding globals: " + llvm::toString(std::move(e)), CUDA_ERROR_UNKNOWN);
  // Kernels may call the C library's math functions (sin, exp2 ...): resolve them in the process.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      out.jit->getDataLayout().getGlobalPrefix());
  if (!process)
    return Error("cannot search the process for symbols: " + llvm::toString(process.takeError()), CUDA_ERROR_UNKNOWN);
  dylib.addGenerator(std::move(process.get()));
  return {};
}

codegen::LoweredKernel facts_of(const CompiledKernel& k, const std::string& symbol) {
  codegen::LoweredKernel lk;
  lk.symbol = symbol;
  lk.splits = k.splits;
  lk.local_bytes = k.local_bytes;
  lk.spill_slots = k.spill_slots;
  lk.grid_sync = k.grid_sync;
  lk.cluster = k.cluster;
  lk.plain_exit = k.plain_exit;
  lk.calls = k.calls;
  return lk;
}

// Makes the lowered kernel `symbol` of `m` variant `v`'s (specialised and renamed).
void shape_kernel(llvm::Module& m, const std::string& symbol, const Variant& v) {
  if (!v.shaped)
    return;
  codegen::specialise_block_shape(m, symbol, v.shape);
  if (llvm::Function* f = m.getFunction(symbol))
    f->setName(v.symbol(symbol));
}

} // namespace

void prepare_background_compiles();

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// ms_since for a note: "12.3".
std::string ms_text(std::chrono::steady_clock::time_point start) {
  char ms[32];
  snprintf(ms, sizeof ms, "%.1f", ms_since(start));
  return ms;
}

// codegen::lower, with a note of its time for MIMIC_VERBOSE.
Result<codegen::LoweredProgram> lower_noted(const runtime::Program& program, bool check_memory) {
  const auto start = std::chrono::steady_clock::now();
  auto lowered = codegen::lower(program, check_memory);
  if (lowered) {
    log_note(program.origin + ": PTX lowered in " + ms_text(start) + " ms");
  }
  return lowered;
}

// Set once prepare_background_compiles has done its work.
std::atomic<bool> g_background_prepared{false};

// prepare_background_compiles on a thread of its own, so that it overlaps the lowering and
// the quick compile of a cold start (about 7 ms of a first launch on a machine with a core
// to spare); an invalid future where it has been done or no thread can be had (the quick
// compile's own call then does it). The future's destruction waits for it.
std::future<void> start_preparing_background_compiles() {
  if (g_background_prepared.load(std::memory_order_acquire))
    return {};
  try {
    return std::async(std::launch::async, prepare_background_compiles);
  } catch (const std::system_error&) {
    return {};
  }
}

} // namespace

Status CpuCompiledProgram::entry(size_t i, const codegen::BlockShape& shape) {
  CompiledKernel& k = kernels[i];
  auto ready = [&] {
    return k.any_shape.load(std::memory_order_acquire) ||
           (k.shape_fixed.load(std::memory_order_acquire) && k.shape == shape);
  };
  if (ready()) return Status::success();
  std::lock_guard lock(lazy_mutex);
  if (ready()) return Status::success();
  if (!lazy) return Error("kernel '" + k.name + "' has no compiled code", CUDA_ERROR_UNKNOWN);
  std::lock_guard compile_lock(g_compile_mutex);
  // MIMIC_QUICK_TIER=only neither reads nor writes the cache: its code is the quick tier's.
  const QuickTier tier = quick_tier();
  // A kernel's first optimised code is for its first launch's block shape; code for any
  // shape follows when a launch of another shape comes.
  Variant v;
  if (!k.shape_fixed.load() && !k.entry.load() && tier != QuickTier::Only && codegen::block_shape_enabled())
    v = Variant{true, shape};
  const std::string symbol = v.symbol(k.symbol);
  std::atomic<KernelEntry>& slot = v.shaped ? k.shaped : k.entry;
  auto publish = [&] {
    if (v.shaped) {
      k.shape = v.shape;
      k.shape_fixed.store(true, std::memory_order_release);
    } else {
      k.any_shape.store(true, std::memory_order_release);
    }
  };
  const std::string key =
      lazy->key.empty() || tier == QuickTier::Only ? std::string() : kernel_cache_key(lazy->key, symbol);
  if (!key.empty()) {
    std::optional<CachedCode> c = cache_load(key);
    if (c && c->kernels.size() == 1 && c->kernels[0].symbol == symbol) {
      auto buffer = llvm::MemoryBuffer::getMemBufferCopy(c->object, "mimic-cache-" + key);
      if (llvm::Error e = jit->addObjectFile(std::move(buffer)))
        return Error("adding cached code to the JIT: " + llvm::toString(std::move(e)) + " (mimic cache clear)",
                     CUDA_ERROR_UNKNOWN);
      auto address = jit->lookup(symbol);
      if (!address)
        return Error(lazy->program->origin + ": the cached code of " + k.name + ": " +
                         llvm::toString(address.takeError()) + " (mimic cache clear)",
                     CUDA_ERROR_UNKNOWN);
      slot.store(address->toPtr<KernelEntry>(), std::memory_order_release);
      publish();
      return Status::success();
    }
  }
  // Joined on every way out of here, so that no compile outlives the call that asked for it.
  std::future<void> preparing;
  if (tier == QuickTier::On)
    preparing = start_preparing_background_compiles();
  if (!lazy->module) {
    auto lowered = lower_noted(*lazy->program, lazy->check_memory);
    if (!lowered)
      return lowered.error();
    define_special_registers(*lowered.value().module);
    lazy->context = llvm::orc::ThreadSafeContext(std::move(lowered.value().context));
    lazy->module = std::move(lowered.value().module);
  }
  if (tier != QuickTier::Off) {
    if (Status s = quick_entry(i, v, key, tier); !s)
      return s;
    publish();
    return Status::success();
  }
  const auto asked = std::chrono::steady_clock::now();
  capture.object.clear();
  std::unique_ptr<llvm::Module> m = take_kernel(lazy->module, kernels.size(), k.symbol);
  if (v.shaped)
    shape_kernel(*m, k.symbol, v);
  optimise(*m, host_target());
  if (llvm::Error e = jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), lazy->context)))
    return Error("adding kernel '" + k.name + "' to the JIT: " + llvm::toString(std::move(e)), CUDA_ERROR_UNKNOWN);
  auto address = jit->lookup(symbol);
  if (!address)
    return Error(lazy->program->origin + ": compiling " + k.name + ": " + llvm::toString(address.takeError()),
                 CUDA_ERROR_INVALID_PTX);
  if (!key.empty() && !capture.object.empty()) {
    CachedCode c;
    c.kernels.push_back(facts_of(k, symbol));
    c.globals = lazy->globals;
    c.object = std::move(capture.object);
    cache_store(key, c);
  }
  slot.store(address->toPtr<KernelEntry>(), std::memory_order_release);
  log_note("kernel '" + k.name + "': optimised code" + (v.shaped ? v.blocks() : " for any block shape") +
           " in " + ms_text(asked) + " ms");
  publish();
  return Status::success();
}

namespace {

// The background compiler's work for one kernel: its optimised object from its lowered IR,
// passed as bitcode (an LLVM context belongs to one thread at a time; this one is the
// background thread's own).
Result<std::string> compile_optimised(const std::string& bitcode, const std::atomic<bool>& cancel,
                                      const std::string& kernel = {}, const Variant& v = {}) {
  // The background thread's TargetMachine (it is the only thread that calls this).
  static thread_local std::unique_ptr<llvm::TargetMachine> tm = make_host_target(llvm::CodeGenOptLevel::Default);
  if (!tm)
    return Error("LLVM cannot generate code for this machine's CPU", CUDA_ERROR_NOT_SUPPORTED);
  llvm::LLVMContext context;
  codegen::quiet_llvm_diagnostics(context);
  auto m = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "kernel"), context);
  if (!m)
    return Error("reading the lowered kernel back: " + llvm::toString(m.takeError()), CUDA_ERROR_UNKNOWN);
  shape_kernel(**m, kernel, v);
  optimise(**m, tm.get(), Tier::Optimised, &cancel);
  if (cancel.load())
    return Error("stopped at exit", CUDA_ERROR_UNKNOWN);
  return emit_object(**m, *tm);
}

} // namespace

// LLVM builds some tables at their first use, as function-local statics, which the C++
// runtime destroys at exit in the reverse order of their building, before exit handlers
// registered earlier (tiers.cpp). Those the optimised pipeline needs and the quick one may
// not are built here, before the background compiler starts and registers its exit
// handler: TargetLibraryInfo's index of library function names (InferFunctionAttrs looks
// up every declaration; a job at exit that had built it in the background probed the
// destroyed table forever).
//
// Code generation builds others: a program that exited during its first background compile
// crashed in code generation (streams_events from a cold cache on a loaded machine: 8 runs
// in 300). So a small vectorisable loop goes through the optimised pipeline and code
// generation here first, with no result, before the background thread starts: the tables
// it builds are destroyed after the handler has stopped that thread (0 crashes in 600
// runs). A cold start runs this on a thread of its own while it lowers and compiles the
// quick code, and waits for it before it starts the background compile and before it
// returns (start_preparing_background_compiles).
// An exit from the main thread stops the background thread before any of
// these are destroyed (tiers.cpp MainThreadExit); this still covers exits from other
// threads, for the tables it builds. A kernel that needs one it does not build is exposed
// there (streams_events builds three: two by the command-line registry, which
// UnswitchThreadLoops reads and which is now built here, one in code generation).
void prepare_background_compiles() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::TargetLibraryInfoImpl library{llvm::Triple(llvm::sys::getProcessTriple())};
    llvm::LibFunc f;
    (void)library.getLibFunc("sinf", f);
    (void)llvm::cl::getRegisteredOptions(); // codegen/row_unswitch.cpp sets two
    static constexpr const char* kWarmUp = R"(
define void @mimic_warm_up(ptr noalias %x, ptr noalias %y, ptr noalias %out, i32 %n, float %a) {
entry:
  %empty = icmp eq i32 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %sum = phi float [ 0.0, %entry ], [ %sum.next, %loop ]
  %wide = zext i32 %i to i64
  %px = getelementptr float, ptr %x, i64 %wide
  %py = getelementptr float, ptr %y, i64 %wide
  %vx = load float, ptr %px, align 4
  %vy = load float, ptr %py, align 4
  %m = call float @llvm.fma.f32(float %a, float %vx, float %vy)
  %neg = fcmp olt float %m, 0.0
  %abs = select i1 %neg, float 0.0, float %m
  %q = fdiv float %abs, %a
  %k = and i32 %i, 7
  %pk = getelementptr float, ptr %y, i32 %k
  %g = load float, ptr %pk, align 4
  %r = fadd float %q, %g
  store float %r, ptr %py, align 4
  %sum.next = fadd float %sum, %r
  %next = add nuw i32 %i, 1
  %more = icmp ult i32 %next, %n
  br i1 %more, label %loop, label %done
done:
  %total = phi float [ 0.0, %entry ], [ %sum.next, %loop ]
  store float %total, ptr %out, align 4
  ret void
}
declare float @llvm.fma.f32(float, float, float)
)";
    llvm::LLVMContext context;
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(kWarmUp, error, context);
    if (!m)
      return;
    std::string bitcode;
    llvm::raw_string_ostream os(bitcode);
    llvm::WriteBitcodeToFile(*m, os);
    const std::atomic<bool> no_cancel{false};
    (void)compile_optimised(bitcode, no_cancel);
  });
  g_background_prepared.store(true, std::memory_order_release);
}

Status CpuCompiledProgram::quick_entry(size_t i, const Variant& v, const std::string& key, QuickTier tier) {
  CompiledKernel& k = kernels[i];
  const auto asked = std::chrono::steady_clock::now();
  llvm::TargetMachine* tm = quick_target();
  if (!tm)
    return Error("LLVM cannot generate code for this machine's CPU", CUDA_ERROR_NOT_SUPPORTED);
  std::unique_ptr<llvm::Module> m = take_kernel(lazy->module, kernels.size(), k.symbol);
  const bool optimised_later = tier == QuickTier::On;
  std::string bitcode;
  if (optimised_later) {
    llvm::raw_string_ostream os(bitcode);
    llvm::WriteBitcodeToFile(*m, os);
  }
  // Quick code (for any shape) where the kernel has no code yet; a kernel whose first code
  // is for one shape gets its code for the others in the background only.
  if (!k.entry.load()) {
    optimise(*m, tm, Tier::Quick);
    Result<std::string> object = emit_object(*m, *tm);
    if (!object)
      return object.error();
    if (!quick_dylib) {
      auto made = jit->createJITDylib("quick");
      if (!made)
        return Error("cannot make the JIT's quick tier: " + llvm::toString(made.takeError()), CUDA_ERROR_UNKNOWN);
      quick_dylib = &made.get();
      quick_dylib->addToLinkOrder(jit->getMainJITDylib()); // globals, helpers, the process
    }
    if (llvm::Error e =
            jit->addObjectFile(*quick_dylib, llvm::MemoryBuffer::getMemBufferCopy(*object, "mimic-quick-" + k.symbol)))
      return Error("adding kernel '" + k.name + "' to the JIT: " + llvm::toString(std::move(e)), CUDA_ERROR_UNKNOWN);
    auto address = jit->lookup(*quick_dylib, k.symbol);
    if (!address)
      return Error(lazy->program->origin + ": compiling " + k.name + ": " + llvm::toString(address.takeError()),
                   CUDA_ERROR_INVALID_PTX);
    // Stored before the request: a delivery must not be overwritten by the quick code.
    k.entry.store(address->toPtr<KernelEntry>(), std::memory_order_release);
    log_note("kernel '" + k.name + "': quick code in " + ms_text(asked) + " ms" +
             (optimised_later ? "; its optimised code" + v.blocks() + " is being compiled in the background" : ""));
  } else if (optimised_later) {
    log_note("kernel '" + k.name + "': its optimised code" + v.blocks() + " is being compiled in the background");
  }
  if (!optimised_later)
    return Status::success();
  m.reset();
  const std::string symbol = v.symbol(k.symbol);
  CachedCode facts;
  facts.kernels.push_back(facts_of(k, symbol));
  facts.globals = lazy->globals;
  prepare_background_compiles();
  BackgroundCompiler::submit(
      key, "kernel '" + k.name + "'",
      [bitcode = std::move(bitcode), key, facts = std::move(facts), kernel = k.symbol,
       v](const std::atomic<bool>& cancel) mutable {
        Result<std::string> made = compile_optimised(bitcode, cancel, kernel, v);
        if (made && !key.empty()) {
          facts.object = *made;
          cache_store(key, facts);
        }
        return made;
      },
      [program = weak_from_this(), i, v, asked](const std::string& optimised) {
        if (auto p = program.lock()) p->install(i, v, optimised, asked);
      });
  return Status::success();
}

void CpuCompiledProgram::install(size_t i, const Variant& v, const std::string& object,
                                 std::chrono::steady_clock::time_point asked) {
  CompiledKernel& k = kernels[i];
  auto fail = [&](const std::string& why) {
    log_warning("kernel '" + k.name + "': its optimised code cannot be linked (" + why +
                "); the quick code stays in use");
  };
  const std::string symbol = v.symbol(k.symbol);
  if (llvm::Error e = jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, "mimic-optimised-" + symbol)))
    return fail(llvm::toString(std::move(e)));
  auto address = jit->lookup(symbol);
  if (!address)
    return fail(llvm::toString(address.takeError()));
  (v.shaped ? k.shaped : k.entry).store(address->toPtr<KernelEntry>(), std::memory_order_release);
  log_note("kernel '" + k.name + "': optimised code in use" + v.blocks() + ", " + ms_text(asked) +
           " ms after it was asked for");
}

Result<std::string> compile_cpu_code(const runtime::Program& program, CpuCodeForm form,
                                     const std::optional<std::array<uint32_t, 3>>& block, const std::string& cpu) {
  initialise_llvm();
  std::lock_guard compile_lock(g_compile_mutex);
  auto lowered = codegen::lower(program, false);
  if (!lowered)
    return lowered.error();
  codegen::LoweredProgram lp = std::move(lowered.value());
  define_special_registers(*lp.module);
  if (block)
    for (const codegen::LoweredKernel& k : lp.kernels)
      shape_kernel(*lp.module, k.symbol, Variant{true, *block});
  std::unique_ptr<llvm::TargetMachine> named;
  if (!cpu.empty()) {
    named = make_host_target(llvm::CodeGenOptLevel::Default, cpu);
    if (!named)
      return Error("LLVM knows no x86-64 CPU named '" + cpu + "' (llc -march=x86-64 -mcpu=help lists them)",
                   CUDA_ERROR_INVALID_VALUE);
  }
  llvm::TargetMachine* tm = named ? named.get() : host_target();
  if (!tm)
    return Error("LLVM cannot generate code for this machine's CPU", CUDA_ERROR_NOT_SUPPORTED);
  optimise(*lp.module, tm);
  if (form == CpuCodeForm::LlvmIr) {
    std::string text;
    llvm::raw_string_ostream os(text);
    lp.module->print(os, nullptr);
    return text;
  }
  return emit_object(*lp.module, *tm, form == CpuCodeForm::Assembly);
}

Result<std::shared_ptr<runtime::CompiledProgram>> compile_for_cpu(
    const runtime::Program& program, const std::map<std::string, void*, std::less<>>& globals, CompileMode mode) {
  initialise_llvm();
  std::lock_guard compile_lock(g_compile_mutex);
  // MIMIC_DUMP_IR=FILE writes the IR before and after optimisation (for debugging Mimic);
  // it needs a compile, so it bypasses the cache.
  const char* dump = std::getenv("MIMIC_DUMP_IR");
  const char* llvm_options = std::getenv("MIMIC_LLVM_OPTIONS");
  const bool dumping = (dump && *dump) || (llvm_options && *llvm_options) || codegen::interchange_explain() ||
                       codegen::row_guards_explain() || codegen::parallel_loops_explain() ||
                       codegen::edge_threads_explain();
  const bool check = config::check_memory();
  const std::string key = cache_directory().empty() || dumping || quick_tier() == QuickTier::Only
                              ? std::string()
                              : cache_key(program, check);
  std::optional<CachedCode> cached = key.empty() ? std::nullopt : cache_load(key);
  // What the executor needs to know, from the cache or from lowering.
  CachedCode code;
  codegen::LoweredProgram lp;
  // A program of several kernels is lowered now (so that a kernel that cannot be translated
  // fails the load, by name) and each kernel optimised and compiled at its first launch,
  // with an entry of its own in the cache. A program whose globals hold function addresses
  // needs them at load: compiled whole, as is a program of one kernel.
  bool lazy = false;
  if (cached && cached->object.empty() && mode == CompileMode::Eager)
    cached.reset(); // an entry of a program compiled kernel by kernel: compile it whole
  if (cached) {
    lazy = cached->object.empty();
    code = std::move(*cached);
    if (code.kernels.size() != program.kernels.size())
      return Error(program.origin + ": the JIT cache entry " + key + " does not match the program; clear the "
                                    "cache (mimic cache clear)", CUDA_ERROR_UNKNOWN);
  } else {
    // A cold start whose kernels will have quick code first warms the background compiler
    // up meanwhile (joined when this scope ends).
    std::future<void> preparing;
    if (mode == CompileMode::Lazy && !dumping && quick_tier() == QuickTier::On)
      preparing = start_preparing_background_compiles();
    auto lowered = lower_noted(program, check);
    if (!lowered)
      return lowered.error();
    lp = std::move(lowered.value());
    define_special_registers(*lp.module);
    // With tiers (tiers.h) or per-block-shape code (codegen/block_shape.h), a program of
    // one kernel is compiled at its first launch too.
    lazy = mode == CompileMode::Lazy && !dumping && lp.address_taken.empty() &&
           (lp.kernels.size() > 1 || quick_tier() != QuickTier::Off || codegen::block_shape_enabled());
    auto write_ir = [&](const char* suffix) {
      std::error_code ec;
      llvm::raw_fd_ostream os(std::string(dump) + suffix, ec);
      if (!ec)
        lp.module->print(os, nullptr);
    };
    if (dump && *dump)
      write_ir(".lowered.ll");
    if (!lazy)
      optimise(*lp.module, host_target());
    if (dump && *dump)
      write_ir(".optimised.ll");
    code.kernels = lp.kernels;
    code.globals = lp.globals;
    code.address_taken = lp.address_taken;
  }

  auto out = std::make_shared<CpuCompiledProgram>();
  if (Status s = start_jit(*out, (!cached || lazy) && !key.empty(), code.globals, globals, program.origin); !s)
    return s.error();
  if (cached && !lazy) {
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(code.object, "mimic-cache-" + key);
    if (llvm::Error e = out->jit->addObjectFile(std::move(buffer)))
      return Error("adding cached code to the JIT: " + llvm::toString(std::move(e)) + " (mimic cache clear)",
                   CUDA_ERROR_UNKNOWN);
  } else if (!lazy) {
    if (llvm::Error e =
            out->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(lp.module), std::move(lp.context))))
      return Error("adding the module to the JIT: " + llvm::toString(std::move(e)), CUDA_ERROR_UNKNOWN);
  }
  for (size_t i = 0; i < code.kernels.size(); ++i) {
    const codegen::LoweredKernel& lk = code.kernels[i];
    CompiledKernel k;
    k.name = program.kernels[i].name;
    k.symbol = lk.symbol;
    k.splits = lk.splits;
    k.local_bytes = lk.local_bytes;
    k.spill_slots = lk.spill_slots;
    k.grid_sync = lk.grid_sync;
    k.cluster = lk.cluster;
    k.plain_exit = lk.plain_exit;
    k.calls = lk.calls;
    k.shared_bytes = program.kernels[i].static_shared_bytes;
    k.dynamic_offset = program.kernels[i].dynamic_shared_offset;
    if (!lazy) {
      auto address = out->jit->lookup(lk.symbol);
      if (!address)
        return Error(program.origin + ": compiling " + program.kernels[i].name + ": " +
                         llvm::toString(address.takeError()),
                     CUDA_ERROR_INVALID_PTX);
      k.entry = address->toPtr<KernelEntry>();
      k.any_shape = true;
    }
    out->kernels.push_back(std::move(k));
  }
  for (const auto& [name, symbol] : code.address_taken) {
    auto address = out->jit->lookup(symbol);
    if (!address)
      return Error(program.origin + ": compiling function " + name + ": " + llvm::toString(address.takeError()),
                   CUDA_ERROR_INVALID_PTX);
    out->functions[name] = address->getValue();
  }
  if (llvm_options && *llvm_options) llvm::reportAndResetTimings(&llvm::errs()); // -time-passes
  if (lazy) {
    out->lazy = std::make_unique<LazyCode>();
    out->lazy->program = &program;
    out->lazy->check_memory = check;
    if (lp.module) {
      out->lazy->context = llvm::orc::ThreadSafeContext(std::move(lp.context));
      out->lazy->module = std::move(lp.module);
    }
    out->lazy->key = key;
    out->lazy->globals = code.globals;
    if (!cached && !key.empty())
      cache_store(key, code); // the executor's facts, no object
    return std::shared_ptr<runtime::CompiledProgram>(std::move(out));
  }
  // Everything is compiled by now (the lookups did it): keep the object for next time.
  if (!cached && !key.empty() && !out->capture.object.empty()) {
    code.object = std::move(out->capture.object);
    cache_store(key, code);
  }
  return std::shared_ptr<runtime::CompiledProgram>(std::move(out));
}

namespace {

// ---------------------------------------------------------------- faults

thread_local sigjmp_buf* t_fault_jump = nullptr;
thread_local int t_fault_signal = 0;
thread_local void* t_fault_address = nullptr;
struct sigaction g_previous[4];
constexpr int kFaultSignals[4] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

void on_fault(int sig, siginfo_t* info, void* context) {
  if (t_fault_jump) {
    t_fault_signal = sig;
    t_fault_address = info ? info->si_addr : nullptr;
    siglongjmp(*t_fault_jump, 1);
  }
  // Not a kernel's fault: hand it to whoever handled it before us.
  for (int i = 0; i < 4; ++i) {
    if (kFaultSignals[i] != sig)
      continue;
    const struct sigaction& prev = g_previous[i];
    if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
      prev.sa_sigaction(sig, info, context);
      return;
    }
    if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler) {
      prev.sa_handler(sig);
      return;
    }
    sigaction(sig, &prev, nullptr); // the default action happens when the instruction reruns
    return;
  }
}

void install_fault_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; ++i)
      sigaction(kFaultSignals[i], &sa, &g_previous[i]);
  });
  // A kernel that overflows its stack faults on it: the handler needs a stack of its own.
  thread_local std::unique_ptr<char[]> alternate;
  if (!alternate) {
    stack_t current{};
    if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
      constexpr size_t kSize = 64 * 1024;
      alternate = std::make_unique<char[]>(kSize);
      stack_t st{};
      st.ss_sp = alternate.get();
      st.ss_size = kSize;
      sigaltstack(&st, nullptr);
    } else {
      alternate = std::make_unique<char[]>(1);
    }
  }
}

// ---------------------------------------------------------------- one block

enum : uint8_t { Runnable, Waiting, Yielded, Done };

// A warp's state while the block goes in step (run_block): its running threads [lo, hi)
// resume at `point`.
struct WarpRun {
  uint32_t lo = 0, hi = 0, point = 0;
  uint32_t stop_lo = 0, stop_hi = 0; // where it stopped, after a run
  uint8_t state = 0;
  bool ran = false;
};

// A worker's memory for the blocks it runs, reused from launch to launch.
struct Scratch {
  std::vector<uint8_t> shared, local;
  std::vector<uint64_t> spill, exchange, released;
  std::vector<uint32_t> next, warp_mask, barrier, resume, fragments;
  std::vector<uint32_t> shfl_exchange, shfl_released; // shfl_released has kShuffleSlack at both ends
  std::vector<uint8_t> status;
  std::vector<WarpRun> warps;
};


// Runs threads [begin, end) of a block from `resume` (the kernel goes row by row itself:
// codegen::FunctionLowering::emit_row_setup).
void run_threads(KernelEntry entry, const void* args, BlockState& bs, uint32_t begin, uint32_t end,
                 uint32_t resume) {
  entry(args, &bs, begin, end, resume);
}

// Runs one block to completion with `entry`, the kernel's code when the block started (a
// block never changes tiers: the quick code saves registers at a split point that the
// optimised code computes again); returns CUDA_SUCCESS or the error a trap gives.
CUresult run_block(const CompiledKernel& k, KernelEntry entry, const void* args, BlockState& bs, Scratch& s) {
  const uint32_t n = bs.nthreads;
  // Its threads all run to their end in one call, and say nothing of it.
  if (k.plain_exit) {
    run_threads(entry, args, bs, 0, n, codegen::kResumeStart);
    return CUDA_SUCCESS;
  }
  // Calls read next[t] to see whether their callee ended the thread; without calls the
  // kernel writes next[t] of every thread it runs before this reads it (1 KB a block of
  // 256 threads, as much as a stencil block's input).
  if (k.calls)
    std::fill_n(s.next.begin(), n, 0u);
  auto ended = [](uint32_t stop) {
    return stop == codegen::kThreadTrapped     ? CUDA_ERROR_LAUNCH_FAILED
           : stop == codegen::kThreadFaulted    ? CUDA_ERROR_ILLEGAL_ADDRESS
           : stop == codegen::kThreadMisaligned ? CUDA_ERROR_MISALIGNED_ADDRESS
                                                : CUDA_ERROR_ASSERT;
  };
  if (k.splits.empty()) {
    run_threads(entry, args, bs, 0, n, codegen::kResumeStart);
    // Branch-free, so that it vectorises: the common case is a block that ended normally.
    // A stop in [kThreadStopped, kThreadExited) is a trap, fault or assertion.
    bool stopped = false;
    for (uint32_t t = 0; t < n; ++t)
      stopped |=
          s.next[t] - codegen::kThreadStopped < codegen::kThreadExited - codegen::kThreadStopped;
    if (!stopped) return CUDA_SUCCESS;
    for (uint32_t t = 0; t < n; ++t)
      if (s.next[t] >= codegen::kThreadStopped && s.next[t] != codegen::kThreadExited)
        return ended(s.next[t]);
    return CUDA_SUCCESS;
  }
  uint32_t arrivals[256]; // bar.arrive's counts by barrier id, zeroed where the block goes out of step
  uint32_t done = 0;
  constexpr uint32_t kMaxIdleRounds = 1u << 20;
  uint32_t idle_rounds = 0;
  bool again = false;
  // Where thread i stopped (next[i]) decides its state; false when it ended the block.
  auto absorb = [&](uint32_t i) {
    uint32_t stop = s.next[i];
    if (stop == codegen::kThreadExited) {
      s.status[i] = Done;
      ++done;
    } else if (stop >= codegen::kThreadStopped) {
      return false;
    } else {
      s.resume[i] = stop;
      if (k.splits[stop - 1] == codegen::SplitKind::Arrive) {
        ++arrivals[s.barrier[i] & 0xff];
        again = true; // goes on at once (stays runnable)
      } else if (k.splits[stop - 1] == codegen::SplitKind::Yield) {
        s.status[i] = Yielded; // goes on once the others have had their turn
      } else {
        s.status[i] = Waiting;
      }
    }
    return true;
  };

  // The common case first: every warp goes in step. Each warp's threads still running are
  // one range of its lanes (the others exited) and stop at the same split point. A warp at
  // a warp or matrix operation whose member masks name all its running lanes goes on at
  // once; warps at a full barrier wait until every warp that has not ended is there. Work
  // is tracked per warp, and warps that resume at the same point run in one call. This
  // covers `if (warp == 0) { shuffles }` between barriers. Anything else (a divergent
  // warp, bar.arrive, bar.red, counted barriers, mbarrier waits) goes on out of step.
  const uint32_t nwarps = (n + 31) / 32;
  std::vector<WarpRun>& warps = s.warps;
  warps.resize(nwarps);
  auto enter_in_step = [&](uint32_t lo, uint32_t hi, uint32_t point) {
    for (uint32_t w = 0; w < nwarps; ++w) {
      WarpRun& r = warps[w];
      r.lo = std::max(lo, w * 32);
      r.hi = std::min(hi, std::min(n, w * 32 + 32));
      r.point = point;
      r.state = r.lo < r.hi ? Runnable : Done;
      r.ran = false;
    }
  };
  // Most blocks run to their end in one call of the whole block: nothing more to look at.
  bs.ended = 0;
  run_threads(entry, args, bs, 0, n, codegen::kResumeStart);
  if (bs.ended)
    return CUDA_SUCCESS;
  enter_in_step(0, n, codegen::kResumeStart);
  for (WarpRun& r : warps)
    r.ran = r.state == Runnable;
  bool first_call = true; // made above
in_step:
  for (;;) {
    // Runs of warps that resume at the same point, over contiguous threads.
    for (uint32_t w = first_call ? nwarps : 0; w < nwarps;) {
      if (warps[w].state != Runnable) {
        ++w;
        continue;
      }
      uint32_t u = w + 1;
      while (u < nwarps && warps[u].state == Runnable && warps[u].point == warps[w].point &&
             warps[u].lo == warps[u - 1].hi)
        ++u;
      bs.ended = 0;
      run_threads(entry, args, bs, warps[w].lo, warps[u - 1].hi, warps[w].point);
      // The kernel saw every thread it ran exit (BlockState::ended): nothing to read.
      for (uint32_t v = w; v < u; ++v) {
        warps[v].ran = !bs.ended;
        if (bs.ended)
          warps[v].state = Done;
      }
      w = u;
    }
    first_call = false;
    // Where each warp that ran stopped; any warp out of step sends the block out of step
    // (next[] still tells every thread's stop).
    bool out = false;
    for (uint32_t w = 0; w < nwarps && !out; ++w) {
      WarpRun& r = warps[w];
      if (!r.ran)
        continue;
      uint32_t lo = r.lo, hi = r.hi;
      // Whole warps end together (the end of every block): one branch-free pass, which
      // vectorises, instead of a search thread by thread.
      bool ended_all = true;
      for (uint32_t t = lo; t < hi; ++t)
        ended_all &= s.next[t] == codegen::kThreadExited;
      if (ended_all)
        lo = hi;
      while (lo < hi && s.next[lo] == codegen::kThreadExited)
        ++lo;
      while (hi > lo && s.next[hi - 1] == codegen::kThreadExited)
        --hi;
      r.stop_lo = lo;
      r.stop_hi = hi;
      if (lo == hi)
        continue;
      const uint32_t stop = s.next[lo];
      bool same = true;
      for (uint32_t t = lo + 1; t < hi; ++t)
        same &= s.next[t] == stop;
      if (!same || stop >= codegen::kThreadStopped) {
        if (same && stop != codegen::kThreadExited)
          return ended(stop);
        out = true;
        break;
      }
      const codegen::SplitKind kind = k.splits[stop - 1];
      if (kind == codegen::SplitKind::Barrier) {
        uint32_t word = s.barrier[lo];
        bool full = (word >> 8) == 0;
        for (uint32_t t = lo + 1; t < hi; ++t)
          full &= s.barrier[t] == word;
        out = !full;
      } else if (kind == codegen::SplitKind::Warp || kind == codegen::SplitKind::WarpMatrix) {
        const uint32_t base = w * 32;
        const uint32_t lanes = (hi - lo >= 32 ? ~0u : ((1u << (hi - lo)) - 1)) << (lo - base);
        bool whole = true;
        for (uint32_t t = lo; t < hi; ++t)
          whole &= (s.barrier[t] & lanes) == lanes;
        out = !whole;
      } else {
        out = true;
      }
    }
    if (out)
      break;
    // Apply: warp operations are released, barriers wait.
    bool runnable = false;
    for (uint32_t w = 0; w < nwarps; ++w) {
      WarpRun& r = warps[w];
      if (!r.ran)
        continue;
      r.ran = false;
      r.lo = r.stop_lo;
      r.hi = r.stop_hi;
      if (r.lo == r.hi) {
        r.state = Done;
        continue;
      }
      r.point = s.next[r.lo];
      if (k.splits[r.point - 1] == codegen::SplitKind::Barrier) {
        r.state = Waiting;
        continue;
      }
      const uint32_t base = w * 32;
      const uint32_t lanes = (r.hi - r.lo >= 32 ? ~0u : ((1u << (r.hi - r.lo)) - 1)) << (r.lo - base);
      if (k.splits[r.point - 1] == codegen::SplitKind::WarpMatrix)
        run_matrix_op(bs, base, lanes);
      std::fill(s.warp_mask.begin() + r.lo, s.warp_mask.begin() + r.hi, lanes);
      std::copy(s.exchange.begin() + r.lo, s.exchange.begin() + r.hi, s.released.begin() + r.lo);
      std::copy(s.shfl_exchange.begin() + r.lo, s.shfl_exchange.begin() + r.hi,
                s.shfl_released.begin() + codegen::kShuffleSlack + r.lo);
      r.state = Runnable;
      runnable = true;
    }
    if (runnable)
      continue;
    // Every warp waits at a barrier or has ended: a full barrier that all of them wait at
    // (the same id; the sites may differ) lets them all go on.
    uint32_t word = 0;
    bool any = false, one = true;
    for (uint32_t w = 0; w < nwarps; ++w)
      if (warps[w].state == Waiting) {
        uint32_t wword = s.barrier[warps[w].lo];
        one &= !any || wword == word;
        word = wword;
        any = true;
      }
    if (!any)
      return CUDA_SUCCESS;
    if (!one)
      break;
    for (uint32_t w = 0; w < nwarps; ++w)
      if (warps[w].state == Waiting)
        warps[w].state = Runnable;
  }
  // Out of step: every thread's own state from here on.
  std::fill_n(arrivals, 256, 0u);
  done = 0;
  std::fill_n(s.status.begin(), n, uint8_t(Runnable));
  for (uint32_t i = 0; i < n; ++i)
    if (!absorb(i))
      return ended(s.next[i]);

  for (;;) {
    // Back in step (`if (warp == 0) {...}` ended at a barrier): every thread that has not
    // exited is runnable at the same point, in one range, with no bar.arrive pending.
    if (!again) {
      uint32_t first = n, last = 0;
      bool in_step = true;
      for (uint32_t t = 0; t < n && in_step; ++t) {
        if (s.status[t] == Done)
          continue;
        if (s.status[t] != Runnable || (first < n && (s.resume[t] != s.resume[first] || last + 1 != t))) {
          in_step = false;
          break;
        }
        if (first == n)
          first = t;
        last = t;
      }
      for (uint32_t id = 0; id < 256 && in_step; ++id)
        in_step = arrivals[id] == 0;
      if (in_step && first < n) {
        enter_in_step(first, last + 1, s.resume[first]);
        goto in_step;
      }
    }
    // Every runnable thread goes on to its next stop, in runs that resume at the same point.
    for (uint32_t t = 0; t < n;) {
      if (s.status[t] != Runnable) {
        ++t;
        continue;
      }
      uint32_t r = s.resume[t], u = t + 1;
      while (u < n && s.status[u] == Runnable && s.resume[u] == r)
        ++u;
      run_threads(entry, args, bs, t, u, r);
      for (uint32_t i = t; i < u; ++i)
        if (!absorb(i))
          return ended(s.next[i]);
      t = u;
    }
    if (again) {
      again = false;
      continue;
    }
    if (done == n)
      return CUDA_SUCCESS;
    // The common case first: every thread that has not exited waits at the same full
    // barrier (bar.sync 0 / __syncthreads) and nothing else is pending: all go on.
    {
      uint32_t point = 0, word = 0;
      bool uniform = true;
      for (uint32_t t = 0; t < n && uniform; ++t) {
        if (s.status[t] == Done)
          continue;
        if (s.status[t] != Waiting) {
          uniform = false;
          break;
        }
        if (!point) {
          point = s.resume[t];
          word = s.barrier[t];
        }
        uniform = s.resume[t] == point && s.barrier[t] == word;
      }
      if (uniform && point && k.splits[point - 1] == codegen::SplitKind::Barrier && (word >> 8) == 0 &&
          arrivals[word & 0xff] == 0) {
        for (uint32_t t = 0; t < n; ++t)
          if (s.status[t] == Waiting)
            s.status[t] = Runnable;
        continue;
      }
    }
    // Warps: lanes waiting at the same warp operation go on together, once every lane
    // of their member masks that has not exited is there. When no warp and no barrier can
    // go on (a member mask naming lanes that never come), the groups go on as they are.
    auto release_warps = [&](bool force) {
      bool any_released = false;
      for (uint32_t w = 0; w < n; w += 32) {
        uint32_t end = std::min(n, w + 32), alive = 0;
        for (uint32_t j = w; j < end; ++j)
          if (s.status[j] != Done)
            alive |= 1u << (j - w);
        for (uint32_t i = w; i < end; ++i) {
          codegen::SplitKind kind = s.status[i] == Waiting ? k.splits[s.resume[i] - 1] : codegen::SplitKind::Barrier;
          if (kind != codegen::SplitKind::Warp && kind != codegen::SplitKind::WarpMatrix)
            continue;
          uint32_t point = s.resume[i], group = 0, wanted = 0;
          for (uint32_t j = i; j < end; ++j)
            if (s.status[j] == Waiting && s.resume[j] == point) {
              group |= 1u << (j - w);
              wanted |= s.barrier[j];
            }
          if (!force && (wanted & alive & ~group))
            continue; // some member lanes are still on their way
          if (kind == codegen::SplitKind::WarpMatrix)
            run_matrix_op(bs, w, group);
          for (uint32_t j = i; j < end; ++j)
            if (group & (1u << (j - w))) {
              s.warp_mask[j] = group;
              s.released[j] = s.exchange[j];
              s.shfl_released[codegen::kShuffleSlack + j] = s.shfl_exchange[j];
              s.status[j] = Runnable;
            }
          any_released = true;
        }
      }
      return any_released;
    };
    if (release_warps(false))
      continue;
    // Barriers: released when every thread expected (all that have not exited, or the
    // count given) has arrived or is waiting.
    uint32_t waiting[256] = {}, count[256] = {};
    for (uint32_t t = 0; t < n; ++t)
      if (s.status[t] == Waiting) {
        uint32_t id = s.barrier[t] & 0xff;
        ++waiting[id];
        if (uint32_t c = (s.barrier[t] >> 8) & 0xffff)
          count[id] = c;
      }
    bool any = false;
    bool release[256] = {};
    for (uint32_t id = 0; id < 256; ++id) {
      if (!waiting[id])
        continue;
      uint32_t expected = count[id] ? count[id] : n - done;
      if (waiting[id] + arrivals[id] >= expected) {
        release[id] = true;
        arrivals[id] = waiting[id] + arrivals[id] - std::min(expected, waiting[id] + arrivals[id]);
        any = true;
      }
    }
    // Threads waiting on an mbarrier try again once the others have run; when nothing
    // else moves for a long time, the phase they wait for will never complete.
    uint32_t yielded = 0;
    for (uint32_t t = 0; t < n; ++t)
      if (s.status[t] == Yielded) {
        s.status[t] = Runnable;
        ++yielded;
      }
    if (yielded && !any) {
      if (++idle_rounds > kMaxIdleRounds) {
        warn_once("mbarrier-deadlock:" + k.name, "kernel '" + k.name +
                                                     "': threads wait for an mbarrier phase that never completes "
                                                     "(a hang on a GPU); the launch fails");
        return CUDA_ERROR_LAUNCH_FAILED;
      }
      continue;
    }
    if (yielded)
      idle_rounds = 0;
    if (!any && release_warps(true))
      continue;
    if (!any) {
      // On a GPU these threads would wait forever; here they go on, and the user is told.
      warn_once("barrier-deadlock:" + k.name, "kernel '" + k.name +
                                                  "': threads wait at a barrier that not all expected threads "
                                                  "reach (a hang on a GPU); releasing them");
      for (uint32_t id = 0; id < 256; ++id)
        release[id] = waiting[id] != 0;
    }
    // bar.red: the reduction over the waiting threads' predicates is each one's result.
    uint64_t popc[256] = {}, all[256], anyp[256] = {};
    std::fill_n(all, 256, 1);
    for (uint32_t t = 0; t < n; ++t)
      if (s.status[t] == Waiting && release[s.barrier[t] & 0xff] &&
          k.splits[s.resume[t] - 1] == codegen::SplitKind::BarrierReduce) {
        uint32_t id = s.barrier[t] & 0xff;
        bool p = s.exchange[t] != 0;
        popc[id] += p;
        all[id] &= p;
        anyp[id] |= p;
      }
    for (uint32_t t = 0; t < n; ++t) {
      if (s.status[t] != Waiting || !release[s.barrier[t] & 0xff])
        continue;
      if (k.splits[s.resume[t] - 1] == codegen::SplitKind::BarrierReduce) {
        uint32_t id = s.barrier[t] & 0xff;
        auto op = codegen::BarrierReduction((s.barrier[t] >> 24) & 3);
        s.exchange[t] = op == codegen::BarrierReduction::Popc ? popc[id]
                        : op == codegen::BarrierReduction::And ? all[id]
                                                                : anyp[id];
      }
      s.status[t] = Runnable;
    }
  }
}

// ---------------------------------------------------------------- a grid

// What the threads running a grid's blocks share. The launching thread writes it before
// any worker starts and only the block counter and the error are written afterwards, each
// on a cache line of its own: a worker's first look at a launch costs a few cache misses,
// not one per variable of the launching thread's frame.
struct alignas(64) GridRun {
  const CompiledKernel* k;
  // The kernel's code for this launch's block shape, where it has some (null while it is
  // being compiled: its code for any shape runs meanwhile); null for other shapes.
  const std::atomic<KernelEntry>* shaped = nullptr;
  const void* args;
  runtime::LaunchShape shape;
  uint64_t blocks;
  uint64_t chunk; // blocks taken at a time
  uint32_t n;     // threads per block
  size_t user_shared, reserved_begin, shared_bytes, local_stride;
  bool has_matrix_ops;
  LaunchCheck check;
  alignas(64) uint64_t workspace[16] = {}; // the grid's workspace (%envreg1:%envreg2)
  alignas(64) std::atomic<uint64_t> next{0};
  alignas(64) std::atomic<bool> failed{false};
  std::mutex error_mutex;
  CUresult error = CUDA_SUCCESS;
  std::string fault;

  void fail(CUresult r, std::string message) {
    std::lock_guard lock(error_mutex);
    if (error == CUDA_SUCCESS) {
      error = r;
      fault = std::move(message);
    }
    failed = true;
  }
};

// Runs blocks of the grid until none is left (or one failed), on the calling thread.
void run_grid_blocks(GridRun& g) {
  // A worker that arrives when the other threads have taken every block only checks in.
  if (g.next.load(std::memory_order_relaxed) >= g.blocks) return;
  const CompiledKernel& k = *g.k;
  const runtime::LaunchShape& shape = g.shape;
  const uint32_t n = g.n;
  install_fault_handlers();
  thread_local Scratch scratch;
  Scratch& s = scratch;
  // Shared memory starts zeroed for the whole launch (CUDA leaves it undefined).
  s.shared.assign(g.shared_bytes + 16, 0);
  s.local.resize(g.local_stride * n);
  s.spill.resize(size_t(k.spill_slots) * n);
  s.exchange.resize(n);
  s.released.resize(n);
  s.shfl_exchange.resize(n);
  s.shfl_released.resize(n + 2 * codegen::kShuffleSlack);
  if (g.has_matrix_ops) s.fragments.resize(size_t(n) * codegen::kFragmentWords);
  s.next.resize(n);
  s.warp_mask.resize(n);
  s.barrier.resize(n);
  s.resume.resize(n);
  s.status.resize(n);
  using R = codegen::SpecialRegister;
  BlockState bs{};
  auto set = [&](R r, uint32_t v) { bs.sreg[size_t(r)] = v; };
  const uint64_t workspace_address = reinterpret_cast<uintptr_t>(g.workspace);
  set(R::NtidX, shape.block[0]);
  set(R::NtidY, shape.block[1]);
  set(R::NtidZ, shape.block[2]);
  set(R::NctaidX, shape.grid[0]);
  set(R::NctaidY, shape.grid[1]);
  set(R::NctaidZ, shape.grid[2]);
  set(R::NWarpId, (n + 31) / 32);
  set(R::NSmId, config::worker_threads());
  set(R::DynamicSmemSize, uint32_t(shape.dynamic_shared_bytes));
  set(R::TotalSmemSize, uint32_t(g.user_shared));
  set(R::ReservedSmemBegin, uint32_t(g.reserved_begin));
  set(R::ReservedSmemEnd, uint32_t(g.shared_bytes));
  set(R::ReservedSmemCap, uint32_t(g.shared_bytes));
  set(R::ReservedSmem0, uint32_t(g.reserved_begin));
  set(R::ReservedSmem1, uint32_t(g.reserved_begin + 256));
  set(R::RowBase, 0);
  set(R::TidY, 0);
  set(R::TidZ, 0);
  set(R::EnvReg1, uint32_t(workspace_address >> 32));
  set(R::EnvReg2, uint32_t(workspace_address));
  for (int i = 0; i < 3; ++i)
    bs.block_dim[i] = shape.block[i];
  bs.nthreads = n;
  bs.shared = s.shared.data();
  bs.local = s.local.data();
  bs.local_stride = g.local_stride;
  bs.spill = s.spill.data();
  bs.next = s.next.data();
  bs.exchange = s.exchange.data();
  bs.released = s.released.data();
  bs.shfl_exchange = s.shfl_exchange.data();
  bs.shfl_released = s.shfl_released.data() + codegen::kShuffleSlack;
  bs.fragments = s.fragments.data();
  bs.shared_bytes = g.shared_bytes;
  bs.check = &g.check;
  bs.warp_mask = s.warp_mask.data();
  bs.barrier = s.barrier.data();
  volatile uint64_t current = 0;
  sigjmp_buf jump;
  // The signal mask need not be saved (a system call per worker and launch): the fault
  // handler runs with SA_NODEFER and an empty sa_mask, so it leaves the mask as it was.
  if (sigsetjmp(jump, 0) != 0) {
    t_fault_jump = nullptr;
    uint64_t b = current;
    char text[256];
    const char* what = t_fault_signal == SIGSEGV || t_fault_signal == SIGBUS
                           ? "an illegal memory access"
                       : t_fault_signal == SIGFPE ? "an arithmetic exception"
                                                  : "an illegal instruction";
    snprintf(text, sizeof text, "kernel '%s' made %s (address %p) in block (%llu, %llu, %llu)",
             k.name.c_str(), what, t_fault_address, (unsigned long long)(b % shape.grid[0]),
             (unsigned long long)((b / shape.grid[0]) % shape.grid[1]),
             (unsigned long long)(b / (uint64_t(shape.grid[0]) * shape.grid[1])));
    g.fail(t_fault_signal == SIGSEGV || t_fault_signal == SIGBUS ? CUDA_ERROR_ILLEGAL_ADDRESS
                                                                 : CUDA_ERROR_LAUNCH_FAILED,
           text);
    return;
  }
  t_fault_jump = &jump;
  const uint64_t blocks = g.blocks, chunk = g.chunk;
  for (uint64_t first;
       !g.failed.load(std::memory_order_relaxed) && (first = g.next.fetch_add(chunk)) < blocks;) {
    // The block's coordinates: divided out for the chunk's first block, then counted.
    uint32_t x = uint32_t(first % shape.grid[0]), y = uint32_t((first / shape.grid[0]) % shape.grid[1]),
             z = uint32_t(first / (uint64_t(shape.grid[0]) * shape.grid[1]));
    for (uint64_t b = first; b < std::min(blocks, first + chunk); ++b) {
      current = b;
      set(R::CtaidX, x);
      set(R::CtaidY, y);
      set(R::CtaidZ, z);
      if (++x == shape.grid[0]) {
        x = 0;
        if (++y == shape.grid[1]) {
          y = 0;
          ++z;
        }
      }
      // Read once per block: a block keeps the code it started with (tiers.h).
      KernelEntry code = g.shaped ? g.shaped->load(std::memory_order_acquire) : nullptr;
      if (!code) code = k.entry.load(std::memory_order_acquire);
      if (CUresult r = run_block(k, code, g.args, bs, s); r != CUDA_SUCCESS) {
        g.fail(r, r == CUDA_ERROR_ASSERT ? "kernel '" + k.name + "' failed a device-side assertion"
                  : r == CUDA_ERROR_ILLEGAL_ADDRESS
                      ? "kernel '" + k.name + "' made an invalid memory access"
                  : r == CUDA_ERROR_MISALIGNED_ADDRESS
                      ? "kernel '" + k.name + "' made a misaligned memory access"
                      : "kernel '" + k.name + "' executed a trap instruction");
        break;
      }
    }
  }
  t_fault_jump = nullptr;
}

} // namespace

CUresult launch_on_cpu(runtime::CompiledProgram& compiled, size_t kernel, const runtime::LaunchShape& shape,
                       const void* args) {
  auto& program = static_cast<CpuCompiledProgram&>(compiled);
  if (kernel >= program.kernels.size())
    return CUDA_ERROR_INVALID_HANDLE;
  // A kernel compiled lazily gets its code at its first launch.
  const codegen::BlockShape dims{shape.block[0], shape.block[1], shape.block[2]};
  if (Status s = program.entry(kernel, dims); !s) {
    log_error(s.error().message());
    return CUresult(s.error().code());
  }
  const CompiledKernel& k = program.kernels[kernel];
  GridRun g;
  g.k = &k;
  if (k.shape_fixed.load(std::memory_order_acquire) && k.shape == dims) g.shaped = &k.shaped;
  g.args = args;
  g.shape = shape;
  g.blocks = uint64_t(shape.grid[0]) * shape.grid[1] * shape.grid[2];
  g.n = shape.block[0] * shape.block[1] * shape.block[2];
  unsigned workers = config::worker_threads();
  // A grid that synchronises (cooperative groups' grid.sync) needs every block resident:
  // one host thread per block. The launch checked the grid against the resident limit.
  if (k.grid_sync) workers = unsigned(std::min<uint64_t>(g.blocks, 4096));
  if (uint64_t(workers) > g.blocks) workers = unsigned(g.blocks);
  // Blocks are handed out in chunks so that small blocks do not contend on the counter.
  g.chunk = k.grid_sync ? 1 : std::max<uint64_t>(1, g.blocks / (uint64_t(workers) * 16));
  g.check.accessible = shape.accessible;
  g.check.kernel = k.name.c_str();
  g.user_shared = std::max(k.shared_bytes, k.dynamic_offset + shape.dynamic_shared_bytes);
  g.reserved_begin = (g.user_shared + 15) / 16 * 16;
  g.shared_bytes = g.reserved_begin + codegen::kReservedSharedBytes;
  g.local_stride = (k.local_bytes + 15) / 16 * 16;
  g.has_matrix_ops =
      std::find(k.splits.begin(), k.splits.end(), codegen::SplitKind::WarpMatrix) != k.splits.end();
  // The process's worker pool runs the blocks; a grid that synchronises gets threads of
  // its own (one per block), and so does a launch made while another one holds the pool
  // (streams of other host threads), rather than waiting for it.
  WorkerPool& pool = WorkerPool::instance();
  auto job = [](void* grid, unsigned) { run_grid_blocks(*static_cast<GridRun*>(grid)); };
  if (k.grid_sync || workers > pool.size() || !pool.run(workers, job, &g, false)) {
    std::vector<std::thread> own;
    for (unsigned w = 1; w < workers; ++w)
      own.emplace_back([&g] { run_grid_blocks(g); });
    run_grid_blocks(g);
    for (auto& t : own)
      t.join();
  }
  if (g.error != CUDA_SUCCESS) log_error(g.fault);
  return g.error;
}

} // namespace mimic::cpu
