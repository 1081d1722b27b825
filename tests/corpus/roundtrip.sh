#!/usr/bin/env bash
# Every PTX entry of the CUDA toolkit's libraries parses, and prints back to PTX that
# parses to an identical tree.   usage: roundtrip.sh MIMIC CUDA_ROOT
set -euo pipefail
mimic=$1
cuda=$2
shopt -s nullglob
libs=("$cuda"/lib64/lib*.so*)
if [ ${#libs[@]} -eq 0 ]; then
  echo "no libraries under $cuda/lib64"
  exit 1
fi
out=$("$mimic" info --roundtrip "${libs[@]}")
echo "$out" | tail -n 20
last=$(echo "$out" | tail -n 1)
case "$last" in
  "ptx: "*", 0 failed") ;;
  *) echo "FAILED: $last"; exit 1 ;;
esac
entries=$(echo "$last" | sed -E 's/ptx: ([0-9]+) entries.*/\1/')
# The toolkit's libraries carry well over a thousand PTX modules; far fewer means the
# reader missed some.
if [ "$entries" -lt 1000 ]; then
  echo "FAILED: only $entries PTX entries found"
  exit 1
fi
