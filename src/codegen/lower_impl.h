// Internals of the PTX -> LLVM lowering, shared by lower.cpp (structure, operands) and
// lower_instructions.cpp (one lowering per instruction family).
#pragma once

#include <cstring>
#include <cuda.h>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include "codegen/block_state.h"
#include "codegen/lower_arith.h"
#include "codegen/loop_prefetch.h"
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
  explicit ModuleLowering(const runtime::Program& program, const LowerOptions& options = {});
  Result<LoweredProgram> run();
  std::vector<KernelVerdict> check();

  llvm::Module* module() { return module_.get(); }
  Target target() const { return target_; }
  bool gpu() const { return target_ != Target::Cpu; }
  // The instruction being lowered, for errors raised outside FunctionLowering.
  const ptx::Instruction* current = nullptr;
  // Target::Amdgpu: a kernel's static shared memory (its window, addrspace(3)), the dynamic
  // shared memory after it, and the word bar.red reduces in.
  llvm::GlobalVariable* gpu_shared_window(const runtime::KernelInfo& kernel);
  llvm::GlobalVariable* gpu_dynamic_shared();
  llvm::GlobalVariable* gpu_reduction_word();
  llvm::GlobalVariable* gpu_reserved_shared(); // %reserved_smem_offset_*: kReservedSharedBytes
  llvm::GlobalVariable* gpu_grid_workspace();  // %envreg1:%envreg2 (grid.sync)
  llvm::GlobalVariable* gpu_named_barriers();  // bar.arrive / counted bar.sync: a word per id
  // Target::Amdgpu: printf and assert call these placeholders (kGpuPrintf, kGpuAssert in
  // lower.h), which the backend replaces with writes to its device log.
  llvm::Function* gpu_log_function(const char* name, llvm::Type* result, std::initializer_list<llvm::Type*> params);
  // Target::Amdgpu: the GPU's own definition of a helper of block_state.h (mbarrier
  // objects), or null when it has none.
  llvm::Function* gpu_helper(std::string_view name);
  // Target::Amdgpu: whether the backend links a GPU definition of helper `name` (the
  // texture and surface helpers), so that it is declared as on the CPU.
  static bool gpu_links_helper(std::string_view name);
  // Target::Amdgpu: a host helper has no GPU counterpart (yet); names the feature and line.
  [[noreturn]] void throw_missing_gpu_helper(std::string_view name) const;
  llvm::Function* sreg_fn();
  // A runtime helper of block_state.h (mimic_warp_*), declared on first use.
  llvm::Function* helper(const char* name, llvm::Type* result, std::initializer_list<llvm::Type*> params);
  // The external global standing for a module-level variable, or null if none is named so.
  llvm::GlobalVariable* global(std::string_view name);
  // The PTX function of that name in the program (with a body or declared .extern).
  const ptx::Function* ptx_function(std::string_view name) const;
  // A function several modules of the program define (empty when none).
  const std::string& ambiguous() const { return ambiguous_; }
  // The LLVM function for a .func called from kernel `kernel`, lowered on first use
  // (throws LoweringError naming the function when it cannot be). Functions that reach
  // .shared variables are lowered once per kernel, as the kernel's layout places them.
  llvm::Function* callee(const ptx::Function& f, const runtime::KernelInfo& kernel, size_t kernel_index);
  // Bytes of local memory a thread needs for the calls `f` makes (the deepest chain;
  // kRecursionStack when the chain is recursive or goes through a function pointer).
  size_t call_stack_bytes(llvm::Function* f);
  struct FunctionFacts {
    size_t frame = 0;                      // its own .local frame, 16-byte aligned
    std::vector<llvm::Function*> callees;  // direct calls
    bool indirect = false;                 // calls through a pointer
    bool grid_sync = false;                // reads the grid workspace (%envreg)
    bool cluster = false;                  // uses the block's cluster (shared::cluster, mapa, ...)
    bool named_barriers = false;           // GPU: bar.arrive, or a barrier with a thread count
    llvm::Argument* block = nullptr;       // its BlockState* argument
  };
  // Whether `f` or something it calls has the fact `which`.
  bool reaches(llvm::Function* f, bool FunctionFacts::* which);
  // Whether `f` waits for other threads (a barrier, a warp or matrix operation, an
  // mbarrier wait), itself or in what it calls: such functions are inlined into kernels.
  bool has_split_points(const ptx::Function& f);
  std::map<const ptx::Function*, bool> split_functions_;
  std::map<llvm::Function*, FunctionFacts> facts;
  bool check_memory = false;

