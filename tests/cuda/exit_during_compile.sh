#!/bin/sh
# Programs that exit while their kernels' optimised code is still being compiled in the
# background (backends/cpu/tiers.h, jit.cpp prepare_background_compiles). LLVM builds some
# tables at their first use, and C++ destroys them at exit before exit handlers registered
# earlier: a background compile running at exit used them after their destruction and the
# program crashed (streams_events: 8 runs in 300 from a cold JIT cache on a loaded machine,
# in code generation). Runs streams_events from a cold cache RUNS times, two at a time so
# that the compiles are slow, and fails on any run that does not end well. The failure was
# one of chance: this catches it with high probability, not certainty.
#   exit_during_compile.sh MIMIC NVCC WORKDIR [RUNS]
set -eu
mimic=$1 nvcc=$2 work=$3 runs=${4:-120}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
exe="$work/streams_events"
"$nvcc" -O2 -arch=sm_80 -I"$here" -o "$exe" "$here/streams_events.cu" > "$work/build.log" 2>&1 ||
  { cat "$work/build.log" >&2; echo "exit_during_compile.sh: nvcc failed" >&2; exit 1; }
one() {
  dir="$work/cache.$1"
  rm -rf "$dir"
  status=0
  MIMIC_CACHE_DIR="$dir" MIMIC_QUICK_TIER=1 timeout 120 "$mimic" run -- "$exe" > "$work/out.$1" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    echo "exit_during_compile.sh: run $1 failed (exit status $status):" >&2
    tail -5 "$work/out.$1" >&2
    return 1
  fi
  rm -rf "$dir" "$work/out.$1"
}
failed=0
i=0
while [ "$i" -lt "$runs" ]; do
  one "$i" & a=$!
  one "$((i + 1))" & b=$!
  wait "$a" || failed=$((failed + 1))
  wait "$b" || failed=$((failed + 1))
  i=$((i + 2))
done
[ "$failed" -eq 0 ] || { echo "exit_during_compile.sh: $failed of $runs runs failed" >&2; exit 1; }
echo "exit_during_compile.sh: $runs runs ok"
