// A pass for the optimiser: scatters that together cover a contiguous run of memory become
// one masked store of the run.
//
// A thread that writes F consecutive items (`out[base + threadIdx.x * 4 + k]`, k < 4, each
// under its own bound check `base + k < n`) is vectorised by LLVM as F scatters of 16 lanes
// each: an interleaved group needs its F stores under one condition. Lane l of scatter k
// writes byte B + l * S + k * E (E the element's size), so when S = F * E the scatters cover
// F * 16 consecutive elements: one masked store of <F*16 x T> whose data and mask interleave
// the scatters' (for scan's tiles, 8 scatters of 8 elements -> 4 masked stores and shuffles).
// The lanes' addresses are proved evenly spaced from how they are computed (the vector
// induction, adds of splats, multiplications and shifts by constants); where an extension
// may have hidden a wrap in the narrower type, the joined store runs only when the last
// lane's address is (lanes - 1) * S past the first, and the scatters as before otherwise.
// The scatters must be in one basic block with nothing between them that reads or writes
// memory. Gathers are left alone: joined the same way, scan at four times the LLC went
// 270 -> 304 ms. Runs after the loop vectoriser.
//   MIMIC_INTERLEAVED_SCATTER=0 turns it off (the JIT cache keys on it).
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

bool interleaved_scatter_enabled();

struct JoinInterleavedScatters : llvm::PassInfoMixin<JoinInterleavedScatters> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
