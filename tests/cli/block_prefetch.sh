#!/bin/sh
# Stores whose address moves by a page or more from one block to the next are preceded by
# a prefetch-for-write of the next block's line, and loads by a prefetch into L2
# (codegen/block_prefetch.h). tests/codegen/row_scale.ptx reads and writes one row per
# block (a row's width apart, known at run time: the prefetch's distance is chosen in the
# preheader); tiled_gemm.ptx's next block reads and writes the next 16 columns, 64 bytes
# on, where the hardware prefetcher is, so it gets none; MIMIC_STORE_PREFETCH=0 and
# MIMIC_LOAD_PREFETCH=0 turn each kind off. block_scan.ptx (bench scan's kernels): a
# thread's four items are four gathers, and the tile is the block's, 4 KiB on for the next
# block: one read prefetch site serves all four gathers, the joined run of its stores gets
# write prefetches, and add_tile_offsets' `out[i] += x` gets write prefetches only (they
# serve the loads too). halo_tile.ptx (a 32x8 tile) for its block shape: the next block is
# 128 bytes on, which SCEV sees only with the extension of x = 32 * %ctaid.x + %tid.x taken
# through the sum: no prefetch (there were 8, each at a stride of 0 when it ran).
# scale_wide.ptx (y[i] = 2 * x[i]): its next block's loads are a quarter page on for
# 256-thread blocks, where a grid-stride neighbour's lines want prefetching: read
# prefetches; for 128-thread blocks (512 bytes on) none.
# Behaviour: every tests/cuda program.
#   block_prefetch.sh MIMIC ROW_SCALE_PTX TILED_GEMM_PTX BLOCK_SCAN_PTX HALO_TILE_PTX SCALE_WIDE_PTX
set -eu
# The code read here is an AVX-512 machine's (16-lane vectors, the vectoriser's gathers and
# scatters) on any machine: `mimic compile --cpu sapphirerapids` with 512-bit vectors.
export MIMIC_VECTOR_BITS=512
mimic=$1
fail() { echo "block_prefetch.sh: $*" >&2; exit 1; }

# Write prefetches (llvm.prefetch with rw = 1, into L1) and read prefetches (rw = 0, into
# L2) of the next block's lines in the optimised IR.
prefetches() {
  "$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$2" -o - | grep -c "call void @llvm.prefetch.p0(ptr %next.block.line[0-9]*, $1, i32 1)" || true
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

# Prefetch sites (the first line's prefetch of each) per kernel of block_scan.ptx:
# "KERNEL rw" lines.
sites() {
  "$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$4" -o - |
    awk '/^define/ { k = $3 } /call void @llvm.prefetch.p0\(ptr %next.block.line[0-9]*, i32 [01], / { print k, $0 }' |
    sed -n 's/^@\(mimic_kernel_[0-9]*\)(.*ptr %next.block.line[0-9]*, i32 \([01]\),.*/\1 \2/p'
}
count() { printf '%s\n' "$1" | grep -c "^$2\$" || true; }
scan=$(sites "$@")
[ "$(count "$scan" 'mimic_kernel_0 0')" -eq 1 ] || fail "block_scan.ptx scan_tiles: want one read prefetch site for its four gathers, got: $scan"
[ "$(count "$scan" 'mimic_kernel_0 1')" -ge 1 ] || fail "block_scan.ptx scan_tiles: no write prefetch of the next tile's run, got: $scan"
[ "$(count "$scan" 'mimic_kernel_2 0')" -eq 0 ] || fail "block_scan.ptx add_tile_offsets: read prefetches beside the write prefetches, got: $scan"
[ "$(count "$scan" 'mimic_kernel_2 1')" -ge 1 ] || fail "block_scan.ptx add_tile_offsets: no write prefetch, got: $scan"
scan=$(MIMIC_STORE_PREFETCH=0 sites "$@")
[ "$(count "$scan" 'mimic_kernel_2 0')" -ge 1 ] || fail "block_scan.ptx add_tile_offsets with MIMIC_STORE_PREFETCH=0: no read prefetch, got: $scan"
halo=$("$mimic" compile --target cpu --cpu sapphirerapids --block 32,8 --emit llvm "$5" -o - |
  grep -c 'call void @llvm.prefetch.p0(ptr %next.block.line' || true)
[ "$halo" -eq 0 ] || fail "halo_tile.ptx for 32x8: $halo prefetches, its next block is 128 bytes on"
quarter() { # BLOCK, then the arguments
  "$mimic" compile --target cpu --cpu sapphirerapids --block "$1" --emit llvm "$7" -o - |
    grep -c 'call void @llvm.prefetch.p0(ptr %next.block.line[0-9]*, i32 0, i32 2, i32 1)' || true
}
wide=$(quarter 256 "$@")
[ "$wide" -ge 1 ] || fail "scale_wide.ptx for 256 threads: no read prefetch of the next block's kilobyte"
narrow=$(quarter 128 "$@")
[ "$narrow" -eq 0 ] || fail "scale_wide.ptx for 128 threads: $narrow read prefetches, its next block is 512 bytes on"
echo "block_prefetch.sh: ok ($rows write and $reads read prefetches)"