private:
  const runtime::Program& program_;
  Target target_ = Target::Cpu;
  std::map<std::string, llvm::GlobalVariable*, std::less<>> gpu_windows_;
  llvm::GlobalVariable* gpu_dynamic_shared_ = nullptr;
  llvm::GlobalVariable* gpu_reduction_word_ = nullptr;
  llvm::GlobalVariable* gpu_reserved_shared_ = nullptr;
  std::unique_ptr<llvm::LLVMContext> context_;
  std::unique_ptr<llvm::Module> module_;
  llvm::Function* sreg_ = nullptr;
  std::map<std::string, llvm::Function*, std::less<>> helpers_;
  std::map<std::string, llvm::GlobalVariable*, std::less<>> globals_;
  std::vector<std::string> global_names_;
  std::map<std::string_view, const ptx::Function*> functions_;
  std::set<std::string_view> shared_names_; // module-level .shared variables
  std::string ambiguous_;
  std::map<std::string, llvm::Function*, std::less<>> callees_;
  std::map<std::string, std::string, std::less<>> failed_callees_;
  std::map<const ptx::Function*, bool> reaches_shared_;
  bool reaches_shared(const ptx::Function& f);
};

constexpr size_t kRecursionStack = 32 * 1024;

// shfl's source lane (mode 0 up, 1 down, 2 bfly, 3 idx) and whether it is in range; the
// CPU and the GPU lowering share it (lower_sync.cpp).
struct ShuffleSource {
  llvm::Value* lane;
  llvm::Value* in_range;
};
ShuffleSource shuffle_source(llvm::IRBuilder<>& b, uint32_t mode, llvm::Value* lane, llvm::Value* bv, llvm::Value* cv);

class FunctionLowering {
public:
  FunctionLowering(ModuleLowering& m, const runtime::KernelInfo& info, size_t index)
      : lowering_(m), info_(info), f_(*info.function), index_(index), b_(m.module()->getContext()) {}
  // A .func reached from kernel `info` (index `index`), into `fn` (declared already).
  FunctionLowering(ModuleLowering& m, const runtime::KernelInfo& info, size_t index, const ptx::Function& f,
                   llvm::Function* fn)
      : lowering_(m), info_(info), f_(f), index_(index), b_(m.module()->getContext()), fn_(fn), is_kernel_(false) {}
  llvm::Function* run();
  void run_function();
  std::vector<SplitKind> splits; // kind of split point k at splits[k - 1]
  unsigned spill_slots = 0;      // registers kept per thread across split points
  bool plain_exit = false;       // LoweredKernel::plain_exit
  bool calls = false;            // LoweredKernel::calls
  size_t local_bytes() const { return local_bytes_; }

private:
  struct Register {
    llvm::AllocaInst* storage = nullptr;
    llvm::Type* type = nullptr;
    ptx::Modifier ptx_type = ptx::Modifier::None;
    unsigned order = 0; // registers in the order they were first used (the map's is the heap's)
  };
  struct Scope {
    std::map<std::string_view, const ptx::VarDecl*> names;
    std::map<std::string_view, const ptx::VarDecl*> ranges;
    std::map<std::string_view, llvm::AllocaInst*> params; // call sequences' .param variables
  };

  llvm::LLVMContext& ctx() { return b_.getContext(); }
  bool gpu() const { return lowering_.gpu(); }
  llvm::Type* type_of(ptx::Modifier t);
  static bool is_signed(ptx::Modifier t);
  static bool is_float(ptx::Modifier t);
  [[noreturn]] void unsupported(const ptx::Instruction& ins, const std::string& what);

