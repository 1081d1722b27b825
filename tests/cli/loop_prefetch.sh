#!/bin/sh
# A load from global memory in a loop with a barrier, whose address moves with the loop's
# induction register, is preceded by a prefetch into L2 of the next trip's address
# (codegen/loop_prefetch.h). tests/codegen/tiled_gemm.ptx loads a tile of B whose rows are
# n floats apart (a distance known at run time) and a tile of A 64 bytes on (the hardware
# prefetcher's): B's loads get the prefetch; grid_stride.ptx's loop has no barrier and
# gets none; MIMIC_LOOP_PREFETCH=0 turns it off. Behaviour: every tests/cuda program.
#   loop_prefetch.sh MIMIC TILED_GEMM_PTX GRID_STRIDE_PTX
set -eu
mimic=$1
fail() { echo "loop_prefetch.sh: $*" >&2; exit 1; }

# Read prefetches into L2 in the optimised IR.
prefetches() {
  "$mimic" compile --target cpu --emit llvm "$1" -o - | grep -c 'call void @llvm.prefetch.p0(ptr %[^,]*, i32 0, i32 2, i32 1)' || true
}

gemm=$(prefetches "$2")
[ "$gemm" -ge 1 ] || fail "tiled_gemm.ptx: no prefetch of the next tile"
off=$(MIMIC_LOOP_PREFETCH=0 prefetches "$2")
[ "$off" -eq 0 ] || fail "tiled_gemm.ptx with MIMIC_LOOP_PREFETCH=0: $off prefetches"
plain=$(prefetches "$3")
[ "$plain" -eq "$(MIMIC_LOOP_PREFETCH=0 prefetches "$3")" ] || fail "grid_stride.ptx: next-trip prefetches in a loop without a barrier"
echo "loop_prefetch.sh: ok ($gemm prefetches in tiled_gemm.ptx)"
