#!/bin/sh
# Gathers and scatters get a vector load or store beside them for when their lanes turn
# out to be consecutive elements (codegen/contiguous_gathers.h). tests/codegen/
# bitonic_step.ptx (tests/cli/thread_masks.sh has its source) gathers and scatters its
# compare-exchange pairs: each gather gets a masked load and each scatter a masked store
# from lane 0's address, behind a test of the lanes, and the gather's value is the one of
# whichever ran; MIMIC_CONTIGUOUS_GATHERS=0 leaves the gathers and scatters alone.
# Behaviour: tests/cuda/bitonic_sort.cu (its steps of stride 16 or more line up, the
# others do not).
#   contiguous_gathers.sh MIMIC PTX
set -eu
# The code read here is an AVX-512 machine's (16-lane vectors, the vectoriser's gathers and
# scatters) on any machine: `mimic compile --cpu sapphirerapids` with 512-bit vectors.
export MIMIC_VECTOR_BITS=512
mimic=$1 ptx=$2
fail() { echo "contiguous_gathers.sh: $*" >&2; exit 1; }
count() { # KIND [env...]: calls of llvm.masked.KIND in the optimised IR
  kind=$1
  shift
  env "$@" "$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$ptx" -o - |
    grep -c "= .*call .*@llvm\.masked\.$kind\.\|^ *\(tail \)\?call void @llvm\.masked\.$kind\." || true
}
gathers=$(count gather) scatters=$(count scatter) loads=$(count load) stores=$(count store)
[ "$gathers" -ge 1 ] && [ "$scatters" -ge 1 ] || fail "no gathers ($gathers) or scatters ($scatters) to test"
[ "$loads" -eq "$gathers" ] || fail "$gathers gathers but $loads masked loads beside them"
[ "$stores" -eq "$scatters" ] || fail "$scatters scatters but $stores masked stores beside them"
joined=$("$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$ptx" -o - | grep -c '%contiguous.joined[0-9]* = phi' || true)
[ "$joined" -eq "$gathers" ] || fail "$gathers gathers but $joined joined values"
[ "$(count load MIMIC_CONTIGUOUS_GATHERS=0)" -eq 0 ] || fail "MIMIC_CONTIGUOUS_GATHERS=0 left masked loads"
[ "$(count store MIMIC_CONTIGUOUS_GATHERS=0)" -eq 0 ] || fail "MIMIC_CONTIGUOUS_GATHERS=0 left masked stores"
[ "$(count gather MIMIC_CONTIGUOUS_GATHERS=0)" -eq "$gathers" ] || fail "MIMIC_CONTIGUOUS_GATHERS=0 changed the gathers"
echo "contiguous_gathers.sh: ok ($gathers gathers, $scatters scatters)"
