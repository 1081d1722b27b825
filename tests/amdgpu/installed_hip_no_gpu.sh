#!/usr/bin/env bash
# With a real HIP runtime installed and no AMD GPU (Debian's libamdhip64-5 on a machine
# without one): the AMD GPU backend says that no AMD GPU is available and a run asking for
# it fails, while the default falls back to the CPU. Skipped (77) without a HIP runtime.
#   installed_hip_no_gpu.sh MIMIC LIBCUDA NVCC WORK_DIR
set -u
mimic=$1
libcuda=$2
nvcc=$3
work=$4
here=$(cd "$(dirname "$0")" && pwd)
unset MIMIC_HIP_LIBRARY MIMIC_BACKEND
if ! ldconfig -p 2> /dev/null | grep -qE 'libamdhip64\.so\.[567] ' && ! ls /opt/rocm/lib/libamdhip64.so.[567] > /dev/null 2>&1; then
  echo "no HIP runtime installed: skipped"
  exit 77
fi
mkdir -p "$work"
exe=$work/vector_add
src=$here/../cuda/vector_add.cu
if [ ! -x "$exe" ] || [ "$src" -nt "$exe" ]; then
  "$nvcc" -o "$exe" "$src" || { echo "FAIL: nvcc could not build $src"; exit 1; }
fi
export LD_LIBRARY_PATH="$(dirname "$nvcc")/../lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# 1. mimic run --backend amdgpu: refuses to start the program, naming HIP's answer.
out=$("$mimic" run --backend amdgpu -- "$exe" 2>&1)
status=$?
echo "mimic run --backend amdgpu: exit $status: $out"
[ $status -ne 0 ] || fail "mimic run --backend amdgpu exited 0"
grep -q "mimic run: no AMD GPU available: " <<< "$out" || fail "no 'no AMD GPU available' message"
grep -q "HIP runtime not found" <<< "$out" && fail "the installed HIP runtime was not loaded"
grep -q "vector_add: ok" <<< "$out" && fail "the program ran"

# 2. The driver alone with MIMIC_BACKEND=amdgpu (no mimic run): no CUDA device, and why.
out=$(LD_PRELOAD=$libcuda MIMIC_BACKEND=amdgpu "$exe" 2>&1)
status=$?
echo "MIMIC_BACKEND=amdgpu $exe: exit $status: $(head -c 600 <<< "$out")"
[ $status -ne 0 ] || fail "the program succeeded with MIMIC_BACKEND=amdgpu and no GPU"
grep -q "mimic: error: MIMIC_BACKEND=amdgpu: no AMD GPU available: " <<< "$out" || fail "the driver did not say why"

# 3. The default: the CPU.
out=$("$mimic" run -- "$exe" 2>&1)
status=$?
echo "mimic run (default): exit $status"
[ $status -eq 0 ] || fail "the default run failed (exit $status): $out"
grep -q "vector_add: ok" <<< "$out" || fail "the default run did not finish: $out"
[ $failed -eq 0 ] && echo "installed HIP runtime without a GPU: all as expected"
exit $failed
