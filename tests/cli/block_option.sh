#!/bin/sh
# `mimic compile --block X,Y,Z` compiles each kernel for blocks of one shape, as the JIT
# compiles a kernel's first launch (codegen/block_shape.h): the code is named
# SYMBOL.block.XxYxZ, and the row set-up's divisions by the block's width fold away
# (stencil_tile.ptx: 8 divisions and remainders for any shape). A bad shape is refused.
# `--cpu NAME` compiles for that x86-64 CPU instead of this one; a name LLVM does not know
# is refused with the name.
#   block_option.sh MIMIC STENCIL_TILE_PTX
set -eu
mimic=$1 ptx=$2
fail() { echo "block_option.sh: $*" >&2; exit 1; }
any=$("$mimic" compile --target cpu --emit llvm "$ptx" -o -)
shaped=$("$mimic" compile --target cpu --emit llvm --block 32,8 "$ptx" -o -)
echo "$any" | grep -q '^define void @mimic_kernel_0(' || fail "no mimic_kernel_0 for any shape"
echo "$shaped" | grep -q '^define void @mimic_kernel_0.block.32x8x1(' || fail "no mimic_kernel_0.block.32x8x1"
divisions=$(echo "$any" | grep -c ' = u\(div\|rem\) ' || true)
[ "$divisions" -gt 0 ] || fail "the code for any shape has no division by the block's width to fold"
left=$(echo "$shaped" | grep -c ' = u\(div\|rem\) ' || true)
[ "$left" -eq 0 ] || fail "$left divisions left in the code for 32x8x1 blocks"
for bad in 0 2000 32,40 1,2,3,4 32, x; do
  status=0
  "$mimic" compile --target cpu --block "$bad" "$ptx" -o /dev/null 2> /dev/null || status=$?
  [ "$status" -eq 2 ] || fail "--block $bad: exit status $status, not 2"
done
"$mimic" compile --target cpu --cpu znver3 --emit llvm "$ptx" -o - | grep -q '"target-cpu"="znver3"' ||
  fail "--cpu znver3: the code is not for znver3"
status=0
"$mimic" compile --target cpu --cpu no-such-core "$ptx" -o /dev/null 2> "${TMPDIR:-/tmp}/cpu_option.$$" || status=$?
grep -q "no-such-core" "${TMPDIR:-/tmp}/cpu_option.$$" || fail "--cpu no-such-core: the error does not name it"
rm -f "${TMPDIR:-/tmp}/cpu_option.$$"
[ "$status" -eq 1 ] || fail "--cpu no-such-core: exit status $status, not 1"
echo "block_option.sh: ok ($divisions divisions for any shape, none for 32x8x1)"
