#!/usr/bin/env bash
# Code generation over the toolkit's own device code: every kernel of libcurand, and 60
# of libcublas's PTX modules (every third by size), translate for the CPU backend.
# The whole of libcublas is `mimic info --compile $CUDA/lib64/libcublas.so` (about a
# minute).   usage: compile_check.sh MIMIC CUDA_ROOT WORK_DIR
set -uo pipefail
mimic=$1
cuda=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
status=0
echo "== libcurand"
"$mimic" info --compile "$cuda"/lib64/libcurand.so.* > "$work/curand.log" 2>&1 || status=1
grep -E "^compile:|kernel '" "$work/curand.log" | head -40
echo "== libcublas, 60 modules"
"$mimic" extract -o "$work" "$cuda"/lib64/libcublas.so.* > /dev/null || status=1
mapfile -t sample < <(cd "$work" && ls -Sr ./*.ptx | awk 'NR % 3 == 1' | head -n 60)
if [ "${#sample[@]}" -lt 50 ]; then
  echo "FAILED: only ${#sample[@]} libcublas modules found"; status=1
fi
(cd "$work" && "$mimic" info --compile "${sample[@]}") > "$work/cublas.log" 2>&1 || status=1
grep -E "^compile:|kernel '" "$work/cublas.log" | head -40
rm -f "$work"/*.ptx
exit $status
