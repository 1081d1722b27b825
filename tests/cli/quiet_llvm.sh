#!/bin/sh
# LLVM's warnings about the code Mimic makes stay off the application's standard error
# (codegen/lower.cpp, QuietDiagnostics): thread loops are marked for vectorisation, and where
# LLVM cannot vectorise one (tests/codegen/nbody_tile.ptx) it would print "loop not
# vectorized" warnings into every run of the program. With MIMIC_LLVM_OPTIONS (studying the
# code) they print, which also shows that this input makes them.
#   quiet_llvm.sh MIMIC PTX
set -eu
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "quiet_llvm.sh: $*" >&2; exit 1; }

MIMIC_LLVM_OPTIONS=-pass-remarks-missed=loop-vectorize \
  "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/k.ll" 2> "$out/studying"
grep -q "loop not vectorized" "$out/studying" || fail "the input no longer makes LLVM refuse a loop"
"$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/k.ll" 2> "$out/stderr"
[ ! -s "$out/stderr" ] || { cat "$out/stderr" >&2; fail "LLVM's diagnostics reached standard error"; }
echo "quiet_llvm.sh: ok"
