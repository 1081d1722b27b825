#!/bin/sh
# The thread-loop interchange on a grid-stride loop (tests/codegen/grid_stride.ptx, from
#   __global__ void grid_stride_sum(const float* x, unsigned long n, float* out) {
#     float s = 0;
#     for (unsigned long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
#          i += gridDim.x * blockDim.x)
#       s += x[i];
#     out[blockIdx.x * blockDim.x + threadIdx.x] = s;
#   }):
# the pass makes it (MIMIC_INTERCHANGE=explain), the threads' iterations become a vector
# loop of masked loads of consecutive elements of x, and MIMIC_INTERCHANGE=0 leaves the
# loop as it was. Each round prefetches the run of x the row's threads read four rounds
# later (into L2, line by line, when it lies a page or more away), which MIMIC_PREFETCH=0
# turns off. Behaviour is tested by tests/cuda/thread_loop_interchange.cu.
#   interchange.sh MIMIC PTX
set -eu
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "interchange.sh: $*" >&2; exit 1; }

MIMIC_INTERCHANGE=explain "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/on.ll" 2> "$out/explain"
grep -q "interchange in mimic_kernel_0, loop at .*: made" "$out/explain" || { cat "$out/explain"; fail "not made"; }
# Its index is 64-bit, and its guard is the loop's test: counted, with full rounds
# (codegen/thread_interchange.cpp, find_counted); without full rounds, not counted.
grep -q ": made, counted from its guard" "$out/explain" || fail "the 64-bit grid-stride index is not counted"
MIMIC_FULL_ROUNDS=0 MIMIC_INTERCHANGE=explain "$mimic" compile --target cpu --emit llvm "$ptx" -o /dev/null \
  2> "$out/explain_no_full"
! grep -q ": made, counted" "$out/explain_no_full" || fail "counted without full rounds"
grep -q '^ix.threads' "$out/on.ll" || fail "no loop over the threads inside the loop"
grep -q 'call <[0-9]* x float> @llvm.masked.load' "$out/on.ll" || fail "the threads' loads are not vector loads"
grep -q '^pf.lines' "$out/on.ll" || fail "no prefetch loop in the rounds"
# In state mode (counted rounds store no state: counted_rounds.sh), a thread leaving the
# loop is recorded by storing every thread's state byte back (2 = past the loop); a masked
# store of just the leavers' bytes would not forward to the next round's load of them.
MIMIC_COUNTED_ROUNDS=0 "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/state.ll"
! grep -q 'masked.store.v[0-9]*i8.p0(<[0-9]* x i8> splat (i8 2)' "$out/state.ll" ||
  fail "the rounds record leaving threads with a masked store"
grep -q 'store <[0-9]* x i8> %' "$out/state.ll" || fail "no vector store of the threads' state bytes"
grep -q 'call void @llvm.prefetch.p0(ptr %[^,]*, i32 0, i32 2, i32 1)' "$out/on.ll" || fail "no prefetch of x into L2"
# The loop is left at its latch only and the sum leaving it is the carried sum's update:
# a leaving thread stores it where a staying one does (the carried sum's array, one
# masked store per vector), and the code after the loop reads it there; no array of
# values leaving the loop.
arrays=$(grep -c 'alloca \[1024 x float\]' "$out/on.ll")
[ "$arrays" -eq 1 ] || fail "$arrays per-thread float arrays, where the carried sum's alone would do"
MIMIC_PREFETCH=0 "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/no_prefetch.ll"
grep -q '^ix.threads' "$out/no_prefetch.ll" || fail "MIMIC_PREFETCH=0 undid the interchange"
! grep -q 'llvm.prefetch' "$out/no_prefetch.ll" || fail "MIMIC_PREFETCH=0 did not turn prefetching off"
MIMIC_INTERCHANGE=0 "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/off.ll"
! grep -q '^ix\.' "$out/off.ll" || fail "MIMIC_INTERCHANGE=0 did not turn it off"
echo "interchange.sh: ok"
