// Which of the block's special registers a value of a kernel in its thread-loop form reads
// (block_state.h: `%block`, the kernel's second argument, holds them in BlockState::sreg),
// for the passes that reason about positions (row_guards.cpp, block_prefetch.cpp), and
// whether an address is in the block's shared memory (parallel_loops.cpp,
// shared_store_select.cpp).
#pragma once

#include <optional>

#include "codegen/block_state.h"

namespace llvm {
class Value;
} // namespace llvm

namespace mimic::codegen {

// The register `v` loads, when it is a 32-bit load of block->sreg[r] in the function
// `v` belongs to; nullopt otherwise.
std::optional<SpecialRegister> block_register_read(const llvm::Value* v);

// Whether `ptr` points into the block's shared window: GEPs on a load of
// BlockState::shared from the function's block state.
bool in_shared_window(const llvm::Value* ptr);

} // namespace mimic::codegen