  void declare(const ptx::VarDecl& d);
  Register* reg(std::string_view name);
  llvm::Value* convert(llvm::Value* v, llvm::Type* to, bool sign_extend);
  llvm::Value* special_register(const ptx::Operand& op);
  llvm::Value* generic(llvm::Value* p);
  llvm::Value* sreg(int which); // @mimic.sreg, or its GPU form
  // The resumable thread loop (block_state.h).
  llvm::Value* thread_index();
  llvm::Value* block_field(size_t offset, llvm::Type* type);
  llvm::Value* block_field(llvm::IRBuilder<>& b, size_t offset, llvm::Type* type);
  llvm::Value* spill_slot(llvm::IRBuilder<>& b, unsigned slot, llvm::Type* element, llvm::Value* t);
  llvm::Value* shared_base();
  llvm::Value* local_base();
  void stop_thread(uint32_t code);
  unsigned split(SplitKind kind);
  void insert_spills();
  void split_thread_loop(llvm::Value* end);
  // The split point k where every thread of a thread loop stops when it has one stop
  // only, at a split point whose word split_words_ knows (0: none or several): keyed by
  // the loop's exit block, for the chain (chain_in_step).
  std::optional<llvm::SmallVector<unsigned, 2>> stop_codes(const std::vector<llvm::BasicBlock*>& region) const;
  unsigned single_stop(const std::vector<llvm::BasicBlock*>& region) const;
  llvm::DenseMap<llvm::BasicBlock*, unsigned> loop_stops_;
  llvm::SmallPtrSet<llvm::StoreInst*, 16> stop_markers_; // stop_thread's stores of next[t]
  llvm::SmallPtrSet<llvm::StoreInst*, 16> wait_stores_;  // publish_wait's stores of barrier[t]
  // A thread loop with one stop whose stores of it (next[t], and barrier[t] where the stop
  // waits) the chain may leave out: it writes them for the loop's threads only where it
  // goes on in a way that reads them (lazy_stops, chain_in_step). Keyed by the loop's exit.
  struct LazyStop {
    llvm::ConstantInt* word = nullptr; // the stop's barrier word; null for an exit
    std::vector<llvm::StoreInst*> stores;
  };
  llvm::DenseMap<llvm::BasicBlock*, LazyStop> lazy_stops_;
  void collect_lazy_stop(llvm::BasicBlock* exit, unsigned stop, const std::vector<llvm::BasicBlock*>& region,
                         const llvm::ValueToValueMapTy& map, const llvm::SmallPtrSetImpl<llvm::BasicBlock*>& moving);
  void fill_stops(llvm::IRBuilder<>& b, llvm::BasicBlock* at, llvm::Value* stop, llvm::Value* word, llvm::BasicBlock* then);
  void chain_in_step();
  bool drop_exit_markers();
  void release_warps(llvm::IRBuilder<>& b, llvm::Value* lo, llvm::Value* hi);
  // A thread loop whose threads stop at one of two points, each with its word known
  // (split_words_, or an exit), and that holds no loop of its own: it counts the threads
  // that stop at `first` and sums their indices (stop_count_, stop_sum_), from which the
  // chain tells whether the call's threads stopped as two runs, one at each point, without
  // reading next[] and barrier[] (chain_in_step). Keyed by the loop's exit block.
  struct StopPair {
    unsigned first = 0, second = 0;
    llvm::ConstantInt* first_word = nullptr; // null for an exit
    llvm::ConstantInt* second_word = nullptr;
  };
  llvm::DenseMap<llvm::BasicBlock*, StopPair> stop_pairs_;
  llvm::AllocaInst* stop_count_ = nullptr;
  llvm::AllocaInst* stop_sum_ = nullptr;
  std::optional<StopPair> two_stops(const std::vector<llvm::BasicBlock*>& region) const;
  bool count_stops(const StopPair& pair, llvm::BasicBlock* exit, const std::vector<llvm::BasicBlock*>& region,
                   const llvm::ValueToValueMapTy& map, const llvm::SmallPtrSetImpl<llvm::BasicBlock*>& moving);
  // The runs chain_whole_block's scan finds, where the caller knows them already: its
  // entry block, whose φ-nodes the caller gives an incoming value each.
  struct KnownRuns {
    llvm::BasicBlock* entry = nullptr;
    llvm::PHINode* first_point = nullptr;
    llvm::PHINode* first_word = nullptr;
    llvm::PHINode* last_point = nullptr;
    llvm::PHINode* last_word = nullptr;
    llvm::PHINode* first_count = nullptr;
  };
  KnownRuns chain_whole_block(llvm::BasicBlock* general, llvm::BasicBlock* exit, llvm::BasicBlock* header,
                              llvm::PHINode* point);
  // warp_chain.cpp: runs of shuffles evaluated a warp at a time
  void plan_warp_chains(const ptx::Block& body);
  std::optional<int64_t> constant_register(std::string_view name);
  std::optional<int64_t> chain_constant(const ptx::Operand& op);
  bool chain_operand(const ptx::Operand& op);
  std::optional<uint32_t> chain_shuffle(const ptx::Instruction& ins);
  size_t warp_chain_length(const ptx::Block& block, size_t i);
  void lower_warp_chain(const ptx::Block& block, size_t first, size_t count);
  // loop_prefetch.cpp: prefetches of the next trip's loads in loops with barriers
  void plan_loop_prefetches(const ptx::Block& body);
  void prefetch_next_trip(const ptx::Instruction& ins, llvm::Value* address);
  std::map<const ptx::Instruction*, LoopPrefetch::Sum> loop_prefetches_;
  std::map<std::string_view, int64_t> constant_regs_; // registers set once, by mov of a literal
  std::set<std::string_view> tid_x_regs_;              // registers set once, by mov of %tid.x
  // Predicates set once by comparing `%tid.x & 31` or `%tid.x` with 0: true where the
  // predicate holds for every lane but 0 (`setp.ne`), false where it holds for a lane 0
  // alone (`setp.eq`).
  std::map<std::string_view, bool> lane_tests_;
  std::map<std::string_view, unsigned> appearances_;  // how often the kernel names each register
  unsigned chain_slots_ = 0;                          // spill slots the chains use (the first ones)
  llvm::SwitchInst* chain_dispatch_ = nullptr;        // entry: chains to compute before resuming
  llvm::BasicBlock* enter_ = nullptr;                 // entry: on into the thread loop(s)
  llvm::BasicBlock* done_ = nullptr; // a kernel's return after its thread loop(s)
  bool inlined_waiting_call_ = false; // inline_call was used (see split_thread_loop)
  // Warp operations the kernel lowered per thread that publish in `exchange` (vote, match,
  // redux) and in `shfl_exchange` (a shuffle outside a warp chain): what release_warps
  // copies to where they read it.
  bool publishes_exchange_ = false, publishes_shuffle_ = false;
  // What the current PTX basic block has set registers to, for lowerings that gain from
  // knowing it (lower_float's directed-rounding fma in nvcc's expf): an f32 literal
  // (`mov.f32 r, 0f...`) or an f32 in [0, 1] (a result with .sat). Forgotten at labels, at
  // nested blocks and warp chains, and when anything else writes the register.
  struct BlockFact {
    bool unit_interval = false;
    std::optional<float> literal;
  };
  std::map<std::string_view, BlockFact> block_facts_;
  void note_block_facts(const ptx::Instruction& ins);
  llvm::Value* fma_in_unit_binade(const ptx::Instruction& ins, llvm::Value* a, llvm::Value* b, arith::Round mode);
  std::optional<float> f32_literal(const ptx::Operand& op) const;
  bool in_unit_interval(const ptx::Operand& op) const;
  void layout_locals(const ptx::Block& block);
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
  void lower_memory(const ptx::Instruction& ins);
  void lower_atomic(const ptx::Instruction& ins);
  void lower_cvta(const ptx::Instruction& ins);
  void lower_cp_async(const ptx::Instruction& ins);
  // MIMIC_CHECK=memory: the access of `bytes` at `p` is checked before it happens.
  void check_access(const ptx::Instruction& ins, llvm::Value* p, uint64_t bytes, bool is_store,
                    bool shared = false);
  bool checking_memory() const { return lowering_.check_memory; }
  // Memory only the threads of one block reach, which the CPU runs one at a time.
  bool block_private(ptx::Modifier space) const {
    return !gpu() && (space == ptx::Modifier::Shared || space == ptx::Modifier::SharedCta ||
                      space == ptx::Modifier::SharedCluster);
  }
  void lower_matrix(const ptx::Instruction& ins); // lower_matrix.cpp: mma, wmma, ldmatrix
  // lower_call.cpp: calls, the device runtime's functions (printf, assert, malloc)
  void lower_call(const ptx::Instruction& ins);
  bool lower_builtin_call(const ptx::Instruction& ins, std::string_view name, const ptx::Operand* rets,
                          const ptx::Operand* args);
  llvm::Value* param_storage(std::string_view name); // a call sequence's .param variable
  void propagate_stop();                             // after a call whose callee stopped the thread
  void return_from_function();
  void bind_parameters(const ptx::Function& f);
  // A call to a function with split points, lowered in place (the kernel's thread loop can
  // only stop in the kernel itself).
  void inline_call(const ptx::Instruction& ins, const ptx::Function& callee, llvm::Value* argv, llvm::Value* retv);
  struct InlineFrame {
    const ptx::Function* callee;
    llvm::BasicBlock* exit;
  };
  std::vector<InlineFrame> inline_stack_;
  // lower_texture.cpp: tex, tld4, suld, sust, txq, suq on texture and surface objects
  void lower_texture(const ptx::Instruction& ins);
  void lower_surface(const ptx::Instruction& ins);
  void lower_texture_query(const ptx::Instruction& ins);
  llvm::Value* texture_handle(const ptx::Instruction& ins, const ptx::Operand& op);
  // `instruction`: a TextureInstruction (texture_abi.h), for the GPU's trap record.
  void trap_unless_ok(llvm::Value* status, llvm::Value* handle, uint32_t instruction);
  // lower_gpu.cpp: the SIMT form for AMD GPUs (Target::Amdgpu)
  llvm::Function* run_gpu();
  // Instructions whose GPU lowering differs (barriers, warp operations, fences, address
  // spaces); false: the shared lowering applies.
  bool lower_gpu_instruction(const ptx::Instruction& ins);
  [[noreturn]] void gpu_unsupported(const std::string& what);
  llvm::Value* gpu_sreg(SpecialRegister r);
  llvm::Value* gpu_clock(bool wall_clock);
  llvm::Value* gpu_lane();
  llvm::Value* gpu_linear_thread();
  llvm::Value* gpu_implicit_arg(uint64_t offset, llvm::Type* type);
  llvm::Value* gpu_shared_pointer(const runtime::KernelInfo::SharedVar& v); // addrspace(3)
  llvm::Value* gpu_frame();                                                // the thread's .local frame
  llvm::Value* gpu_address(ptx::Modifier space, llvm::Value* address64);   // a state space's pointer
  void gpu_stop(uint32_t code);
  void gpu_yield();
  void gpu_block_barrier();
  void gpu_named_barrier(const ptx::Instruction& ins);
  void gpu_init_named_barriers();
  void gpu_matrix_move(const ptx::Instruction& ins);                // ldmatrix, stmatrix, movmatrix
  void gpu_mma(const ptx::Instruction& ins, const MatrixOp& op); // mma.sync, every shape and type
  std::vector<llvm::Value*> gpu_fragment_words(const ptx::Instruction& ins,
                                               const ptx::Operand& list);
  // wmma in Mimic's fragment layout (matrix_layout.h): lane l holds elements l*E/32 ... of
  // the matrix in row-major order, packed into 32-bit words.
  void gpu_wmma_memory(const ptx::Instruction& ins, const MatrixOp& op, uint32_t matrix, bool column_major,
                       llvm::Value* memory, llvm::Value* stride, bool load, const ptx::Operand& regs);
  void gpu_wmma_mma(const ptx::Instruction& ins, const MatrixOp& op);
  void gpu_barrier(const ptx::Instruction& ins);
  void gpu_warp(const ptx::Instruction& ins);
  void gpu_fence(const ptx::Instruction& ins);
  void gpu_cvta(const ptx::Instruction& ins);
  llvm::SyncScope::ID gpu_scope(const ptx::Instruction& ins);
  // Ordering and scope of atom/red (the CPU: sequentially consistent, system-wide).
  std::pair<llvm::AtomicOrdering, llvm::SyncScope::ID> atomic_semantics(const ptx::Instruction& ins);
  llvm::AllocaInst* frame_ = nullptr;
  std::map<std::string_view, size_t> kernel_param_index_; // GPU: parameter -> kernel argument
  // lower_sync.cpp: barriers and warp operations
  void lower_barrier(const ptx::Instruction& ins);
  void lower_warp(const ptx::Instruction& ins);
  void lower_mbarrier(const ptx::Instruction& ins);
  // ---- arithmetic families (lower_int.cpp, lower_float.cpp, lower_half.cpp,
  // lower_cvt.cpp; shared sequences in lower_arith.h)
  bool lower_arithmetic(const ptx::Instruction& ins); // false: not an arithmetic instruction
  void lower_int(const ptx::Instruction& ins);
  void lower_int_bits(const ptx::Instruction& ins);
  llvm::Value* video_part(const ptx::Instruction& ins, const ptx::Operand& op, bool is_signed);
  void lower_vmad(const ptx::Instruction& ins);
  void lower_cp_async_bulk(const ptx::Instruction& ins);
  void lower_prefetch(const ptx::Instruction& ins);
  void lower_float(const ptx::Instruction& ins);
  void lower_half(const ptx::Instruction& ins);
  void lower_compare(const ptx::Instruction& ins);
  void lower_select(const ptx::Instruction& ins);
  void lower_cvt(const ptx::Instruction& ins);
  void lower_mov_vector(const ptx::Instruction& ins);
  llvm::Value* carry_flag(); // CC.CF of the carry chains, an i1 slot of the function
  llvm::AllocaInst* carry_ = nullptr;
  // ---- end of arithmetic families

