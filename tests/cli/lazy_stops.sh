#!/bin/sh
# A thread loop whose threads all stop at one place (a barrier of the whole block, a warp
# operation with a full mask, the kernel's end) does not store that stop into next[t] and
# barrier[t] for each thread: the chain goes on from it without reading them, and writes
# them for the call's threads (`chain_*_stops_fill`) only on the paths that read them (the
# executor, the chain's scans of the block, a caller of a call for some warps). See
# codegen/lower.cpp, LazyStop. On tests/codegen/bitonic_step.ptx (one barrier, then the
# end: the compare-exchange's stores of its stop were 3 vector stores of a constant a
# vector) and halo_tile.ptx. MIMIC_LAZY_STOPS=0 keeps the stores. Behaviour: every CUDA
# test program with barriers or warp operations (warp_phases.cu, reduce_warp.cu: calls for
# some warps; syncthreads_loops.cu, ...).
#   lazy_stops.sh MIMIC PTX...
set -eu
mimic=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "lazy_stops.sh: $*" >&2; exit 1; }
count() { grep -c "$1" "$2" || true; }

for ptx in "$@"; do
  name=$(basename "$ptx" .ptx)
  "$mimic" compile --target cpu --cpu znver3 --emit llvm "$ptx" -o "$out/on.ll"
  MIMIC_LAZY_STOPS=0 "$mimic" compile --target cpu --cpu znver3 --emit llvm "$ptx" -o "$out/off.ll"
  off=$(count 'store <[0-9]* x i32> splat' "$out/off.ll")
  on=$(count 'store <[0-9]* x i32> splat' "$out/on.ll")
  [ "$off" -gt 0 ] || fail "$name: no per-thread stores of a stop to begin with (the test no longer sees the case)"
  [ "$on" -le 1 ] || fail "$name: $on vector stores of a constant stop left (of $off)"
  [ "$(count '^chain_[a-z]*_stops_fill' "$out/on.ll")" -ge 1 ] || fail "$name: no path writes the stops for the threads"
  [ "$(count '^chain_[a-z]*_stops_fill' "$out/off.ll")" -eq 0 ] || fail "$name: MIMIC_LAZY_STOPS=0 still leaves stops out"
done
echo "lazy_stops.sh: ok"
