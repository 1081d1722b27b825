#!/usr/bin/env bash
# nvcc's container variants are all read: compression modes (ZSTD, LZ4, none, compressed
# SASS), -rdc builds (PTX in __nv_relfatbin), arch- and family-specific targets, several
# -gencode targets.   usage: nvcc_variants.sh MIMIC CUDA_ROOT PROGRAM.cu WORK_DIR
set -uo pipefail
mimic=$1
nvcc=$2/bin/nvcc
program=$3
work=$4
rm -rf "$work"
mkdir -p "$work"
passed=0
failed=0

# variant name | nvcc flags | text `mimic info` must print (a grep -E pattern)
cases=(
  "default||ptx +sm_75 +zstd"
  "speed|-compress-mode=speed|ptx +sm_75 +lz4"
  "none|--no-compress|ptx +sm_75 +none"
  "compress-all|-Xfatbin -compress-all|elf +sm_75 +zstd"
  "rdc|-rdc=true|in __nv_relfatbin"
  "arch-specific|-arch=sm_90a|ptx +sm_90a .*arch-specific"
  "family|-arch=sm_100f|ptx +sm_100f .*family-specific"
  "gencode|-gencode arch=compute_80,code=sm_80 -gencode arch=compute_120,code=compute_120|ptx +sm_120"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name flags expect <<< "$c"
  exe="$work/$name"
  # shellcheck disable=SC2086
  if ! "$nvcc" $flags -o "$exe" "$program" 2> "$exe.err"; then
    echo "FAIL $name: nvcc $flags"; head -3 "$exe.err"; failed=$((failed + 1)); continue
  fi
  out=$("$mimic" info "$exe" 2>&1)
  if ! echo "$out" | grep -qE "$expect"; then
    echo "FAIL $name: expected /$expect/ in:"; echo "$out"; failed=$((failed + 1)); continue
  fi
  if ! "$mimic" info --check "$exe" > "$exe.check" 2>&1; then
    echo "FAIL $name: PTX does not check"; cat "$exe.check"; failed=$((failed + 1)); continue
  fi
  passed=$((passed + 1))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
