#!/bin/sh
# Low bits of the thread index in an address (codegen/parallel_loops.cpp,
# hide_thread_masks), on tests/codegen/bitonic_step.ptx, from
#   __global__ void bitonic_step(unsigned* keys, unsigned size, unsigned stride) {
#     __shared__ unsigned s[2048];
#     unsigned t = threadIdx.x;
#     s[t] = keys[t];
#     s[t + blockDim.x] = keys[t + blockDim.x];
#     __syncthreads();
#     unsigned i = 2 * t - (t & 3); // stride 4: the lower index of this thread's pair
#     bool ascending = (i & size) == 0;
#     unsigned a = s[i], b = s[i + 4];
#     if ((a > b) == ascending) {
#       s[i] = b;
#       s[i + 4] = a;
#     }
#     __syncthreads();
#     keys[t] = s[t];
#     keys[t + blockDim.x] = s[t + blockDim.x];
#   }
# The compare-exchange loop's `t & 3` is hidden from SCEV, so the vectoriser gathers and
# scatters the pairs instead of treating them as consecutive under a run-time check that
# fails for any block of more than 4 threads (which left every launch on the scalar loop).
# Behaviour is tested by tests/cuda/bitonic_sort.cu.
#   thread_masks.sh MIMIC PTX
set -eu
# The code read here is an AVX-512 machine's (16-lane vectors, the vectoriser's gathers and
# scatters) on any machine: `mimic compile --cpu sapphirerapids` with 512-bit vectors.
export MIMIC_VECTOR_BITS=512
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "thread_masks.sh: $*" >&2; exit 1; }

MIMIC_PARALLEL_LOOPS=explain "$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$ptx" -o "$out/k.ll" 2> "$out/explain"
[ "$(grep -v '\.full' "$out/explain" | grep -c '1 thread-index mask(s) hidden from SCEV, parallel')" -eq 1 ] ||
  fail "the compare-exchange loop's mask is not hidden (or another loop's is)"
grep -q 'llvm.masked.scatter' "$out/k.ll" || fail "the compare-exchange stores are not scattered"
MIMIC_PARALLEL_LOOPS=0 "$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$ptx" -o "$out/off.ll"
checks_on=$(grep -c '^vector.scevcheck[0-9]*:' "$out/k.ll" || true)
checks_off=$(grep -c '^vector.scevcheck[0-9]*:' "$out/off.ll" || true)
[ "$checks_on" -lt "$checks_off" ] || fail "no run-time SCEV check fewer ($checks_on with the pass, $checks_off without)"
echo "thread_masks.sh: ok"
