#!/usr/bin/env bash
# Every tests/ptx kernel file and every tests/cuda program's PTX (nvcc -ptx, with the
# program's `// nvcc-flags:`; also with -G for the `// variants: debug` ones) compiled by `mimic compile` into an AMDGPU code object for
# each target, and each code object checked with LLVM's object tools
# (check_code_object.py: AMDGPU ELF for the target, every kernel in the metadata with the
# launch's argument layout, its static LDS, wave32, no undefined symbols).
#   code_objects.sh MIMIC NVCC WORK_DIR [TARGET...]      (default: gfx1010 gfx1030 gfx1100 gfx1200 gfx1201)
# known_failures.txt lists inputs that cannot be translated yet ("cuda/NAME reason" or
# "ptx/NAME reason", optionally NAME:TARGET); a listed input that passes is an error, so
# the list stays honest. MIMIC_AMDGPU_JOBS compiles in parallel (default 2). Without nvcc
# (NVCC = none), only tests/ptx is checked.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tests=$(cd "$here/.." && pwd)
mimic=$1 nvcc=$2 work=$3
shift 3
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(gfx1010 gfx1030 gfx1100 gfx1200 gfx1201)
readelf=$(command -v llvm-readelf-22 || command -v llvm-readelf)
readobj=$(command -v llvm-readobj-22 || command -v llvm-readobj)
mkdir -p "$work/ptx"

# Inputs: name -> PTX file.
inputs=()
for f in "$tests"/ptx/*.ptx; do
  inputs+=("ptx/$(basename "$f" .ptx)=$f")
done
ptx_of() { # SOURCE NAME FLAGS: nvcc's PTX, rebuilt when the source or the flags change
  local src=$1 name=$2 flags=$3 out="$work/ptx/$2.ptx"
  if [ ! -s "$out" ] || [ "$src" -nt "$out" ] || [ "$(cat "$out.flags" 2> /dev/null)" != "$flags" ]; then
    # shellcheck disable=SC2086
    "$nvcc" -ptx $flags -o "$out" "$src" 2> "$out.log" || { echo "FAIL cuda/$name: nvcc -ptx $flags failed"; head -3 "$out.log"; return 1; }
    echo "$flags" > "$out.flags"
  fi
  inputs+=("cuda/$name=$out")
}
if [ "$nvcc" != none ] && [ -x "$nvcc" ]; then
  for src in "$tests"/cuda/*.cu; do
    name=$(basename "$src" .cu)
    flags=$(sed -n 's|^// nvcc-flags: *||p' "$src" | head -n 1 | sed 's/-l[a-z]*//g')
    ptx_of "$src" "$name" "$flags"
    # Device-debug builds (-G) keep barriers and warp operations in called functions.
    if grep -q '^// variants:.*debug' "$src"; then
      ptx_of "$src" "$name-G" "-G $flags"
    fi
  done
fi

known_reason() { # NAME TARGET
  awk -v n="$1" -v t="$1:$2" '!/^#/ && ($1 == n || $1 == t) { $1 = ""; sub(/^ /, ""); print; exit }' \
    "$here/known_failures.txt"
}

check_one() { # TARGET NAME PTX
  local target=$1 name=$2 ptx=$3
  local out="$work/$target/${name//\//_}"
  local reason verdict
  reason=$(known_reason "$name" "$target")
  if "$mimic" compile --target "$target" "$ptx" -o "$out.hsaco" 2> "$out.log" &&
     "$mimic" compile --target "$target" --emit kernels "$ptx" -o "$out.kernels" 2>> "$out.log" &&
     python3 "$here/check_code_object.py" "$out.hsaco" "$target" "$out.kernels" "$readelf" "$readobj" > "$out.check"; then
    if [ -n "$reason" ]; then
      verdict="UNEXPECTED PASS $name [$target] (listed: $reason)"
    else
      verdict="PASS $name [$target] $(sed -n 's/^ok //p' "$out.check")"
    fi
  elif [ -n "$reason" ]; then
    verdict="KNOWN $name [$target]: $reason"
  else
    verdict="FAIL $name [$target]: $(cat "$out.log" "$out.check" 2> /dev/null | head -c 600)"
  fi
  echo "$verdict"
}
export -f check_one known_reason
export mimic work here readelf readobj

for t in "${targets[@]}"; do mkdir -p "$work/$t"; done
results="$work/results.txt"
for t in "${targets[@]}"; do
  for entry in "${inputs[@]}"; do
    printf '%s\0%s\0%s\0' "$t" "${entry%%=*}" "${entry#*=}"
  done
done | xargs -0 -n 3 -P "${MIMIC_AMDGPU_JOBS:-2}" bash -c 'check_one "$0" "$1" "$2"' > "$results"

grep -v '^PASS' "$results" | sort
status=0
for t in "${targets[@]}"; do
  pass=$(grep -c "^PASS .* \[$t\]" "$results")
  kernels=$(grep "^PASS .* \[$t\]" "$results" | awk '{ s += $(NF-1) } END { print s + 0 }')
  known=$(grep -c "^KNOWN .* \[$t\]" "$results")
  fail=$(grep -c "^\(FAIL\|UNEXPECTED\) .* \[$t\]" "$results")
  echo "$t: ${#inputs[@]} inputs, $pass valid code objects ($kernels kernels), $known known failures, $fail failures"
  [ "$fail" -eq 0 ] || status=1
done
exit $status
