#!/usr/bin/env bash
# The main job, end to end on a fresh machine: install dependencies, build Mimic, build a
# real CUDA program with nvcc, and show what Mimic makes of it.
# The code generator is in its first stage (issue 4): kernels it cannot translate yet fail
# at load with the kernel's name and the PTX line.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
export CC=${CC:-clang-22} CXX=${CXX:-clang++-22}
cmake -S . -B build -G Ninja > /dev/null
cmake --build build
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
"$nvcc" -o build/vector_add tests/cuda/vector_add.cu
build/bin/mimic info build/vector_add
build/bin/mimic info --check build/vector_add
build/bin/mimic run -- build/vector_add
"$nvcc" -o build/memory_streams tests/cuda/memory_streams.cu
build/bin/mimic run -- build/memory_streams
