// A pass for the optimiser, before the vectorisers: PTX computes addresses as 64-bit
// integers, so every access is `inttoptr (add base, offset)`, which scalar evolution cannot
// see through: a thread loop's accesses then look unrelated and the loop is not
// vectorised ("cannot identify array bounds"). Where the sum has loop-invariant terms (the
// base) and varying ones (the offset), the address becomes `getelementptr i8, (inttoptr
// base), offset`, with the base converted outside the loop, once per base: accesses
// through the same base (a kernel parameter) then have one pointer for scalar evolution,
// which the vectoriser needs to see a thread's stores to out[4 * i + k] as one group.
#pragma once

#include <llvm/IR/PassManager.h>

namespace mimic::codegen {

struct AddressesToGep : llvm::PassInfoMixin<AddressesToGep> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

} // namespace mimic::codegen
