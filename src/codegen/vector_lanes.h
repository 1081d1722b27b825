// How the lanes of a vector the loop vectoriser made relate to each other, for the passes
// that run after it (interleaved_scatter.cpp, prefetch_calls.cpp).
#pragma once

#include <cstdint>
#include <optional>

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Value.h>

namespace mimic::codegen {

// How the lanes of an integer vector differ: lane l is lane 0 + l * stride. `may_wrap`: the
// vector went through an extension, before which the steps may have wrapped.
struct Lanes {
  int64_t stride = 0;
  bool may_wrap = false;
};

// The spacing of `v`'s lanes, proved from splats, constant vectors, the vector induction
// and constant multiples, sums and shifts; nullopt when it is not evenly spaced or not known.
std::optional<Lanes> lanes_of(llvm::Value* v);

// A vector of pointers as base + index * scale + offset (bytes), the index a vector.
struct Address {
  llvm::Value* base = nullptr;
  llvm::Value* index = nullptr;
  int64_t scale = 0;
  int64_t offset = 0;
  bool widened = false; // the index is narrower than a pointer: GEP sign-extends it
};

std::optional<Address> decompose(llvm::Value* p, const llvm::DataLayout& dl);

} // namespace mimic::codegen
