#!/bin/sh
# PTX prefetches in a thread loop do not keep it scalar (codegen/prefetch_calls.h): the
# loop of tests/codegen/prefetch_ahead.ptx is vectorised, its prefetches are llvm.prefetch
# again (none of the vectoriser's stand-in calls is left), and 16 threads reading 16
# consecutive floats ahead prefetch about one line each, not one prefetch per thread.
# Behaviour (results unchanged): tests/cuda/prefetch_ahead.cu.
#   vector_prefetch.sh MIMIC PREFETCH_AHEAD_PTX
set -eu
# The code read here is an AVX-512 machine's (16-lane vectors, the vectoriser's gathers and
# scatters) on any machine: `mimic compile --cpu sapphirerapids` with 512-bit vectors.
export MIMIC_VECTOR_BITS=512
mimic=$1
fail() { echo "vector_prefetch.sh: $*" >&2; exit 1; }
ir=$("$mimic" compile --target cpu --cpu sapphirerapids --emit llvm "$2" -o -)
echo "$ir" | grep -q 'call <[0-9]* x float> @llvm.masked.load' || fail "the thread loop was not vectorised"
left=$(echo "$ir" | grep -c 'call void @mimic\.prefetch' || true)
[ "$left" -eq 0 ] || fail "$left prefetch stand-in calls are left"
l2=$(echo "$ir" | grep -c 'call void @llvm.prefetch.p0(ptr .*, i32 0, i32 2, i32 1)' || true)
l1=$(echo "$ir" | grep -c 'call void @llvm.prefetch.p0(ptr .*, i32 0, i32 3, i32 1)' || true)
[ "$l2" -ge 1 ] || fail "no L2 prefetch"
[ "$l1" -ge 1 ] || fail "no L1 prefetch"
# The widest vector's L2 prefetches: one per line of its lanes plus its last lane.
lanes=$(echo "$ir" | grep -o 'call <[0-9]* x float> @llvm.masked.load' | grep -o '<[0-9]*' | tr -d '<' | sort -n | tail -1)
[ "$l2" -le $((lanes / 16 * 2 + 2)) ] || fail "$l2 L2 prefetches for vectors of $lanes lanes"
echo "vector_prefetch.sh: ok ($l2 L2 and $l1 L1 prefetches, $lanes lanes)"
