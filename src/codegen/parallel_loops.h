// A pass for the optimiser, at the start of the vectorisers (after InterchangeThreadLoops):
// thread loops whose iterations CUDA lets run in any order are told so to the vectoriser.
//
// Between two split points the threads of a block may run in any interleaving. A program
// in which one thread reads or writes what another one writes in the same interval,
// without an atomic, a volatile or ordered access or a fence, races: CUDA gives it no
// result to rely on. So the iterations of a thread loop have no dependences through the
// program's own plain loads and stores, and the executor's per-thread arrays (spill
// slots, next[t], the interchange's arrays) hold one element per thread. LLVM cannot see
// either: where a block's threads store into a shared tile at addresses it cannot order
// (tile[ty][tx] and the halo tile[ty][0] under a condition), it checks at run time that
// the ranges do not overlap (stencil: 160 instructions before a row of 32 threads, and a
// row had to be 80 threads long for the check to pay, so rows of 32 ran the scalar loop).
//
// The pass puts the innermost thread loops' memory accesses in an access group and marks
// the loop `llvm.loop.parallel_accesses`, which the vectoriser takes as "no loop-carried
// dependences through memory" and needs no such checks for. A loop qualifies when each of
// its memory accesses is
//   - a plain load or store of the program (the lowering tags them `!mimic.plain`: not
//     volatile, not .relaxed/.acquire/.release, not an atomic, a store not to .param);
//   - a load marked invariant (kernel parameters, the block state's fields), or a load of
//     one of the block state's fields past the special registers (kernel code never
//     stores to them; the optimiser may have merged the load and dropped the mark);
//   - a load or store of the executor's whose address steps by at least its size from
//     thread to thread (a per-thread element), and no other such access in the loop is a
//     constant distance from a store of them (thread t writing a[t] and reading a[t+1]);
//   - a load of shared memory that lost its tag: through a select of a spill slot and a
//     shared address (SimplifyCFG merged a restore and a load), or of the shared address
//     alone (row_unswitch.h then picked that arm for the whole loop); the plain loads of
//     .shared atomics are untagged too, but their untagged stores keep the loop out;
//   - a lifetime marker.
// Anything else (an atomic, including the plain read-modify-writes that stand for atomics
// on .shared memory; a fence; a call; a volatile access; a shuffle's read of another
// lane's value) leaves the loop as it was: LLVM's own dependence analysis decides.
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class MDNode;
class Module;
} // namespace llvm

namespace mimic::codegen {

// On the program's plain loads and stores (lower_memory).
inline constexpr const char* kPlainAccessMetadata = "mimic.plain";
// They are also in one access group of their module: where LLVM merges two accesses (a
// store sunk from the two sides of a branch), it drops the tag but keeps the group when
// both were in it. ParallelThreadLoops takes either.
llvm::MDNode* plain_access_group(llvm::Module& m);

// MIMIC_PARALLEL_LOOPS=0 turns the pass off (for comparisons); the JIT cache keys on it.
// =explain prints each innermost thread loop and what keeps it from being parallel.
bool parallel_loops_enabled();
bool parallel_loops_explain();

struct ParallelThreadLoops : llvm::PassInfoMixin<ParallelThreadLoops> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
