#!/usr/bin/env bash
# The printed PTX is valid PTX: NVIDIA's assembler accepts it.
#  1. nvcc's PTX for the project's CUDA programs at compute_75 ... compute_120;
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
archs="75 80 86 89 90 100 120"
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

for cu in "$programs"/*.cu; do
  name=$(basename "$cu" .cu)
  # A program built for -arch=sm_NN (its `// nvcc-flags:` header) may need that arch.
  min_arch=$(sed -n 's|^// nvcc-flags:.*-arch=sm_\([0-9]*\).*|\1|p' "$cu" | head -n 1)
  for a in $archs; do
    if [ -n "$min_arch" ] && [ "$a" -lt "$min_arch" ]; then continue; fi
    out="$work/nvcc/$name.compute_$a.ptx"
    if ! "$nvcc" -ptx -arch=compute_$a "$cu" -o "$out" 2> "$out.err"; then
      echo "FAIL nvcc -arch=compute_$a $cu"; head -5 "$out.err"; failed=$((failed + 1)); continue
    fi
    check "$out" "sm_$a"
  done
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
