#!/usr/bin/env bash
# Re-records the expected outputs of tests/ptx on a machine with an NVIDIA GPU: the same
# ptx_runner (driver API only) runs every kernel on NVIDIA's libcuda.so.1 and writes each
# .cases file again with the outputs the GPU produced.
#
#   tests/ptx/refresh_from_gpu.sh [RUNNER] [LIBCUDA]
#
# RUNNER defaults to build/bin/ptx_runner, LIBCUDA to the system's libcuda.so.1. The script
# prints the changed files; each difference is a disagreement between the GPU and the ISA
# reading in refs.py: look at it (fix refs.py or the lowering, or keep the GPU's answer and
# say why in the commit) before committing the recorded data.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runner=${1:-$here/../../build/bin/ptx_runner}
lib=${2:-libcuda.so.1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$runner" --lib "$lib" --record "$out" "$here"/*.cases
for f in "$out"/*.cases; do
  cp "$f" "$here/$(basename "$f")"
done
git -C "$here" diff --stat -- .
