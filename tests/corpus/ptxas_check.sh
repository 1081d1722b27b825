#!/usr/bin/env bash
# The printed PTX is valid PTX: NVIDIA's assembler accepts it.
#  1. nvcc's PTX for the project's CUDA programs at their lowest arch, compute_90 and
#     compute_120;
#  2. a sample of the toolkit libraries' own PTX modules (the smallest ones of each
#     library, at least 30 in all).
# Each module is printed by `mimic ptx print`, round-tripped, and assembled by ptxas for
# its target.   usage: ptxas_check.sh MIMIC CUDA_ROOT CUDA_TEST_DIR WORK_DIR
set -uo pipefail
mimic=$1
cuda=$2
programs=$3
work=$4
nvcc=$cuda/bin/nvcc
ptxas=$cuda/bin/ptxas
per_library=${MIMIC_PTXAS_SAMPLES_PER_LIBRARY:-6}

if [ ! -x "$ptxas" ] || [ ! -x "$nvcc" ]; then
  echo "ptxas or nvcc missing under $cuda: cannot check"
  exit 1
fi
rm -rf "$work"
mkdir -p "$work/nvcc" "$work/libs"
passed=0
failed=0
skipped=0

check() { # FILE ARCH
  local file=$1 arch=$2 printed=${1%.ptx}.printed.ptx
  if ! "$mimic" ptx print "$file" -o "$printed" 2> "$printed.err"; then
    echo "FAIL parse: $file"; head -5 "$printed.err"; failed=$((failed + 1)); return
  fi
  if ! "$mimic" ptx roundtrip "$file" > /dev/null 2> "$printed.err"; then
    echo "FAIL roundtrip: $file"; head -5 "$printed.err"; failed=$((failed + 1)); return
  fi
  # Only PTX the assembler takes as written can be held against the printer: modules of a
  # newer ISA than this ptxas, for instance, are skipped (and counted).
  if ! "$ptxas" -c -arch="$arch" "$file" -o /dev/null 2> /dev/null; then
    skipped=$((skipped + 1)); return
  fi
  if ! "$ptxas" -c -arch="$arch" "$printed" -o /dev/null 2> "$printed.err"; then
    echo "FAIL ptxas -arch=$arch: $printed"; head -5 "$printed.err"; failed=$((failed + 1)); return
  fi
  passed=$((passed + 1))
}

# nvcc's PTX for each program at its lowest arch (its `// nvcc-flags: -arch=sm_NN`, or 75),
# 90 and 120, or only at its architecture-specific target; built in parallel, then each
# module is checked.
jobs=${MIMIC_PTXAS_JOBS:-$(nproc)}
build_ptx() { # CU ARCH
  local out
  out="$work/nvcc/$(basename "$1" .cu).compute_$2.ptx"
  "$nvcc" -ptx -arch=compute_$2 "$1" -o "$out" 2> "$out.err" || echo "$1 $2" >> "$work/nvcc/failed"
}
export -f build_ptx
export work nvcc
for cu in "$programs"/*.cu; do
  min_arch=$(sed -n 's|^// nvcc-flags:.*-arch=sm_\([0-9]*\).*|\1|p' "$cu" | head -n 1)
  # A program for one architecture-specific target (arch=compute_100a) builds for it only.
  specific=$(sed -n 's|^// nvcc-flags:.*arch=compute_\([0-9]*[af]\).*|\1|p' "$cu" | head -n 1)
  if [ -n "$specific" ]; then echo "$cu $specific"; continue; fi
  for a in ${min_arch:-75} 90 120; do
    if [ -n "$min_arch" ] && [ "$a" -lt "$min_arch" ]; then continue; fi
    echo "$cu $a"
  done
done | sort -u | xargs -P "$jobs" -L 1 bash -c 'build_ptx "$@"' _
if [ -f "$work/nvcc/failed" ]; then
  while read -r cu a; do
    echo "FAIL nvcc -arch=compute_$a $cu"; failed=$((failed + 1))
  done < "$work/nvcc/failed"
fi
for out in "$work"/nvcc/*.ptx; do
  a=$(echo "$out" | sed -E 's/.*\.compute_([0-9]+[af]?)\.ptx$/\1/')
  check "$out" "sm_$a"
done

nvcc_passed=$passed
"$mimic" extract -o "$work/libs" "$cuda"/lib64/lib*.so.* > /dev/null
for lib in $(ls "$work/libs" | sed -E 's/\.so\..*//' | sort -u); do
  for f in $(ls -Sr "$work/libs/$lib".so.*.ptx | head -n "$per_library"); do
    target=$(grep -m1 -E '^\s*\.target' "$f" | sed -E 's/^\s*\.target\s+([a-z0-9_]+).*/\1/')
    check "$f" "$target"
  done
done
# Keep only failures' files: the extracted corpus is large.
rm -f "$work"/libs/*.ptx

echo "ptxas: $skipped modules skipped (the assembler rejects the original too)"
echo "$passed passed, $failed failed"
library_passed=$((passed - nvcc_passed))
echo "ptxas: $nvcc_passed nvcc modules and $library_passed library modules accepted after printing"
if [ "$library_passed" -lt 30 ]; then echo "FAILED: fewer than 30 library modules checked"; exit 1; fi
[ "$failed" -eq 0 ]
