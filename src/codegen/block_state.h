// The contract between generated kernels and the CPU backend's executor: a kernel in its
// "resumable thread loop" form (docs/codegen-plan.md, layer 2).
//
//   void kernel(const void* params, BlockState* block, uint32_t begin, uint32_t end, uint32_t resume)
//
// runs the threads [begin, end) of one block (linear thread indices, x fastest), each from
// resume point `resume` (kResumeStart for the kernel's entry) until it reaches its next
// split point, and writes that point's number to block->next[t]. Split points are where a
// thread must wait for others: block barriers and warp-synchronous operations. The
// executor decides when a thread may go on (all threads of the block at the barrier, all
// lanes of the warp at the shuffle) and calls the kernel again from there. Registers that
// are live across a split point are kept in block->spill, everything else stays in
// machine registers inside the loop.
//
// Field offsets are read by generated code through offsetof, so this is the only
// definition of the layout.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mimic::codegen {

// Special registers, as @mimic.sreg's `which` and BlockState::sreg's index.
enum class SpecialRegister : int {
  TidX, TidY, TidZ, NtidX, NtidY, NtidZ, CtaidX, CtaidY, CtaidZ, NctaidX, NctaidY, NctaidZ,
  LaneId, WarpId, NWarpId, SmId, NSmId, GridIdLo, LanemaskEq, LanemaskLe, LanemaskLt, LanemaskGe,
  LanemaskGt, DynamicSmemSize, TotalSmemSize,
  // %envreg0..3: %envreg1:%envreg2 is the address of the grid's workspace, where
  // cooperative groups' grid.sync() counts arrivals (zeroed for each launch).
  EnvReg0, EnvReg1, EnvReg2, EnvReg3,
  // %reserved_smem_offset_begin/_end/_cap/_0/_1: the block's reserved shared memory
  // (kReservedSharedBytes after the user's static and dynamic shared memory); cooperative
  // groups keeps its scratch at _1.
  ReservedSmemBegin, ReservedSmemEnd, ReservedSmemCap, ReservedSmem0, ReservedSmem1,
  // A kernel's thread loop goes row by row (same %tid.y and %tid.z) and publishes the row
  // it is in here: sreg[TidY], sreg[TidZ], and sreg[RowBase], so that a function that is
  // not inlined computes %tid.x as t - sreg[RowBase]. Kernels use the row's values directly.
  RowBase, Count_
};

constexpr uint32_t kResumeStart = 0;
constexpr uint32_t kThreadExited = 0xffffffffu;
constexpr uint32_t kThreadTrapped = 0xfffffffeu;  // `trap`, a stack overflow
constexpr uint32_t kThreadAsserted = 0xfffffffdu; // a failed device-side assert
constexpr uint32_t kThreadFaulted = 0xfffffffcu;  // MIMIC_CHECK=memory found a bad access
constexpr uint32_t kThreadMisaligned = 0xfffffffbu; // MIMIC_CHECK=memory: a misaligned access
// next[t] values from kThreadMisaligned up end the thread; below are split points.
constexpr uint32_t kThreadStopped = kThreadMisaligned;

// What a split point waits for.
enum class SplitKind : uint8_t {
  Barrier,       // bar.sync / barrier.sync: block->barrier[t] = id | count << 8 (count 0 = all)
  BarrierReduce, // bar.red: as Barrier; block->exchange[t] holds the predicate, and the result on resume
  Arrive,        // bar.arrive: counts towards the barrier, does not wait
  Warp,          // shfl / vote / match / redux / activemask / elect / bar.warp.sync
  Yield,         // mbarrier waits that found their phase incomplete: go on after the others ran
  WarpMatrix,    // mma / wmma.mma / ldmatrix: the executor computes every lane's result
                 // (run_matrix_op) from the lanes' published `fragments` and the op word
                 // in `exchange`, then the lanes read theirs from `fragments`
};

// Per-thread words of BlockState::fragments.
constexpr uint32_t kFragmentWords = 48;

