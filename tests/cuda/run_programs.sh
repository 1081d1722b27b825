#!/usr/bin/env bash
# Builds every tests/cuda/*.cu with nvcc and runs it under `mimic run`; every program
# checks its own results and exits 0 when they are right.
#   run_programs.sh MIMIC NVCC WORK_DIR [PROGRAM...]
# Headers a program may carry, each on a line of its own:
#   // nvcc-flags: FLAGS     extra nvcc flags, e.g. -arch=sm_80
#   // variants: all         also build with --default-stream per-thread, -cudart shared and
#                            -rdc=true (the programs about the runtime API); default only otherwise
#   // variants: debug       also build with -G (device debug: nothing is inlined, so barriers
#                            and warp operations sit in called functions)
#   // expect-output: FILE   its standard output must equal tests/cuda/FILE (device printf)
#   // mimic-env: VAR=VALUE  run it with this environment setting (e.g. MIMIC_CHECK=memory)
#   // expect-stderr: TEXT   its standard error must contain TEXT (Mimic's diagnostics)
#   // forbid-stderr: TEXT   its standard error must not contain TEXT
# Programs build and run in parallel (MIMIC_CUDA_JOBS, default nproc). Executables stay in
# WORK_DIR and are rebuilt when the source, check.h or the flags change.
# known_failures.txt lists what may fail, and why; listed programs that pass are reported.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

header() { # FILE KEY: the value of the first `// KEY: value` line
  sed -n "s|^// $2: *||p" "$1" | head -n 1
}

variant_flags() {
  case $1 in
    default) echo "" ;;
    ptds) echo "--default-stream per-thread" ;;
    shared) echo "-cudart shared" ;;
    rdc) echo "-rdc=true" ;;
    debug) echo "-G" ;;
  esac
}

known_reason() { # NAME VARIANT
  awk -v n="$1" -v v="$1:$2" '!/^#/ && ($1 == n || $1 == v) { $1 = ""; sub(/^ /, ""); print; exit }' \
    "$here/known_failures.txt"
}

# One program in one variant: build if needed, run, and write the verdict to $exe.result
# as "PASS", "KNOWN" or "FAIL|UNEXPECTED PASS" followed by lines that say why.
run_one() { # MIMIC NVCC WORK NAME VARIANT
  local mimic=$1 nvcc=$2 work=$3 name=$4 variant=$5
  local src="$here/$name.cu" exe="$work/$name.$variant"
  local flags status reason expected
  flags="$(variant_flags "$variant") $(header "$src" nvcc-flags)"
  if [ ! -x "$exe" ] || [ "$src" -nt "$exe" ] || [ "$here/check.h" -nt "$exe" ] ||
     [ "$(cat "$exe.flags" 2> /dev/null)" != "$flags" ]; then
    rm -f "$exe"
    # shellcheck disable=SC2086
    if ! "$nvcc" $flags -o "$exe" "$src" 2> "$exe.build.log"; then
      { echo "FAIL $name [$variant]: nvcc $flags failed"; head -5 "$exe.build.log"; } > "$exe.result"
      return
    fi
    echo "$flags" > "$exe.flags"
  fi
  local env_setting
  env_setting=$(header "$src" mimic-env)
  # shellcheck disable=SC2086
  env ${env_setting} LD_LIBRARY_PATH="$(dirname "$nvcc")/../lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout "${MIMIC_CUDA_TIMEOUT:-120}" "$mimic" run -- "$exe" > "$exe.stdout" 2> "$exe.stderr"
  status=$?
  local wanted_stderr
  wanted_stderr=$(header "$src" expect-stderr)
  if [ $status -eq 0 ] && [ -n "$wanted_stderr" ] && ! grep -qF -- "$wanted_stderr" "$exe.stderr"; then
    echo "standard error does not contain: $wanted_stderr" >> "$exe.stderr"
    status=1
  fi
  local forbidden_stderr
  forbidden_stderr=$(header "$src" forbid-stderr)
  if [ $status -eq 0 ] && [ -n "$forbidden_stderr" ] && grep -qF -- "$forbidden_stderr" "$exe.stderr"; then
    echo "standard error contains: $forbidden_stderr" >> "$exe.stderr"
    status=1
  fi
  expected=$(header "$src" expect-output)
  if [ $status -eq 0 ] && [ -n "$expected" ] && ! cmp -s "$here/$expected" "$exe.stdout"; then
    diff "$here/$expected" "$exe.stdout" | head -10 >> "$exe.stderr"
    echo "output differs from $expected" >> "$exe.stderr"
    status=1
  fi
  reason=$(known_reason "$name" "$variant")
  if [ $status -eq 0 ] && [ -n "$reason" ]; then
    echo "UNEXPECTED PASS $name [$variant]: remove it from known_failures.txt ($reason)" > "$exe.result"
  elif [ $status -eq 0 ]; then
    echo PASS > "$exe.result"
  elif [ -n "$reason" ] && [ $status -lt 124 ]; then
    echo KNOWN > "$exe.result"
  else
    { echo "FAIL $name [$variant]: exit status $status"; tail -n 5 "$exe.stdout" "$exe.stderr"; } \
      > "$exe.result"
  fi
}

if [ "${1:-}" = --one ]; then
  shift
  run_one "$@"
  exit 0
fi

mimic=$1
nvcc=$2
work=$3
shift 3
mkdir -p "$work"
programs=("$@")
if [ ${#programs[@]} -eq 0 ]; then
  for f in "$here"/*.cu; do programs+=("$(basename "$f" .cu)"); done
fi
jobs=()
for name in "${programs[@]}"; do
  if [ ! -f "$here/$name.cu" ]; then echo "no program $here/$name.cu"; exit 1; fi
  jobs+=("$name default")
  case "$(header "$here/$name.cu" variants)" in
    all) jobs+=("$name ptds" "$name shared" "$name rdc") ;;
    debug) jobs+=("$name debug") ;;
  esac
done
for job in "${jobs[@]}"; do
  read -r name variant <<< "$job"
  rm -f "$work/$name.$variant.result"
done
printf '%s\n' "${jobs[@]}" |
  xargs -P "${MIMIC_CUDA_JOBS:-$(nproc)}" -L 1 "$0" --one "$mimic" "$nvcc" "$work"

passed=0
failed=0
known=0
for job in "${jobs[@]}"; do
  read -r name variant <<< "$job"
  result="$work/$name.$variant.result"
  case $(head -n 1 "$result" 2> /dev/null) in
    PASS) passed=$((passed + 1)) ;;
    KNOWN) known=$((known + 1)) ;;
    "") echo "FAIL $name [$variant]: no result"; failed=$((failed + 1)) ;;
    *) cat "$result"; failed=$((failed + 1)) ;;
  esac
done
echo "cuda programs: $known known failures (known_failures.txt)"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
