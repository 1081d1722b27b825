// A pass for the optimiser, after the loop vectoriser: a vector whose lane k is one scalar
// plus a constant, put together lane by lane, becomes one add of the scalar's splat and
// the constants.
//
// Where the vectoriser stores some lanes one by one, it computes the thread index of
// those lanes as scalars (`t + 5`, `t + 6`, `t + 7`); once UniformScatters has made such
// stores one, the scalars are left only to build the lane-index vector again, and LLVM's
// combines keep that build: on AVX2 some 14 instructions (broadcasts and vpblendd) a vector
// iteration in stencil's tile loop where `vpaddd` of a constant does. Runs after
// UniformScatters.
//   MIMIC_LANE_STEPS=0 turns it off (the JIT cache keys on it).
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

bool lane_steps_enabled();

struct SplatLaneSteps : llvm::PassInfoMixin<SplatLaneSteps> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
