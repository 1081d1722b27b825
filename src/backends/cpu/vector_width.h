// How wide the vectors are that the CPU backend's code uses.
//
// LLVM tunes every AVX-512 CPU it knows to prefer 256-bit vectors, a choice made for
// Skylake-SP, whose cores lower their clock for 512-bit work. Kernels are throughput code:
// on later AVX-512 cores 512-bit thread loops run the compute-bound kernels of `mimic
// bench kernels` 10-50% faster (softmax 520 -> 340 ms, Black-Scholes 600 -> 281 ms) and
// streaming ones within 8% of 256-bit. So kernels get 512-bit vectors on AVX-512 CPUs other
// than the Skylake-SP family, and LLVM's choice elsewhere.
//
// MIMIC_VECTOR_BITS=256 or 512 overrides that (for comparisons, or a CPU that clocks down);
// the JIT cache keys on the width.
#pragma once

namespace mimic::cpu {

// The preferred vector width in bits for kernels on this host; 0 leaves it to LLVM.
unsigned preferred_vector_bits();

} // namespace mimic::cpu
