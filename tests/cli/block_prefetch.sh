#!/bin/sh
# Stores whose address moves by a page or more from one block to the next are preceded by
# a prefetch-for-write of the next block's line (codegen/block_prefetch.h).
# tests/codegen/row_scale.ptx writes one row per block (a row's width apart, known at run
# time: the prefetch's distance is chosen in the preheader); tiled_gemm.ptx's next block
# writes the next 16 columns, 64 bytes on, where the hardware prefetcher is, so it gets
# none; MIMIC_STORE_PREFETCH=0 turns the pass off. Behaviour: every tests/cuda program.
#   block_prefetch.sh MIMIC ROW_SCALE_PTX TILED_GEMM_PTX
set -eu
mimic=$1
fail() { echo "block_prefetch.sh: $*" >&2; exit 1; }

# Write prefetches (llvm.prefetch with rw = 1) in the optimised IR.
write_prefetches() {
  "$mimic" compile --target cpu --emit llvm "$1" -o - | grep -c 'call void @llvm.prefetch.p0(ptr %next.block.line[0-9]*, i32 1, i32 3, i32 1)' || true
}

rows=$(write_prefetches "$2")
[ "$rows" -ge 1 ] || fail "row_scale.ptx: no write prefetch of the next block's row"
off=$(MIMIC_STORE_PREFETCH=0 write_prefetches "$2")
[ "$off" -eq 0 ] || fail "row_scale.ptx with MIMIC_STORE_PREFETCH=0: $off write prefetches"
tiles=$(write_prefetches "$3")
[ "$tiles" -eq 0 ] || fail "tiled_gemm.ptx: $tiles write prefetches, its next block's tile is 64 bytes on"
echo "block_prefetch.sh: ok ($rows prefetches)"
