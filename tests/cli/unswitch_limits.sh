#!/bin/sh
# Thread loops are unswitched on row-invariant conditions with Mimic's cost limits
# (codegen/row_unswitch.cpp), past LLVM's defaults: in tests/codegen/stencil_tile.ptx the
# interior test on y (`y > 0 && y + 1 < rows`) and the halo rows get loops of their own, so
# the kernel has more vector loops than with LLVM's limits, which have more than without
# the pass.
#   unswitch_limits.sh MIMIC STENCIL_TILE_PTX
set -eu
mimic=$1
fail() { echo "unswitch_limits.sh: $*" >&2; exit 1; }
loops() { "$mimic" compile --target cpu --emit llvm "$2" -o - | grep -c '^vector\.body' || true; }
ours=$(loops "$mimic" "$2")
llvm=$(MIMIC_LLVM_OPTIONS="-unswitch-threshold=50 -unswitch-num-initial-unscaled-candidates=8" loops "$mimic" "$2")
none=$(MIMIC_ROW_UNSWITCH=0 loops "$mimic" "$2")
[ "$llvm" -gt "$none" ] || fail "$llvm vector loops with LLVM's limits, $none without unswitching: expected more"
[ "$ours" -gt "$llvm" ] || fail "$ours vector loops with Mimic's limits, $llvm with LLVM's: expected more"
echo "unswitch_limits.sh: ok ($ours vector loops; $llvm with LLVM's limits, $none without the pass)"
