#!/bin/sh
# A compare-exchange's conditional stores to shared memory become stores of selects
# (codegen/shared_store_select.h), on tests/codegen/bitonic_step.ptx (the kernel is in
# tests/cli/thread_masks.sh): `a = s[i]; b = s[i + 4]; if ((a > b) == ascending) { s[i] = b;
# s[i + 4] = a; }`. Without the pass, the vectoriser on AVX2 (`--cpu znver3`) stores each
# lane's pair in a block of its own behind a test of the lane's mask bit (`pred.store.if`),
# a branch per lane on the data; with it, no such block is left and both stores are of a
# select (`stored.or.kept`). Behaviour: tests/cuda/shared_store_select.cu (including the
# shapes the pass must leave alone) and bitonic_sort.cu.
#   shared_store_select.sh MIMIC PTX
set -eu
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "shared_store_select.sh: $*" >&2; exit 1; }

"$mimic" compile --target cpu --cpu znver3 --emit llvm "$ptx" -o "$out/on.ll"
MIMIC_SHARED_STORE_SELECT=0 "$mimic" compile --target cpu --cpu znver3 --emit llvm "$ptx" -o "$out/off.ll"
grep -q '^pred.store.if' "$out/off.ll" ||
  fail "no lane-by-lane stores without the pass (the test no longer sees the case)"
! grep -q '^pred.store.if' "$out/on.ll" || fail "lane-by-lane conditional stores are left"
[ "$(grep -c 'store i32 %stored.or.kept' "$out/on.ll")" -ge 2 ] ||
  fail "the compare-exchange's two stores are not of selects"
echo "shared_store_select.sh: ok"
