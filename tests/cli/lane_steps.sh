#!/bin/sh
# Vectors of thread indices put together lane by lane (`t`, `t + 1`..`t + 4` through a
# shuffle, `t + 5`..`t + 7` inserted as scalars: what the vectoriser leaves where it stored
# lanes one by one) become one add of t's splat and <0..7> (codegen/lane_steps.h:
# `lane.steps`). halo_tile.ptx compiled for an AVX2 CPU (`--cpu znver3`, no scatter);
# MIMIC_LANE_STEPS=0 turns the pass off and the lane-by-lane build is back, so the test
# sees the pass itself. Behaviour: every tests/cuda program on an AVX2 machine.
#   lane_steps.sh MIMIC HALO_TILE_PTX
set -eu
mimic=$1
ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "lane_steps.sh: $*" >&2; exit 1; }
export MIMIC_VECTOR_BITS=
"$mimic" compile --target cpu --cpu znver3 --emit llvm "$ptx" -o "$out/on.ll"
MIMIC_LANE_STEPS=0 "$mimic" compile --target cpu --cpu znver3 --emit llvm "$ptx" -o "$out/off.ll"
build='insertelement <8 x i32> %[^,]*, i32 %[^,]*, i64 7'
grep -q "$build" "$out/off.ll" || fail "no lane-by-lane build to begin with (the test no longer sees the case)"
! grep -q 'lane.steps' "$out/off.ll" || fail "MIMIC_LANE_STEPS=0 still adds steps"
grep -q 'lane.steps[0-9]* = add <8 x i32> %lane.base.splat[0-9]*, <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>' "$out/on.ll" ||
  fail "no add of a splat and <0..7>"
[ "$(grep -c "$build" "$out/on.ll" || true)" -lt "$(grep -c "$build" "$out/off.ll")" ] ||
  fail "as many lane-by-lane builds as without the pass"
echo "lane_steps.sh: ok"
