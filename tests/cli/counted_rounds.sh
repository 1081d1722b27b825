#!/bin/sh
# Counted rounds (codegen/thread_interchange.cpp, Plan::Counted): a loop whose latch keeps
# a thread while its index compares below a bound the same in every thread runs rounds
# that test `start + offset < bound` again instead of storing a state byte per thread.
# tests/codegen/row_scale.ptx's scaling loop (`for (c = threadIdx.x; c < cols; c +=
# blockDim.x)`) is counted from its guard, and so is tests/codegen/block_scan.ptx's
# add_tile_offsets loop, whose guard nvcc writes as the other test of its constant bound
# (`c > 1023` before the loop, `c < 1024` at its end); tests/codegen/do_while_rows.ptx's
# (a do-while loop: no guard) is counted with the state byte saying who entered. Each gets the
# run-time check of the values' range (ix.choose, overflow tests) in front of its rounds;
# the vectorised rounds of row_scale store no state bytes, so fewer vector stores into the
# state arrays remain than in state mode; MIMIC_COUNTED_ROUNDS=0 makes none. 64-bit indices are not
# counted (grid_stride.ptx: interchange.sh). A loop unrolled by two, whose index steps by
# two adds a trip (row_sum_by_two.ptx), is counted from its guard as well: before, its
# index was kept per thread in an array and its rounds were not counted.
# Behaviour: tests/cuda/counted_rounds.cu.
#   counted_rounds.sh MIMIC ROW_SCALE_PTX BLOCK_SCAN_PTX ROW_SUM_BY_TWO_PTX DO_WHILE_ROWS_PTX
set -eu
mimic=$1 rows=$2 scan=$3 by_two=$4 do_while=$5
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "counted_rounds.sh: $*" >&2; exit 1; }
compile() { # PTX OUT [VAR=VALUE]
  env ${3:-MIMIC_COUNTED_ROUNDS=1} MIMIC_INTERCHANGE=explain "$mimic" compile --target cpu --emit llvm "$1" -o "$2" \
    2> "$2.explain"
}
compile "$rows" "$out/rows.ll"
grep -q ": made, counted from its guard" "$out/rows.ll.explain" || fail "row_scale.ptx: not counted from its guard"
compile "$scan" "$out/scan.ll"
grep -q "mimic_kernel_2, .*: made, counted from its guard" "$out/scan.ll.explain" ||
  fail "block_scan.ptx: add_tile_offsets not counted from its guard (c > 1023 against c < 1024)"
compile "$do_while" "$out/do_while.ll"
grep -q ": made, counted$" "$out/do_while.ll.explain" || fail "do_while_rows.ptx: not counted with its state byte"
compile "$by_two" "$out/by_two.ll"
grep -q ": made, counted from its guard" "$out/by_two.ll.explain" || fail "row_sum_by_two.ptx: not counted from its guard"
for ll in "$out/rows.ll" "$out/scan.ll" "$out/by_two.ll" "$out/do_while.ll"; do
  grep -q 'call { i[0-9]*, i1 } @llvm.uadd.with.overflow' "$ll" || fail "$(basename "$ll"): no range check"
done
# (the do-while loop's choice is folded into the block before it)
for ll in "$out/rows.ll" "$out/scan.ll" "$out/by_two.ll"; do
  grep -q '^ix\.choose[0-9]*:' "$ll" || fail "$(basename "$ll"): no choice of counted rounds"
done
compile "$rows" "$out/state.ll" MIMIC_COUNTED_ROUNDS=0
! grep -q '^ix\.choose' "$out/state.ll" || fail "MIMIC_COUNTED_ROUNDS=0 did not turn counted rounds off"
# Vector byte stores into the interchange's state arrays (%ix.state*), not the other byte
# stores (a predicate's spill slot).
state_stores() {
  awk '/= getelementptr .*ptr %ix\.state/ { g[$1] = 1 }
       /store <[0-9]+ x i8>/ { for (k in g) if (index($0, "ptr " k ",")) n++ }
       END { print n + 0 }' "$1"
}
counted=$(state_stores "$out/rows.ll")
state=$(state_stores "$out/state.ll")
[ "$counted" -lt "$state" ] || fail "row_scale.ptx: $counted vector byte stores counted, $state in state mode"
echo "counted_rounds.sh: ok ($counted vector byte stores against $state)"
