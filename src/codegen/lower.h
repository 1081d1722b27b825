// PTX -> LLVM IR, backend-neutral (docs/codegen-plan.md, layer 1).
//
// Each PTX kernel becomes a resumable loop over the threads of a block (block_state.h):
// `void @mimic_kernel_N(ptr %params, ptr %block, i32 %begin, i32 %end, i32 %resume)`, with
// `%params` the packed argument buffer (runtime::KernelInfo::params). Barriers and warp
// operations are split points where each thread stops so that the executor can run the
// others up to the same point. Special registers are calls to `@mimic.sreg`, which each
// backend defines. Module-level variables are external globals named as in PTX; the
// backend binds them to the addresses of the runtime module's globals.
//
// What cannot be lowered fails the whole program, naming each kernel with the PTX line of
// the first construct it could not translate.
//
// For a GPU (Target::Amdgpu) the same instruction lowering emits the plain SIMT form
// instead (lower_gpu.cpp): one `amdgpu_kernel` function per kernel, named as in PTX, with
// each PTX parameter an argument of its own (`ptr addrspace(4) byref([size x i8]) align A`,
// so the kernel argument segment has the packed layout of runtime::KernelInfo::params),
// special registers from work-item intrinsics and the implicit arguments (code object v5),
// barriers and warp operations as AMDGPU intrinsics, shared memory as addrspace(3)
// variables, module variables as addrspace(1) globals. Allocas stay in address space 0:
// the backend moves them to its private address space once it sets the data layout.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "codegen/block_state.h"
#include "runtime/program.h"
#include "support/error.h"

namespace mimic::codegen {

// What the lowering produces code for.
enum class Target : uint8_t {
  Cpu,    // the resumable thread loop of block_state.h
  Amdgpu, // one work-item per invocation, AMDGPU intrinsics (wave32)
};

struct LowerOptions {
  Target target = Target::Cpu;
  // `check_memory` (MIMIC_CHECK=memory, CPU only): every global, generic and shared access
  // asks mimic_check_access first, and a bad one ends the thread (kThreadFaulted).
  bool check_memory = false;
};

struct LoweredKernel {
  std::string symbol;               // LLVM function name (Target::Amdgpu: the PTX name)
  std::vector<SplitKind> splits;    // kind of split point k at splits[k - 1]
  size_t local_bytes = 0;           // each thread's local frame
  unsigned spill_slots = 0;         // 8-byte slots per thread for registers live across splits
  bool grid_sync = false;           // waits for other blocks (grid.sync): all blocks must run at once
  // Uses its thread block cluster (shared::cluster addresses, mapa, cluster barriers and
  // registers): lowered for clusters of one block, the only size the CPU backend runs it in.
  bool cluster = false;
  // Every thread runs to its end in one call and cannot stop otherwise (no split point,
  // trap, assertion, memory check or call that may end it): the kernel does not write
  // next[] (BlockState), and the executor neither clears nor reads it.
  bool plain_exit = false;
  // Calls functions (directly or through a pointer), which say that they ended the thread
  // in next[]: the executor clears next[] before each block. Without calls the kernel
  // writes next[t] for every thread it runs before anything reads it.
  bool calls = false;
};

struct LoweredProgram {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::vector<LoweredKernel> kernels; // in Program::kernels order
  std::vector<std::string> globals;  // external globals the module uses
  // .func whose address a global's initializer takes: PTX name -> LLVM symbol.
  std::vector<std::pair<std::string, std::string>> address_taken;
};

// Intrinsics the lowering emits (each backend defines them):
//   i32 @mimic.sreg(ptr %block, i32 %thread, i32 %which)   special registers, `which` from
//   SpecialRegister; block-wide ones are BlockState::sreg[which].

// Target::Amdgpu: the CUDA device runtime's printf, assert, malloc and free become calls to
// these, which the backend lowers (backends/amdgpu: its device log and device heap):
//   i32 @mimic.gpu.printf(ptr format, ptr args)              vprintf's arguments
//   void @mimic.gpu.assert(ptr message, ptr file, i32 line, ptr function), then a trap
//   ptr @mimic.gpu.malloc(i64 bytes), void @mimic.gpu.free(ptr)   the device heap
//   void @mimic.gpu.trap(i32 reason, i32 instruction, i64 handle, i32 line), then a trap:
//     a texture or surface helper refused (reason: kTexBadHandle or kTexOutOfRange,
//     instruction: TextureInstruction, both of codegen/texture_abi.h; line: the PTX line)
// The texture and surface helpers of texture_abi.h are called as on the CPU; the backend
// links their GPU definitions (backends/amdgpu/texture_library.cpp).
inline constexpr const char* kGpuPrintf = "mimic.gpu.printf";
inline constexpr const char* kGpuAssert = "mimic.gpu.assert";
inline constexpr const char* kGpuMalloc = "mimic.gpu.malloc";
inline constexpr const char* kGpuFree = "mimic.gpu.free";
inline constexpr const char* kGpuTrap = "mimic.gpu.trap";

// `check_memory` (MIMIC_CHECK=memory): every global, generic and shared access asks
// mimic_check_access first, and a bad one ends the thread (kThreadFaulted).
// MIMIC_WARP_CHAINS=0 lowers every shuffle on its own instead of running straight runs of
// them a warp at a time (codegen/warp_chain.cpp), for comparisons; the JIT cache keys on it.
bool warp_chains_enabled();
// MIMIC_LANE0_CHAINS=0 writes back every lane of a warp chain's outputs, where the chain
// would write only lane 0's for outputs read after it only under `lane == 0`
// (codegen/warp_chain.cpp), for comparisons; the JIT cache keys on it.
bool lane0_chains_enabled();
// MIMIC_LAZY_STOPS=0 keeps every thread loop's per-thread stores of where its threads
// stopped, where the chain would write them only when something reads them (a thread loop
// with one stop: lower.cpp, LazyStop), for comparisons; the JIT cache keys on it.
bool lazy_stops_enabled();
// MIMIC_STOP_COUNTS=0 makes the chain read the threads' stops after a thread loop with two
// (an `if (warp == 0)` between barriers), where the loop would count them (lower.cpp,
// StopPair), for comparisons; the JIT cache keys on it.
bool stop_counts_enabled();
// MIMIC_FULL_ROWS=0 keeps one thread loop for every row, where a block of several rows
// gets a copy of each for a whole row (lower.cpp, copy_full_rows), for comparisons; the
// JIT cache keys on it.
bool full_rows_enabled();

// Keeps LLVM's warnings and remarks about the code Mimic made ("loop not vectorized") off
// the application's standard error (errors still print); every context that optimises
// lowered code needs it (the lowering's own, the CPU JIT's background compiler's).
void quiet_llvm_diagnostics(llvm::LLVMContext& context);

Result<LoweredProgram> lower(const runtime::Program& program, bool check_memory = false);
Result<LoweredProgram> lower(const runtime::Program& program, const LowerOptions& options);

// The LLVM symbol of module-level variable `name` (an external global the backend binds).
std::string global_symbol(std::string_view name);

// Lowers each kernel on its own and says which translate (for `mimic info --compile`).
struct KernelVerdict {
  std::string name;
  bool translates = false;
  std::string error;
};
std::vector<KernelVerdict> check_kernels(const runtime::Program& program, Target target = Target::Cpu);

} // namespace mimic::codegen
