#!/usr/bin/env bash
# The main job, end to end on a fresh machine: install dependencies, build Mimic, build a
# real CUDA program with nvcc, and show what Mimic makes of it.
# Kernels Mimic cannot translate fail at load with the kernel's name and the PTX line;
# `mimic info --compile` says so ahead of time.
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
build/bin/mimic info --compile build/vector_add | tail -n 1
"$nvcc" -o build/memory_streams tests/cuda/memory_streams.cu
build/bin/mimic run -- build/memory_streams
# Shared memory, barriers, warp shuffles and atomics; tensor-core wmma.
"$nvcc" -o build/reduce_warp tests/cuda/reduce_warp.cu
build/bin/mimic run -- build/reduce_warp
"$nvcc" -o build/wmma_gemm tests/cuda/wmma_gemm.cu
build/bin/mimic run -- build/wmma_gemm
