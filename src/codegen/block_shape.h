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
// The row set-up's reads change at once; %ntid and the thread count become constants only
// after the thread-loop passes (FoldBlockShape). Before them, a constant thread count made
// the spill slots of two registers (`spill[s * nthreads + t]`) a constant distance apart,
// and ParallelThreadLoops no longer proved the thread loops free of dependences (scan's
// loops lost their vectorisation: 2.3 -> 3.2 ms); a constant `blockDim.x` made LLVM unroll
// a loop such as `for (k = tid; k < 1024; k += blockDim.x)` fully, before the interchange
// could run its threads side by side (3x slower). Folded late, they help the vectoriser
// and what follows (layernorm in cache 1.95 -> 1.74-1.88 ms, reduce 1.08 -> 0.96-1.01).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <llvm/ADT/StringRef.h>
#include <llvm/IR/PassManager.h>

namespace llvm {
class Module;
}

namespace mimic::codegen {

using BlockShape = std::array<uint32_t, 3>;

// Kernel `kernel` of `m` (arguments as the CPU lowering makes them: the block state is
// the second) reads `shape`'s dimensions as constants where it reads the block state's
// block_dim, and is marked for FoldBlockShape. Its code is then right for blocks of that
// shape only.
void specialise_block_shape(llvm::Module& m, llvm::StringRef kernel, const BlockShape& shape);

// A pass for the optimiser, after the thread-loop passes (InterchangeThreadLoops,
// ParallelThreadLoops): a kernel specialised by specialise_block_shape reads %ntid and the
// thread count as constants from here on.
struct FoldBlockShape : llvm::PassInfoMixin<FoldBlockShape> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

// The name of `symbol`'s code for blocks of `shape` ("SYMBOL.block.32x8x1").
std::string shaped_symbol(llvm::StringRef symbol, const BlockShape& shape);

// MIMIC_BLOCK_SHAPE=0 turns the specialisation off (for comparisons).
bool block_shape_enabled();

} // namespace mimic::codegen