// Element types of matrix operations.
enum class MatrixType : uint8_t { None, F16, BF16, TF32, F32, F64, S8, U8, S32, S4, U4 };
constexpr unsigned matrix_type_bits(MatrixType t) {
  switch (t) {
  case MatrixType::F16:
  case MatrixType::BF16:
    return 16;
  case MatrixType::TF32:
  case MatrixType::F32:
  case MatrixType::S32:
    return 32;
  case MatrixType::F64:
    return 64;
  case MatrixType::S8:
  case MatrixType::U8:
    return 8;
  case MatrixType::S4:
  case MatrixType::U4:
    return 4;
  default:
    return 0;
  }
}

// The op word a lane publishes in `exchange` at a WarpMatrix split point.
struct MatrixOp {
  // Ldmatrix/Stmatrix: lane words 0-1 hold its row address, Stmatrix's registers follow in
  // words 2-5; Movmatrix: word 0 holds the lane's register.
  enum Kind : uint8_t { Mma = 1, Wmma = 2, Ldmatrix = 3, Stmatrix = 4, Movmatrix = 5 };
  Kind kind = Mma;
  uint8_t m = 0, n = 0, k = 0;                     // shape; ldmatrix: m = matrices (1, 2, 4)
  MatrixType a = {}, b = {}, c = {}, d = {};
  uint8_t a_words = 0, b_words = 0, c_words = 0;   // where B and C start in `fragments`
  bool satfinite = false, transpose = false;        // transpose: ldmatrix .trans

  uint64_t encode() const {
    return uint64_t(kind) | uint64_t(m) << 8 | uint64_t(n) << 16 | uint64_t(k) << 24 | uint64_t(a) << 32 |
           uint64_t(b) << 36 | uint64_t(c) << 40 | uint64_t(d) << 44 | uint64_t(a_words) << 48 |
           uint64_t(b_words) << 53 | uint64_t(c_words & 31) << 58 | uint64_t(satfinite) << 63 |
           uint64_t(transpose) << 7;
  }
  static MatrixOp decode(uint64_t w) {
    MatrixOp op;
    op.kind = Kind(w & 0x7f);
    op.transpose = (w >> 7) & 1;
    op.m = uint8_t(w >> 8);
    op.n = uint8_t(w >> 16);
    op.k = uint8_t(w >> 24);
    op.a = MatrixType((w >> 32) & 15);
    op.b = MatrixType((w >> 36) & 15);
    op.c = MatrixType((w >> 40) & 15);
    op.d = MatrixType((w >> 44) & 15);
    op.a_words = uint8_t((w >> 48) & 31);
    op.b_words = uint8_t((w >> 53) & 31);
    op.c_words = uint8_t((w >> 58) & 31);
    op.satfinite = (w >> 63) & 1;
    return op;
  }
};
// For BarrierReduce: which reduction, in block->barrier[t] bits 24..25.
enum class BarrierReduction : uint32_t { Popc = 0, And = 1, Or = 2 };

static_assert(int(SpecialRegister::Count_) <= 48, "BlockState::sreg holds them");
constexpr uint32_t kReservedSharedBytes = 1024; // as CUDA reserves per block on sm_80+
constexpr uint32_t kMaxBlockThreads = 1024;     // CUDA's limit, which launches check

struct BlockState {
  uint32_t sreg[48];        // block-wide special registers, indexed by codegen::SpecialRegister
  uint32_t block_dim[3];    // ntid
  uint32_t nthreads;        // ntid.x * ntid.y * ntid.z
  uint8_t* shared;          // the block's shared window (static, then dynamic)
  uint8_t* local;           // thread t's local frame is local + t * local_stride
  uint64_t local_stride;
  uint64_t* spill;          // register slot s of thread t: spill[s * nthreads + t]
  uint32_t* next;           // [t]: where thread t stopped
  uint64_t* exchange;       // [t]: the operand a thread publishes at a warp operation or bar.red
  uint64_t* released;       // [t]: exchange[t] as it was when t's warp operation was released;
                            // the helpers read this, as lanes that resumed earlier may have
                            // published their next operand in exchange already
  uint32_t* warp_mask;      // [t]: the lanes of t's warp that reached the same warp operation
  uint32_t* fragments;      // [t * kFragmentWords]: matrix operands in, results out
  uint64_t shared_bytes;    // size of the shared window
  void* check;              // MIMIC_CHECK=memory: the executor's launch record (opaque)
  uint32_t* barrier;        // [t]: barrier id and count at a Barrier/Arrive split point;
                            // at a Warp one, the lanes the operation waits for (membermask)
  // shfl's operands, 32 bits each (so that a thread loop of shuffles is vectorised as wide
  // as the program's own 32-bit values): shfl_exchange[t] is what t publishes,
  // shfl_released[t] what it was at the release, as `exchange`/`released`. shfl_released
  // is readable from [-32, nthreads + 32): a lane reads its source lane's slot at a
  // constant distance unconditionally and keeps its own value where the source is out of
  // range, so that the reads are consecutive.
  uint32_t* shfl_exchange;
  uint32_t* shfl_released;
  // Written by a kernel that has split points as it returns: 1 when every thread of the
  // call has exited (the last thread loop that ran has no stop but a normal end), 0 when
  // the executor must read next[] (codegen chain_in_step).
  uint32_t ended;
};
constexpr uint32_t kShuffleSlack = 32; // slots before and after shfl_released's threads

