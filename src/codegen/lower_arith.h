// Helpers shared by the arithmetic families (lower_int.cpp, lower_float.cpp,
// lower_half.cpp, lower_cvt.cpp): IR sequences that do not need a FunctionLowering.
//
// Exact rounding. PTX's directed rounding modes (.rz .rm .rp) and every rounding into a
// narrow format (f16, bf16, tf32, fp8) go through one routine: the exact result is given
// as an f64 value `s` plus a residual `err` whose sign says on which side of `s` the exact
// value lies (the residual comes from an error-free transformation: TwoSum, an fma, or is
// zero when `s` is exact); round_to_format then rounds s+err to the target format with
// integer operations. f64 results in a directed mode are the round-to-nearest result moved
// by one ulp when the residual says so (adjust_directed).
#pragma once

#include <cstdint>

#include <llvm/IR/IRBuilder.h>

#include "ptx/ast.h"

namespace mimic::codegen::arith {

enum class Round { Nearest, NearestAway, Zero, Down, Up };

// The rounding a float instruction asks for (.rn .rna .rz .rm .rp and the integer forms
// .rni .rzi .rmi .rpi), or `otherwise` when it names none.
Round rounding_of(const ptx::Instruction& ins, Round otherwise);
bool names_rounding(const ptx::Instruction& ins);

// A binary floating-point format narrower than f64.
struct Format {
  unsigned bits;      // total width
  unsigned exp_bits;  // exponent field
  unsigned mant_bits; // stored fraction bits
  bool has_inf;       // false: e4m3, whose all-ones exponent is finite except S.1111.111 (NaN)

  uint64_t max_finite() const; // magnitude encoding of the largest finite value
  uint64_t inf() const;        // magnitude encoding of infinity (NaN for e4m3)
  uint64_t nan() const { return (uint64_t(1) << (bits - 1)) - 1; } // canonical NaN
  uint64_t one() const { return uint64_t((1u << (exp_bits - 1)) - 1) << mant_bits; }
};
inline constexpr Format kF32{32, 8, 23, true};
inline constexpr Format kF16{16, 5, 10, true};
inline constexpr Format kBF16{16, 8, 7, true};
inline constexpr Format kTF32{19, 8, 10, true}; // stored in the top 19 bits of an f32
inline constexpr Format kE4M3{8, 4, 3, false};
inline constexpr Format kE5M2{8, 5, 2, true};

struct RoundOptions {
  bool satfinite = false; // overflow and infinities give the largest finite value
  bool relu = false;      // negative results become +0
};

// Rounds the exact value s + err (s an f64, err an f64 whose sign alone matters and which
// is smaller than half an ulp of s) to `f`; returns the encoding as an integer of f.bits
// (i8/i16/i32; kTF32 as i32 holding the 19-bit encoding). NaN gives the canonical NaN.
llvm::Value* round_to_format(llvm::IRBuilder<>& b, llvm::Value* s, llvm::Value* err,
                             const Format& f, Round r, RoundOptions o = {});

// The exact f64 value of an encoding of `f` (an integer of at least f.bits).
llvm::Value* decode_format(llvm::IRBuilder<>& b, llvm::Value* bits, const Format& f);

// The rounding error of s = RN(a + c), exactly (TwoSum); NaN when s overflowed.
llvm::Value* two_sum_error(llvm::IRBuilder<>& b, llvm::Value* a, llvm::Value* c, llvm::Value* s);

// r (f32 or f64, the round-to-nearest result of an operation) moved one ulp as `mode`
// requires, given whether the exact result is above (err_pos) or below (err_neg) r.
llvm::Value* adjust_directed(llvm::IRBuilder<>& b, llvm::Value* r, llvm::Value* err_pos,
                             llvm::Value* err_neg, Round mode);

// Flushes subnormal f32/f64 values to zero of the same sign.
llvm::Value* flush_subnormal(llvm::IRBuilder<>& b, llvm::Value* v);
// Flushes subnormal encodings of `f` (an integer value) to zero of the same sign.
llvm::Value* flush_subnormal_bits(llvm::IRBuilder<>& b, llvm::Value* bits, const Format& f);
// .sat on f32/f64: clamps to [+0, 1]; NaN gives +0.
llvm::Value* saturate_float(llvm::IRBuilder<>& b, llvm::Value* v);
// .sat on an encoding of `f`.
llvm::Value* saturate_bits(llvm::IRBuilder<>& b, llvm::Value* bits, const Format& f);

llvm::Value* is_nan(llvm::IRBuilder<>& b, llvm::Value* v);
// An f64 constant 2^k.
llvm::Value* pow2(llvm::IRBuilder<>& b, int k);

} // namespace mimic::codegen::arith
