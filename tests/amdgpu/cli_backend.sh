#!/usr/bin/env bash
# `mimic run --backend amdgpu` (or MIMIC_BACKEND=amdgpu) with no usable AMD GPU says why and
# fails without starting the program; with one (the fake HIP runtime) the program runs;
# `--backend cpu` needs no HIP at all.
#   cli_backend.sh MIMIC FAKE_HIP_LIBRARY
set -u
mimic=$1
fake=$2
failed=0
fail() { echo "FAIL: $*"; failed=1; }

expect() { # STATUS-WANTED TEXT-WANTED ENV... -- ARGS...: runs `mimic run ARGS` with ENV
  local want_status=$1 want_text=$2
  shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  local out status
  out=$(env "${envs[@]}" "$mimic" run "$@" 2>&1)
  status=$?
  if [ "$want_status" = nonzero ]; then
    [ $status -ne 0 ] || fail "mimic run $* (${envs[*]}) exited 0"
  elif [ $status -ne "$want_status" ]; then
    fail "mimic run $* (${envs[*]}) exited $status, not $want_status: $out"
  fi
  if [ -n "$want_text" ] && ! grep -qF -- "$want_text" <<< "$out"; then
    fail "mimic run $* (${envs[*]}) did not say: $want_text; it said: $out"
  fi
}

no_hip=/nonexistent/libamdhip64.so.7
expect 1 "mimic run: no AMD GPU available: HIP runtime not found: tried $no_hip" \
  MIMIC_HIP_LIBRARY=$no_hip -- --backend amdgpu -- sh -c 'echo started'
expect 1 "mimic run: no AMD GPU available: HIP runtime not found" \
  MIMIC_HIP_LIBRARY=$no_hip MIMIC_BACKEND=amdgpu -- -- sh -c 'echo started'
expect 1 "no supported AMD GPU: HIP device 0 (AMD Radeon VII): gfx906 is not a target Mimic generates code for" \
  MIMIC_HIP_LIBRARY="$fake" FAKE_HIP_DEVICES=gfx906:sramecc+:xnack- -- --backend amdgpu -- sh -c 'echo started'
expect 1 "finds no GPU: hipInit: HIP error 100: no ROCm-capable device is detected" MIMIC_HIP_LIBRARY="$fake" FAKE_HIP_DEVICES= -- --backend amdgpu -- true
expect 0 "started" MIMIC_HIP_LIBRARY="$fake" FAKE_HIP_DEVICES=gfx1100 -- --backend amdgpu -- sh -c 'echo started'
expect 0 "started" MIMIC_HIP_LIBRARY=$no_hip -- --backend cpu -- sh -c 'echo started'
expect 0 "started" MIMIC_HIP_LIBRARY=$no_hip MIMIC_BACKEND=amdgpu -- --backend cpu -- sh -c 'echo started'
expect 2 "unknown backend 'rocm' (auto, cpu or amdgpu)" -- --backend rocm -- true
[ $failed -eq 0 ] && echo "mimic run --backend: all cases as expected"
exit $failed
