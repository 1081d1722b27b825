#!/bin/sh
# A thread loop's tests of the thread's position (`if (i >= n) return` in
# tests/codegen/saxpy.ptx) are made once for the row's first and last thread
# (codegen/row_guards.h: `row.all.in`), and the loop is copied for rows where they hold:
# that copy loads and stores whole vectors, without masks. MIMIC_ROW_GUARDS=0 turns it
# off: every vector store is masked (MIMIC_STORE_MASKS=0 here, whose plain stores for full
# masks would look the same). For blocks of 256 threads (`--block`: the JIT compiles for
# the first launch's shape; for any shape, the row's start divides by a width that may be
# 0 as far as LLVM knows, and nothing is done). Behaviour: tests/cuda/row_guards.cu.
#   row_guards.sh MIMIC SAXPY_PTX
set -eu
mimic=$1
ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "row_guards.sh: $*" >&2; exit 1; }
export MIMIC_QUICK_TIER=0 MIMIC_STORE_MASKS=0
"$mimic" compile --target cpu --block 256 --emit llvm "$ptx" -o "$out/on.ll"
MIMIC_ROW_GUARDS=0 "$mimic" compile --target cpu --block 256 --emit llvm "$ptx" -o "$out/off.ll"
! grep -q 'row.all.in' "$out/off.ll" || fail "MIMIC_ROW_GUARDS=0 still tests the rows"
! grep -q 'store <[0-9]* x float>' "$out/off.ll" || fail "an unmasked vector store without the pass (the test no longer sees the case)"
grep -q 'row.all.in' "$out/on.ll" || fail "no test of the row's ends"
grep -q 'store <[0-9]* x float>' "$out/on.ll" || fail "no unmasked vector store in the rows' copy"
grep -q '@llvm.masked.store' "$out/on.ll" || fail "no masked store left for rows that straddle the end"
echo "row_guards.sh: ok"
