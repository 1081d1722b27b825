#!/usr/bin/env bash
# Builds every tests/libs/*.cu with nvcc against the toolkit's link libraries (-lcublas, or
# what a first line `// link: -l...` names) and runs it under `mimic run`, which puts
# Mimic's libraries first on the library path.
# Every program checks its results against double-precision references and exits 0 when
# all are right.
#   run_programs.sh MIMIC NVCC WORK_DIR [PROGRAM...]
# Executables stay in WORK_DIR and are rebuilt when their source or a header here changes.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

run_one() { # MIMIC NVCC WORK NAME
  local mimic=$1 nvcc=$2 work=$3 name=$4
  local src="$here/$name.cu" exe="$work/$name"
  local stale=0 header
  for header in "$src" "$here"/*.h; do [ "$header" -nt "$exe" ] && stale=1; done
  if [ ! -x "$exe" ] || [ $stale -eq 1 ]; then
    rm -f "$exe"
    local libs
    libs=$(sed -n '1s|^// link: ||p' "$src")
    if ! "$nvcc" -std=c++17 -o "$exe" "$src" ${libs:--lcublas} 2> "$exe.build.log"; then
      { echo "FAIL $name: nvcc failed"; head -5 "$exe.build.log"; } > "$exe.result"
      return
    fi
  fi
  timeout "${MIMIC_LIBS_TIMEOUT:-120}" "$mimic" run -- "$exe" > "$exe.stdout" 2> "$exe.stderr"
  local status=$?
  if [ $status -eq 0 ]; then
    { echo PASS; cat "$exe.stdout"; } > "$exe.result"
  else
    { echo "FAIL $name: exit status $status"; tail -n 5 "$exe.stdout"; tail -n 15 "$exe.stderr"; } > "$exe.result"
  fi
}

if [ "${1:-}" = --one ]; then
  shift
  run_one "$@"
  exit 0
fi

mimic=$1 nvcc=$2 work=$3
shift 3
mkdir -p "$work"
programs=("$@")
if [ ${#programs[@]} -eq 0 ]; then
  for f in "$here"/*.cu; do programs+=("$(basename "$f" .cu)"); done
fi
for name in "${programs[@]}"; do rm -f "$work/$name.result"; done
printf '%s\n' "${programs[@]}" | xargs -P "${MIMIC_CUDA_JOBS:-$(nproc)}" -n 1 "$0" --one "$mimic" "$nvcc" "$work"

passed=0 failed=0
for name in "${programs[@]}"; do
  result="$work/$name.result"
  case $(head -n 1 "$result" 2> /dev/null) in
    PASS) passed=$((passed + 1)); tail -n +2 "$result" ;;
    "") echo "FAIL $name: no result"; failed=$((failed + 1)) ;;
    *) cat "$result"; failed=$((failed + 1)) ;;
  esac
done
echo "library programs: $passed passed, $failed failed"
[ $failed -eq 0 ]
