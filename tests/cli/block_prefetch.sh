#!/bin/sh
# Stores whose address moves by a page or more from one block to the next are preceded by
# a prefetch-for-write of the next block's line, and loads by a prefetch into L2
# (codegen/block_prefetch.h). tests/codegen/row_scale.ptx reads and writes one row per
# block (a row's width apart, known at run time: the prefetch's distance is chosen in the
# preheader); tiled_gemm.ptx's next block reads and writes the next 16 columns, 64 bytes
# on, where the hardware prefetcher is, so it gets none; MIMIC_STORE_PREFETCH=0 and
# MIMIC_LOAD_PREFETCH=0 turn each kind off. Behaviour: every tests/cuda program.
#   block_prefetch.sh MIMIC ROW_SCALE_PTX TILED_GEMM_PTX
set -eu
mimic=$1
fail() { echo "block_prefetch.sh: $*" >&2; exit 1; }

# Write prefetches (llvm.prefetch with rw = 1, into L1) and read prefetches (rw = 0, into
# L2) of the next block's lines in the optimised IR.
prefetches() {
  "$mimic" compile --target cpu --emit llvm "$2" -o - | grep -c "call void @llvm.prefetch.p0(ptr %next.block.line[0-9]*, $1, i32 1)" || true
}
write_prefetches() { prefetches 'i32 1, i32 3' "$1"; }
read_prefetches() { prefetches 'i32 0, i32 2' "$1"; }

rows=$(write_prefetches "$2")
[ "$rows" -ge 1 ] || fail "row_scale.ptx: no write prefetch of the next block's row"
off=$(MIMIC_STORE_PREFETCH=0 write_prefetches "$2")
[ "$off" -eq 0 ] || fail "row_scale.ptx with MIMIC_STORE_PREFETCH=0: $off write prefetches"
[ "$(MIMIC_LOAD_PREFETCH=0 write_prefetches "$2")" -eq "$rows" ] || fail "row_scale.ptx: MIMIC_LOAD_PREFETCH=0 changed the write prefetches"
reads=$(read_prefetches "$2")
[ "$reads" -ge 1 ] || fail "row_scale.ptx: no read prefetch of the next block's row"
off=$(MIMIC_LOAD_PREFETCH=0 read_prefetches "$2")
[ "$off" -eq 0 ] || fail "row_scale.ptx with MIMIC_LOAD_PREFETCH=0: $off read prefetches"
[ "$(MIMIC_STORE_PREFETCH=0 read_prefetches "$2")" -eq "$reads" ] || fail "row_scale.ptx: MIMIC_STORE_PREFETCH=0 changed the read prefetches"
tiles=$(write_prefetches "$3")
[ "$tiles" -eq 0 ] || fail "tiled_gemm.ptx: $tiles write prefetches, its next block's tile is 64 bytes on"
tiles=$(read_prefetches "$3")
[ "$tiles" -eq 0 ] || fail "tiled_gemm.ptx: $tiles read prefetches, its next block's tiles are 64 bytes on"
echo "block_prefetch.sh: ok ($rows write and $reads read prefetches)"
