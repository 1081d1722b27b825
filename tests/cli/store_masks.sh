#!/bin/sh
# Masked stores branched on their mask (codegen/store_masks.h): saxpy's `if (i < n) y[i] =`
# is vectorised as a masked store; with the pass, the store's mask is tested
# (`store.lanes`), a full mask stores plainly (`store.full`) and a partial one masked
# (`store.part`). MIMIC_STORE_MASKS=all runs the pass on any machine (by default only
# where there is no AVX-512); =0 turns it off, and the masked store is all there is.
# Behaviour: tests/cuda/store_masks.cu.
#   store_masks.sh MIMIC SAXPY_PTX
set -eu
mimic=$1
ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "store_masks.sh: $*" >&2; exit 1; }

MIMIC_QUICK_TIER=0 MIMIC_STORE_MASKS=all "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/on.ll"
MIMIC_QUICK_TIER=0 MIMIC_STORE_MASKS=0 "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/off.ll"
grep -q '@llvm.masked.store' "$out/off.ll" || fail "no masked store to begin with (the test no longer sees the case)"
! grep -q 'store.lanes' "$out/off.ll" || fail "MIMIC_STORE_MASKS=0 still tests the mask"
grep -q 'store.lanes = bitcast <[0-9]* x i1>' "$out/on.ll" || fail "the store's mask is not tested"
grep -q '^store.full' "$out/on.ll" || fail "no plain store for a full mask"
grep -A3 '^store.full' "$out/on.ll" | grep -q 'store <[0-9]* x float>' || fail "the full mask's block has no plain vector store"
grep -A8 '^store.part' "$out/on.ll" | grep -q '@llvm.masked.store' || fail "a partial mask's store is not masked"
echo "store_masks.sh: ok"
