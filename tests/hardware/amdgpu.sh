#!/usr/bin/env bash
# Runs Mimic's PTX kernel suite (tests/ptx) and CUDA program suite (tests/cuda) on an AMD
# GPU: the same runners the CPU's ctest entries use, with MIMIC_BACKEND=amdgpu so that
# every program gets the GPU and only the GPU. For a machine with a supported Radeon (RDNA,
# see `supported_targets()`), AMD's HIP runtime (ROCm 6 or 7; 5 without
# cooperative launches) and the CUDA toolkit's nvcc (to build the test programs; no NVIDIA
# GPU needed). README.md, "Running the tests on an AMD GPU", says how.
#   tests/hardware/amdgpu.sh [BUILD_DIR]      (default: build)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), MIMIC_HIP_LIBRARY
# (a HIP runtime other than the system's), MIMIC_CUDA_JOBS (programs run at once).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd) || { echo "amdgpu.sh: no build directory ${1:-$root/build}"; exit 2; }
mimic=$build/bin/mimic
runner=$build/bin/ptx_runner
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
work=$build/tests/hardware-amdgpu
for f in "$mimic" "$runner" "$nvcc"; do
  [ -x "$f" ] || { echo "amdgpu.sh: $f is missing (build Mimic with tests: cmake --build $build)"; exit 2; }
done
export MIMIC_BACKEND=amdgpu
export MIMIC_CACHE_DIR=$work/jit_cache
mkdir -p "$work"

echo "== the GPU"
if ! "$mimic" run --backend amdgpu -- true; then
  echo "amdgpu.sh: no AMD GPU Mimic can use on this machine (see above)"
  exit 1
fi

failed=0
echo "== tests/ptx: PTX kernels per arithmetic family"
for family in int float half cvt; do
  if ! timeout 600 "$runner" "$root/tests/ptx/$family.cases" > "$work/ptx_$family.log" 2>&1; then
    echo "FAIL ptx_$family (log: $work/ptx_$family.log)"
    tail -n 20 "$work/ptx_$family.log"
    failed=$((failed + 1))
  else
    echo "ok   ptx_$family: $(tail -n 1 "$work/ptx_$family.log")"
  fi
done

echo "== tests/cuda: CUDA programs under mimic run"
if ! "$root/tests/cuda/run_programs.sh" "$mimic" "$nvcc" "$work/cuda_programs"; then
  failed=$((failed + 1))
fi

echo "== amdgpu.sh: $failed suite(s) failed"
[ $failed -eq 0 ]
