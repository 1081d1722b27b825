#!/bin/sh
# A store to one address made by some threads of a thread loop only is vectorised as a
# scatter to a splat of that address; codegen/uniform_scatter.h stores the last active
# lane's element once instead (`scatter.last`). On tests/codegen/halo_tile.ptx (see
# tests/cli/parallel_loops.sh): `if (threadIdx.x == 0 && x > 0) tile[ty][0] = in[i - 1]`
# and the threadIdx.x == 31 halo; on tests/codegen/warp_sum.ptx (see warp_chain.sh):
# `if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v`, a warp at a time.
# There the stored v is the warp's reduced value, which every lane reads from one slot (a
# gather from a splat address under the scatter's mask): it is loaded once
# (`scatter.loaded`) and no gather is left. MIMIC_UNIFORM_SCATTER=0 turns the pass off:
# the scatters are back, so the test sees the pass itself. Without AVX-512 (`--cpu znver3`)
# the vectoriser stores such lanes one by one, each under a test of its mask bit (a chain
# of `pred.store.if` blocks); halo_tile's chains to one address become one store of the
# highest set lane (`scatter.one`), whose element, loaded under the same mask, is loaded
# alone (`scatter.lane.loaded`). warp_sum's lane 0 of each warp stores the warp's value, which
# the vectoriser reads from one slot in each lane's block (a warp at a time): the chain is
# one store of one load (`scatter.same.loaded`). Behaviour:
# tests/cuda/uniform_stores.cu, stencil2d.cu, reduce_warp.cu.
#   uniform_scatter.sh MIMIC HALO_TILE_PTX WARP_SUM_PTX
set -eu
# The code read here is an AVX-512 machine's (16-lane vectors, the vectoriser's gathers and
# scatters) on any machine: `mimic compile --cpu sapphirerapids` with 512-bit vectors.
export MIMIC_VECTOR_BITS=512
mimic=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "uniform_scatter.sh: $*" >&2; exit 1; }

for ptx in "$@"; do
  name=$(basename "$ptx" .ptx)
  "$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$ptx" -o "$out/on.ll"
  MIMIC_UNIFORM_SCATTER=0 "$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$ptx" -o "$out/off.ll"
  grep -q 'masked.scatter.*<16 x ptr> align [0-9]* %broadcast.splat' "$out/off.ll" ||
    fail "$name: no scatter to a splat address to begin with (the test no longer sees the case)"
  ! grep -q 'masked.scatter.*<16 x ptr> align [0-9]* %broadcast.splat' "$out/on.ll" ||
    fail "$name: a scatter to one address is left"
  case $name in
  warp_sum)
    grep -q 'scatter.loaded' "$out/on.ll" || fail "$name: the warp's value is not loaded once"
    ! grep -q 'call <[0-9]* x float> @llvm.masked.gather' "$out/on.ll" || fail "$name: a gather of one address is left"
    grep -q 'call <[0-9]* x float> @llvm.masked.gather' "$out/off.ll" ||
      fail "$name: no gather of one address to begin with (the test no longer sees the case)" ;;
  *) grep -q 'scatter.last' "$out/on.ll" || fail "$name: no store of the last active lane" ;;
  esac
done
halo=$1 warp_sum=$2
MIMIC_VECTOR_BITS= "$mimic" compile --target cpu --cpu znver3 --emit llvm "$halo" -o "$out/avx2.ll"
MIMIC_VECTOR_BITS= MIMIC_UNIFORM_SCATTER=0 "$mimic" compile --target cpu --cpu znver3 --emit llvm "$halo" -o "$out/avx2_off.ll"
grep -q '^pred.store.if' "$out/avx2_off.ll" || fail "znver3: no lane-by-lane stores to begin with (the test no longer sees the case)"
grep -q '^scatter.one' "$out/avx2.ll" || fail "znver3: the lane-by-lane stores to one address are not one store"
# The halo cell stored is in[i - 1] (in[i + 1]), loaded under the same one-lane mask: that
# lane's element is loaded alone, not the vector and then its lane picked.
grep -q 'scatter.lane.loaded' "$out/avx2.ll" || fail "znver3: the stored lane's element is not loaded alone"
MIMIC_VECTOR_BITS= "$mimic" compile --target cpu --cpu znver3 --emit llvm "$warp_sum" -o "$out/avx2_sum.ll"
MIMIC_VECTOR_BITS= MIMIC_UNIFORM_SCATTER=0 "$mimic" compile --target cpu --cpu znver3 --emit llvm "$warp_sum" -o "$out/avx2_sum_off.ll"
grep -q 'scatter.same.loaded' "$out/avx2_sum.ll" || fail "znver3: lane 0's stores of one slot's value are not one store"
[ "$(grep -c '^pred.store.if' "$out/avx2_sum.ll")" -lt "$(grep -c '^pred.store.if' "$out/avx2_sum_off.ll")" ] ||
  fail "znver3: no lane-by-lane store fewer with the pass"
echo "uniform_scatter.sh: ok"
