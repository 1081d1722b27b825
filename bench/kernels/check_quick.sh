#!/usr/bin/env bash
# The quick run of `mimic bench kernels`: every kernel runs on every platform and every
# cross-check is ok (timings are not judged).   check_quick.sh MIMIC
set -uo pipefail
mimic=$1
out=$("$mimic" bench kernels --quick --reps 1)
status=$?
echo "$out"
fail() { echo "check_quick: $*"; exit 1; }
[ $status -eq 0 ] || fail "mimic bench kernels exited with $status"
kernels=$(grep -cE '^run=[a-z]+ kernel=' <<< "$out")
ok=$(grep -E '^run=[a-z]+ kernel=' <<< "$out" | grep -c ' check=ok$')
expected=$(( 2 * $("$(dirname "$mimic")/bench_kernels" --list | wc -l) )) # a cold and a warm run
[ "$kernels" -eq "$expected" ] || fail "expected $expected kernel lines (two runs), saw $kernels"
[ "$ok" -eq "$kernels" ] || fail "$((kernels - ok)) kernel lines do not say check=ok"
tail -n 1 <<< "$out" | grep -qE '^geomean mimic/openmp=[0-9.]+ mimic/pocl=([0-9.]+|n/a)$' ||
  fail "the last line is not the geomean line"
echo "check_quick: $ok kernel runs, all check=ok"
