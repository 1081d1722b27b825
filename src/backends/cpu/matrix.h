// Warp-wide matrix operations of the CPU executor (codegen/matrix_layout.h).
#pragma once

#include "codegen/block_state.h"

namespace mimic::cpu {

// Computes the result of the WarpMatrix operation the lanes `group` of the warp starting at
// linear thread `warp_base` published, into each lane's fragments.
void run_matrix_op(codegen::BlockState& block, uint32_t warp_base, uint32_t group);

} // namespace mimic::cpu
