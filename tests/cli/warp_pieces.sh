#!/bin/sh
# A thread loop that goes through its row in warp pieces (codegen/warp_indices.h) runs at
# most 32 threads; left to the vectoriser, a small body got 16 lanes x 4 on AVX-512, whose
# vector body needs 64 threads, and every piece ran the scalar loop. WarpIndices asks for
# one warp per vector iteration on those loops (`llvm.loop.vectorize.width` 32 and
# `llvm.loop.interleave.count` 1 beside the thread loop's property), and the interchange
# passes the request on to the loops it makes from them. tests/codegen/block_scan.ptx goes
# in pieces after each barrier (`warp_totals[lane]`); saxpy.ptx has no warps and no such
# loop. Behaviour: every tests/cuda program with warp reductions.
#   warp_pieces.sh MIMIC BLOCK_SCAN_PTX SAXPY_PTX
set -eu
mimic=$1
fail() { echo "warp_pieces.sh: $*" >&2; exit 1; }

# Thread loops asking for one warp per iteration, in the IR the loop vectoriser is given.
one_warp_loops() {
  MIMIC_LLVM_OPTIONS="-print-before=loop-vectorize -print-module-scope" \
    "$mimic" compile --target cpu --emit llvm "$1" -o /dev/null 2>&1 |
    awk '
      /IR Dump Before/ { flush(); p = ""; i = ""; w = ""; n = 0 }
      /^![0-9]+ = !\{!"mimic.thread.loop"\}$/ { p = $1 }
      /^![0-9]+ = !\{!"llvm.loop.interleave.count", i32 1\}$/ { i = $1 }
      /^![0-9]+ = !\{!"llvm.loop.vectorize.width", i32 32\}$/ { w = $1 }
      /^![0-9]+ = distinct !\{/ { ids[n++] = $0 }
      function has(line, node) { return node != "" && (index(line, node ",") || index(line, node "}")) }
      function flush(  k) { for (k = 0; k < n; k++) if (has(ids[k], p) && has(ids[k], i) && has(ids[k], w)) count++ }
      END { flush(); print count + 0 }'
}

pieces=$(one_warp_loops "$2")
[ "$pieces" -ge 2 ] || fail "block_scan.ptx: $pieces thread loops in warp pieces ask for one warp per iteration"
plain=$(one_warp_loops "$3")
[ "$plain" -eq 0 ] || fail "saxpy.ptx: $plain thread loops ask for one warp per iteration, none goes in pieces"
echo "warp_pieces.sh: ok ($pieces loops)"
