#!/bin/sh
# The CPU backend makes the same object from the same PTX in every process: the JIT cache
# and same-run comparisons rely on it. (The lowering once numbered spill slots in the
# order of a hash of the registers' declaration addresses, which the heap's layout, and so
# address-space randomisation, changed from run to run.)
#   deterministic.sh MIMIC PTX...
set -eu
mimic=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ptx in "$@"; do
  "$mimic" compile --target cpu "$ptx" -o "$out/first.o"
  for run in 2 3 4; do
    "$mimic" compile --target cpu "$ptx" -o "$out/again.o"
    cmp -s "$out/first.o" "$out/again.o" || {
      echo "deterministic.sh: $(basename "$ptx"): run $run made a different object" >&2
      exit 1
    }
  done
done
echo "deterministic.sh: ok"
