// A pass for the optimiser: registers live across a split point are saved per thread where
// the thread stops and restored where it resumes (FunctionLowering::insert_spills). Many
// of them hold the same value in every thread of the block (a parameter, %ctaid * %ntid)
// or one computed from that and the thread's index (%tid.x, an address in shared memory
// such as &tile[ty][tx]). Such a value is computed again where the thread resumes instead
// of going through memory: that spares a store and a load per thread, and the thread loop
// after the split point sees the value as invariant or affine, which it needs to be
// vectorised. A save whose restores are all gone (computed
// again, or found dead) is removed: slot by slot, once nothing restores the slot.
//
// Saves and restores carry `!mimic.spill !{i32 split, i32 slot}`; the restore of a slot
// at split point k reads what the same thread saved at k. A value is computed again when
// it depends only on the thread index its save addresses the slot with (the restore's
// stands for it), constants, and the parameter buffer and the block state (the kernel's
// first two arguments) through loads the lowering marked invariant, which hold the same
// values in every call for the same thread (the executor sets a row's %tid.y and %tid.z
// the same way each time), or through @mimic.sreg.
//
// It must run before anything else but SROA: the optimiser removes a save that stores
// back what was restored unchanged, and where it has duplicated a split point's block
// first (jump threading), the saves left no longer tell what the slot holds.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include <llvm/IR/Instruction.h>
#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

inline constexpr const char* kSpillMetadata = "mimic.spill";
// `!mimic.slot !{i32 slot}`: a warp chain's thread reading or writing its own element of a
// spill slot (codegen/warp_chain.cpp); not a save or restore, but a slot all the same for
// alias analysis.
inline constexpr const char* kSlotMetadata = "mimic.slot";
// On the row values a thread loop computes before its threads (row base 0, %tid.y 1,
// %tid.z 2): the same for a thread in every call.
inline constexpr const char* kRowMetadata = "mimic.row";
// On the branch from a thread loop's latch back to its head.
inline constexpr const char* kThreadLatchMetadata = "mimic.thread.latch";

// A save's or restore's `!mimic.spill` operands: (split point, slot).
using SpillKey = std::pair<uint32_t, uint32_t>;
std::optional<SpillKey> spill_key(const llvm::Instruction& i);

struct RematerialiseSpills : llvm::PassInfoMixin<RematerialiseSpills> {
  // Restores of registers the same in every thread of a row (not computed again) are
  // loaded once per row, before the thread loop, so that the loop sees them as invariant
  // (for the vectoriser). The CPU JIT's quick tier, which does not vectorise, leaves them
  // per thread: the divergence analysis this needs was 10 ms of bitonic's first launch.
  bool hoist_row_uniform = true;
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