  ModuleLowering& lowering_;
  const runtime::KernelInfo& info_;
  const ptx::Function& f_;
  size_t index_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  bool is_kernel_ = true;
  llvm::Value* local_sp_ = nullptr;  // offset of this function's frame in the thread's local window
  llvm::Value* argv_ = nullptr;      // .func: pointers to each parameter's storage
  llvm::Value* retv_ = nullptr;      // .func: pointers to each return value's storage
  std::map<std::string_view, size_t> func_params_, func_returns_;
  llvm::Value* params_ = nullptr;
  llvm::Value* block_ = nullptr;    // BlockState*
  llvm::AllocaInst* thread_ = nullptr; // the linear thread index the loop is at
  // The row the loop is in (kernels): its end, first linear index, %tid.y and %tid.z.
  llvm::AllocaInst* row_end_ = nullptr;
  llvm::AllocaInst* row_base_ = nullptr;
  llvm::AllocaInst* tid_y_ = nullptr;
  llvm::AllocaInst* tid_z_ = nullptr;
  // rows: the row setup of the thread at `thread_`; goes on to `head`.
  void emit_row_setup(llvm::IRBuilder<>& b, llvm::BasicBlock* head, bool whole_rows = false);
  bool reads_rows_ = false; // the kernel reads %tid.y or %tid.z
  bool gets_full_rows() const;
  llvm::BasicBlock* one_head_ = nullptr;     // the one thread loop's header and row exit,
  llvm::BasicBlock* one_next_row_ = nullptr; // before split_thread_loop
  void copy_full_rows(const std::string& tag, llvm::BasicBlock* pick, llvm::BasicBlock* rows, llvm::BasicBlock* head,
                      llvm::BasicBlock* latch, const std::vector<llvm::BasicBlock*>& blocks, llvm::BasicBlock* exit,
                      llvm::BasicBlock* done);
  // The kernel computes warps and lanes from %tid.x: its thread loops go warp by warp
  // (codegen/warp_indices.h).
  bool warp_chunks_ = false;
  llvm::BasicBlock* latch_ = nullptr;
  llvm::BasicBlock* body_ = nullptr;
  llvm::SwitchInst* dispatch_ = nullptr;
  struct SplitSite {
    llvm::StoreInst* marker; // the store of the split number into next[t]
    llvm::BasicBlock* resume;
  };
  std::vector<SplitSite> split_sites_;
  // barrier[t] = word: what the thread waits for at the split point that follows (a
  // barrier's id and count, a warp operation's member mask). Kept for the split point.
  void publish_wait(llvm::Value* word);
  llvm::Value* published_wait_ = nullptr;
  // Per split point (index k - 1): the word its thread publishes where it is a constant
  // the chain can go on from without reading the threads' words (a full barrier, a full
  // member mask); nullptr otherwise.
  std::vector<llvm::ConstantInt*> split_words_;
  std::map<std::string_view, size_t> locals_; // .local variable -> offset in the thread's frame
  size_t local_bytes_ = 0;
  std::vector<Scope> scopes_;
  std::unordered_map<std::string, Register> registers_;
  std::map<std::string_view, llvm::BasicBlock*> labels_;
  std::map<std::string_view, std::span<const ptx::Name>> branch_tables_; // .branchtargets
  std::map<std::string_view, size_t> kernel_params_;
};

} // namespace mimic::codegen
