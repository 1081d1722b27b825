// A pass for the optimiser: warp-per-row addressing made affine in the thread index.
//
// In a kernel that computes warps and lanes from %tid.x (FunctionLowering sets
// warp_chunks_ from the PTX: `shr r, t, 5`, `and r, t, 31` ... of a register moved from
// %tid.x), each thread loop's row setup also computes what it takes to go through the row
// in pieces of 32 %tid.x values: the piece's warp (!mimic.warp kPieceWarp), the piece's end
// (kPieceEnd) beside the row's (kRowEnd). Where `%tid.x >> 5` or `%tid.x & 31` feeds a loop
// inside the thread loop (an address such as `x + row(%tid.x / 32) * cols + %tid.x % 32 +
// 32k`), that thread loop goes piece by piece, `%tid.x >> 5` becomes the piece's warp, the
// same in all its threads, and `%tid.x & 31` the thread index less the piece's first: the
// thread loop (or the interchange of its inner loop) reads consecutive elements where it
// gathered. Elsewhere the pieces would only shorten the thread loops, so they stay rows.
//
// %tid.x is `sub t, base` with `base` the row's first index (!mimic.row kind 0). Runs after
// RematerialiseSpills, which recomputes %tid.x from the thread index where a thread resumes.
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

inline constexpr const char* kWarpMetadata = "mimic.warp";
enum : unsigned { kPieceWarp = 0, kPieceEnd = 1, kRowEnd = 2 };

struct WarpIndices : llvm::PassInfoMixin<WarpIndices> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
