#!/bin/sh
# Scatters that together cover a contiguous run become one masked store of the run
# (codegen/interleaved_scatter.h). tests/codegen/block_scan.ptx writes four items per thread
# (`out[base + k]`, each under its bound check), which LLVM vectorises as four scatters; they
# become one masked store of <64 x i32>, guarded by the check on the lanes' span (the index
# went through a zero extension). MIMIC_INTERLEAVED_SCATTER=0 leaves them. Behaviour:
# tests/cuda/items_per_thread.cu.
#   interleaved_scatter.sh MIMIC BLOCK_SCAN_PTX
set -eu
# The code read here is an AVX-512 machine's (16-lane vectors, the vectoriser's gathers and
# scatters) on any machine: `mimic compile --cpu sapphirerapids` with 512-bit vectors.
export MIMIC_VECTOR_BITS=512
mimic=$1
fail() { echo "interleaved_scatter.sh: $*" >&2; exit 1; }

ir=$("$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$2" -o -)
joined=$(printf '%s\n' "$ir" | grep -c 'call void @llvm.masked.store.v64i32.p0(<64 x i32> %interleaved' || true)
[ "$joined" -ge 1 ] || fail "block_scan.ptx: no joined store of four items per thread"
checked=$(printf '%s\n' "$ir" | grep -c '%run.even = icmp eq i64' || true)
[ "$checked" -ge 1 ] || fail "block_scan.ptx: the joined store does not check the lanes' span"
off=$(MIMIC_INTERLEAVED_SCATTER=0 "$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$2" -o - | grep -c '%interleaved' || true)
[ "$off" -eq 0 ] || fail "block_scan.ptx with MIMIC_INTERLEAVED_SCATTER=0: $off interleaving shuffles"
echo "interleaved_scatter.sh: ok ($joined joined)"
