#!/bin/sh
# Interchanged rounds that stay scalar get a copy for rounds in which every thread of the
# row is inside the loop, without the per-thread state test (codegen/thread_interchange.h,
# MIMIC_FULL_ROUNDS): tests/codegen/histogram_words.ptx's grid-stride loop of
# data-dependent increments has one; so do counted rounds of a loop whose guard is its
# test (grid_stride.ptx, vectorised: in its full rounds no mask tests the index);
# MIMIC_FULL_ROUNDS=0 makes none. A counted loop up to a constant no larger than a row
# (histogram_words.ptx's `for (i = tid; i < 256; i += blockDim) local[i] = 0`, PTX block
# $L__BB0_2) runs a round or two and gets none. Behaviour: tests/cuda/full_rounds.cu,
# tests/cuda/full_counted_rounds.cu.
#   full_rounds.sh MIMIC HISTOGRAM_WORDS_PTX GRID_STRIDE_PTX
set -eu
mimic=$1
fail() { echo "full_rounds.sh: $*" >&2; exit 1; }
copies() {
  "$mimic" compile --target cpu --emit llvm "$1" -o - | grep -c '^ix\.threads[0-9]*\.full[0-9]*:' || true
}
n=$(copies "$2")
[ "$n" -ge 1 ] || fail "histogram_words.ptx: no full-round copy"
"$mimic" compile --target cpu --emit llvm "$2" -o - | grep -q '^"\$L__BB0_2\.ix[0-9]*\.full' &&
  fail "histogram_words.ptx: a full-round copy of the loop over the 256 bins"
off=$(MIMIC_FULL_ROUNDS=0 copies "$2")
[ "$off" -eq 0 ] || fail "histogram_words.ptx with MIMIC_FULL_ROUNDS=0: $off copies"
counted=$(copies "$3")
[ "$counted" -ge 1 ] || fail "grid_stride.ptx: no full-round copy of its counted rounds"
off=$(MIMIC_FULL_ROUNDS=0 copies "$3")
[ "$off" -eq 0 ] || fail "grid_stride.ptx with MIMIC_FULL_ROUNDS=0: $off copies"
# In the full copy the row's threads run without a mask: plain vector loads of x.
"$mimic" compile --target cpu --emit llvm "$3" -o - | grep -q '= load <[0-9]* x float>, ptr' ||
  fail "grid_stride.ptx: no unmasked vector load in its full rounds"
echo "full_rounds.sh: ok ($n and $counted copies)"
