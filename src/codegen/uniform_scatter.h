// A pass for the optimiser: a scatter whose lanes all store to one address becomes one
// store of its last active lane.
//
// A store to an address the same in every thread of a thread loop, made by some threads
// only (`if (threadIdx.x == 0) tile[ty][0] = ...`, `if (lane == 0) warp_sums[warp] = v`
// where the loop goes a warp at a time), is vectorised as a masked scatter to a splat of
// the address: 16 element stores whatever the mask. A scatter stores its lanes in order
// (LangRef: overlapping addresses from the least to the most significant lane), so the
// address ends up with the highest active lane's value: where any lane is active, that
// lane's element is stored, by one scalar store. Where the stored vector is a gather from
// one address under the same mask (`warp_sums[warp] = v`, v the warp's reduced value that
// every lane reads from one slot), that address is loaded once instead. Where the target
// has no scatter (AVX2), the vectoriser stores the lanes one by one instead, a chain of
// blocks each testing one mask bit; a chain whose stores all go to one pointer becomes the
// same one store of the highest set lane (stencil's halo cells: stencil at 4x the LLC on a
// Zen 3 362 -> 317 ms, layernorm 318 -> 169). A chain whose lanes all store one value (one
// from outside the chain, or a load of one address that the chain's stores cannot change:
// `if (lane == 0) warp_sums[warp] = v` a warp at a time, v in lane 0's slot) stores that
// value once (layernorm at 1 MiB on one worker 385-394 -> 358-385 us). Runs after the loop
// vectoriser.
//   MIMIC_UNIFORM_SCATTER=0 turns it off (the JIT cache keys on it).
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

bool uniform_scatter_enabled();

struct UniformScatters : llvm::PassInfoMixin<UniformScatters> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
