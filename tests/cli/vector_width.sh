#!/bin/sh
# The vector width kernels are compiled for (backends/cpu/vector_width.h): 512-bit on
# AVX-512 CPUs outside the Skylake-SP family, LLVM's choice elsewhere; MIMIC_VECTOR_BITS
# overrides it, and the JIT cache keeps one entry per width.
#   tests/codegen/saxpy.ptx: one thread loop of f32 loads, an fma and a store, which the
#   vectoriser widens to the preferred width.
#   vector_width.sh MIMIC SAXPY_PTX
set -eu
mimic=$1 ptx=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "vector_width.sh: $*" >&2; exit 1; }

compile() { # [env...]: the optimised IR in $out/k.ll, standard error in $out/err
  env "$@" "$mimic" compile --target cpu --emit llvm "$ptx" -o "$out/k.ll" 2>"$out/err"
}
# The widths asked for, on an AVX-512 CPU whatever this one is (`--cpu`).
compile_avx512() { env "$@" "$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$ptx" -o "$out/k.ll" 2>"$out/err"; }
attribute() { grep -o '"prefer-vector-width"="[0-9]*"' "$out/k.ll" | sort -u | tr -d '"' | sed 's/.*=//'; }

compile_avx512 MIMIC_VECTOR_BITS=256
[ "$(attribute)" = 256 ] || fail "MIMIC_VECTOR_BITS=256: kernel not marked for 256-bit vectors"
grep -q '<8 x float>' "$out/k.ll" || fail "MIMIC_VECTOR_BITS=256: no 8-lane f32 vectors"
! grep -q '<16 x float>' "$out/k.ll" || fail "MIMIC_VECTOR_BITS=256: 16-lane f32 vectors"

compile_avx512 MIMIC_VECTOR_BITS=512
[ "$(attribute)" = 512 ] || fail "MIMIC_VECTOR_BITS=512: kernel not marked for 512-bit vectors"
grep -q '<16 x float>' "$out/k.ll" || fail "MIMIC_VECTOR_BITS=512: no 16-lane f32 vectors"

compile MIMIC_VECTOR_BITS=300
grep -q 'MIMIC_VECTOR_BITS=300 is not 256 or 512' "$out/err" || fail "MIMIC_VECTOR_BITS=300: no warning"

# The default is what `mimic doctor` reports, and on a CPU with AVX-512 (F, BW, VL) it is
# 512 bits unless doctor names a Skylake-SP-family core.
compile MIMIC_VECTOR_BITS=
doctor=$(env MIMIC_VECTOR_BITS= "$mimic" doctor 2>&1 | grep 'CPU backend' || true)
case $doctor in
*"kernels use 512-bit vectors"*) [ "$(attribute)" = 512 ] || fail "doctor says 512-bit, the kernel is not marked" ;;
*"kernels use LLVM's vector width"*)
  [ -z "$(attribute)" ] || fail "doctor says LLVM's width, the kernel is marked $(attribute)"
  if grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo; then
    case $doctor in
    *skylake-avx512* | *cascadelake* | *cooperlake*) ;;
    *) fail "AVX-512 CPU outside the Skylake-SP family left at LLVM's width: $doctor" ;;
    esac
  fi
  ;;
*) fail "mimic doctor does not say which vector width kernels use: $doctor" ;;
esac

# One cache entry per width: warming with the other width compiles again.
entries() { find "$out/cache" -name '*.mco' | wc -l; }
MIMIC_CACHE_DIR=$out/cache MIMIC_VECTOR_BITS=256 "$mimic" cache warm "$ptx" >/dev/null 2>&1
one=$(entries)
MIMIC_CACHE_DIR=$out/cache MIMIC_VECTOR_BITS=512 "$mimic" cache warm "$ptx" >/dev/null 2>&1
[ "$(entries)" -gt "$one" ] || fail "the JIT cache does not key on the vector width ($one entries, then $(entries))"
echo "vector_width.sh: ok"
