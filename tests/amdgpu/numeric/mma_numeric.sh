#!/usr/bin/env bash
# Numeric check of the AMDGPU mma.sync lowering without an AMD GPU: mma_forms.ptx lowered
# for gfx1100 (mimic compile --emit llvm), turned into host IR (host_ir.py), linked with
# mma_numeric.cpp and Mimic's libcuda, and run: every form must give the CPU backend's bits,
# and must stop doing so when the lane exchanges are deliberately wrong.
#   mma_numeric.sh MIMIC CXX CUDA_INCLUDE LIBCUDA_DIR WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mimic=$1 cxx=$2 cuda_include=$3 libdir=$4 work=$5
mkdir -p "$work"
"$mimic" compile --target gfx1100 --emit llvm "$here/mma_forms.ptx" -o "$work/mma_forms.ll"
python3 "$here/host_ir.py" "$work/mma_forms.ll" "$work/host.ll"
"$cxx" -O0 -Wno-override-module -c "$work/host.ll" -o "$work/host.o"
"$cxx" -std=c++20 -O1 -I"$cuda_include" -c "$here/mma_numeric.cpp" -o "$work/mma_numeric.o"
"$cxx" "$work/mma_numeric.o" "$work/host.o" -L"$libdir" -l:libcuda.so.1 -Wl,-rpath,"$libdir" -lpthread \
  -o "$work/mma_numeric"
"$work/mma_numeric" "$here/mma_forms.ptx"
if MMA_NUMERIC_MUTATE=1 "$work/mma_numeric" "$here/mma_forms.ptx" | grep bit-identical; then
  echo "the forms above did not notice wrong lane exchanges" >&2
  exit 1
fi
echo "mma_numeric: every form bit-identical to the CPU backend, and every one notices wrong exchanges"