// Warp operations, evaluated when a thread resumes after its warp's lanes have all published
// their operand (read from `released`; implemented by the CPU backend; `t` is the linear thread).
extern "C" {
// The device runtime's functions that PTX calls as .extern .func (vprintf, __assertfail,
// malloc, free).
int32_t mimic_vprintf(const char* format, const void* args);
void mimic_assert_fail(const BlockState* block, uint32_t t, const char* message, const char* file, uint32_t line,
                       const char* function);
void* mimic_device_malloc(uint64_t bytes);
// mbarrier objects (8 bytes in shared or global memory; Mimic's layout: pending arrivals,
// expected arrivals, pending transaction bytes, phase). arrive returns the state token
// (the phase the arrival belongs to); tx adds `delta` to the pending transaction bytes
// (expect_tx +, complete_tx -); phase is the current phase's parity.
void mimic_mbarrier_init(void* bar, uint32_t count);
// %clock64 (the time-stamp counter) and %globaltimer (nanoseconds of the wall clock).
uint64_t mimic_clock64();
uint64_t mimic_globaltimer();
uint64_t mimic_mbarrier_arrive(void* bar, uint32_t count, uint32_t drop);
void mimic_mbarrier_tx(void* bar, int32_t delta);
uint32_t mimic_mbarrier_phase(const void* bar);
// MIMIC_CHECK=memory: 0 when [p, p + bytes) may be accessed by thread t, 1 when it is
// outside memory the thread may touch, 2 when it is not aligned to its size (reporting the
// first bad access of the launch). flags: 1 a store, 2 .shared.
uint32_t mimic_check_access(const BlockState* block, uint32_t t, const void* p, uint64_t bytes, uint32_t line,
                            uint32_t flags);
void mimic_device_free(void* pointer);

// (shfl.sync is computed in line: codegen/lower_sync.cpp.)
// vote: mode 0 all, 1 any, 2 uni, 3 ballot.
uint32_t mimic_warp_vote(const BlockState* block, uint32_t t, uint32_t mode, uint32_t mask);
// match.sync: mode 0 any, 1 all; `wide` compares 64-bit values. Bit 32 of the result is
// match.all's predicate.
uint64_t mimic_warp_match(const BlockState* block, uint32_t t, uint32_t mode, uint32_t wide, uint32_t mask);
// redux.sync: op 0 add, 1 min, 2 max, 3 and, 4 or, 5 xor; `is_signed` for min/max. Op 6 min.f32,
// 7 max.f32, where `is_signed` carries the flags: 1 .abs, 2 .NaN.
uint32_t mimic_warp_redux(const BlockState* block, uint32_t t, uint32_t op, uint32_t is_signed, uint32_t mask);
// wmma.load / wmma.store of one lane's fragment (Mimic's own layout: lane l holds the
// logical elements l*E/32 ... (l+1)*E/32 - 1 of the matrix in row-major order, packed
// into 32-bit words; E = rows * cols). `matrix` 0 = a (m x k), 1 = b (k x n), 2 = c/d
// (m x n); `column_major` is the layout in memory; `stride` is in elements.
void mimic_wmma_load(uint32_t* words, const void* memory, uint32_t lane, uint64_t op, uint32_t matrix,
                     uint32_t column_major, uint32_t stride);
void mimic_wmma_store(void* memory, const uint32_t* words, uint32_t lane, uint64_t op, uint32_t matrix,
                      uint32_t column_major, uint32_t stride);
}

} // namespace mimic::codegen
