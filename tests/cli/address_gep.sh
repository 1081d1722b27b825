#!/bin/sh
# Addresses computed as integers become getelementptrs before the vectoriser
# (codegen/address_gep.h), also in a thread loop without a preheader yet (unswitched on a
# row-invariant bound test): every load of tests/codegen/stencil_direct.ptx, in[i + cols]
# too, is a vector load, none a gather.
#   address_gep.sh MIMIC STENCIL_DIRECT_PTX
set -eu
mimic=$1
fail() { echo "address_gep.sh: $*" >&2; exit 1; }
ir=$("$mimic" compile --target cpu --emit llvm "$2" -o -)
loads=$(echo "$ir" | grep -c 'call <[0-9]* x float> @llvm.masked.load' || true)
gathers=$(echo "$ir" | grep -c 'call <[0-9]* x float> @llvm.masked.gather' || true)
[ "$loads" -ge 5 ] || fail "$loads vector loads, expected the 5 of the stencil at least"
[ "$gathers" -eq 0 ] || fail "$gathers gathers of consecutive floats"
echo "address_gep.sh: ok ($loads vector loads, no gather)"
