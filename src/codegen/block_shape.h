// Per-block-shape specialisation of a lowered kernel for the CPU backend.
//
// A lowered kernel's thread loops go row by row, and each row's set-up divides the thread
// index by the block's ntid.x, read from the block state at run time (emit_row_setup).
// Where a launch's block shape is known, the kernel's optimised code can have the
// dimensions as constants there: a row of a 32x8 block is 32 threads, so the division and
// the row's bounds fold and the vectoriser's checks of the row get simpler (in cache:
// stencil about 8% faster, histogram 5%, layernorm 3%). The JIT compiles such code for the
// shape of a kernel's first launch, beside code for any shape (backends/cpu/jit.cpp).
//
// Only the row set-up's reads change. The thread count stays a run-time value: with it a
// constant, the spill slots of different registers (`spill[s * nthreads + t]`) are a
// constant distance apart and ParallelThreadLoops no longer proves the thread loops free
// of dependences (scan's loops lost their vectorisation: 2.3 -> 3.2 ms). %ntid stays one
// too: a constant `blockDim.x` makes LLVM unroll a loop such as `for (k = tid; k < 1024;
// k += blockDim.x)` fully, before the interchange could run its threads side by side.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <llvm/ADT/StringRef.h>

namespace llvm {
class Module;
}

namespace mimic::codegen {

using BlockShape = std::array<uint32_t, 3>;

// Kernel `kernel` of `m` (arguments as the CPU lowering makes them: the block state is
// the second) reads `shape`'s dimensions as constants where it reads the block state's
// block_dim. Its code is then right for blocks of that shape only.
void specialise_block_shape(llvm::Module& m, llvm::StringRef kernel, const BlockShape& shape);

// The name of `symbol`'s code for blocks of `shape` ("SYMBOL.block.32x8x1").
std::string shaped_symbol(llvm::StringRef symbol, const BlockShape& shape);

// MIMIC_BLOCK_SHAPE=0 turns the specialisation off (for comparisons).
bool block_shape_enabled();

} // namespace mimic::codegen
