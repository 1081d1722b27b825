#!/bin/sh
# Interchanged rounds that stay scalar get a copy for rounds in which every thread of the
# row is inside the loop, without the per-thread state test (codegen/thread_interchange.h,
# MIMIC_FULL_ROUNDS): tests/codegen/histogram_words.ptx's grid-stride loop of
# data-dependent increments has one; grid_stride.ptx's loop, which is vectorised (a mask
# tests the state), has none; MIMIC_FULL_ROUNDS=0 makes none. Behaviour:
# tests/cuda/full_rounds.cu.
#   full_rounds.sh MIMIC HISTOGRAM_WORDS_PTX GRID_STRIDE_PTX
set -eu
mimic=$1
fail() { echo "full_rounds.sh: $*" >&2; exit 1; }
copies() {
  "$mimic" compile --target cpu --emit llvm "$1" -o - | grep -c '^ix\.threads[0-9]*\.full[0-9]*:' || true
}
n=$(copies "$2")
[ "$n" -ge 1 ] || fail "histogram_words.ptx: no full-round copy"
off=$(MIMIC_FULL_ROUNDS=0 copies "$2")
[ "$off" -eq 0 ] || fail "histogram_words.ptx with MIMIC_FULL_ROUNDS=0: $off copies"
vectorised=$(copies "$3")
[ "$vectorised" -eq 0 ] || fail "grid_stride.ptx: $vectorised copies of a vectorised round"
echo "full_rounds.sh: ok ($n copies)"
