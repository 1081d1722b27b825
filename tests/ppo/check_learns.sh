#!/usr/bin/env bash
# A short PPO training on Mimic learns, and is reproducible from its seed:
#   check_learns.sh MIMIC NVCC WORK_DIR
# Builds bench/ppo/ppo_cuda with nvcc into WORK_DIR (again when a source changed), runs it
# with --quick for $PPO_ITERATIONS iterations (default 12) under `mimic run`, and checks
#   - the output: params=2216347, then one well-formed metric line per iteration;
#   - learning: the mean return of the last two iterations exceeds that of iterations 2-3
#     (the first is skewed by the arenas' staggered first episodes) by $PPO_MIN_GAIN
#     (default 0.2; a random policy scores about -0.3, a good one above 1);
#   - reproducibility: a second run with the same seed prints the same returns for its two
#     iterations (the second's depends on the first's update: equal returns, equal training).
# Nearly all of the time is OpenBLAS in the GEMMs. On the 2-core development machine: 36 s
# with OpenBLAS's AVX2 kernels (OPENBLAS_CORETYPE=Haswell), 121 s with the SSE3 kernels it
# picks there by itself, several minutes under heavy load.
set -uo pipefail
mimic=$1 nvcc=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../bench/ppo" && pwd)
iterations=${PPO_ITERATIONS:-12}
min_gain=${PPO_MIN_GAIN:-0.2}
args=(--quick --seed 1)
mkdir -p "$work"
exe=$work/ppo_cuda

fail() { echo "check_learns: $*"; exit 1; }

stale=0
for f in "$src"/*; do [ "$f" -nt "$exe" ] && stale=1; done
if [ ! -x "$exe" ] || [ $stale -eq 1 ]; then
  rm -f "$exe"
  "$nvcc" -O3 -std=c++17 -arch=sm_80 -o "$exe" "$src/ppo_cuda.cu" -lcublas -lcublasLt ||
    fail "nvcc failed"
fi

run() { # ITERATIONS OUT
  "$mimic" run -- "$exe" "${args[@]}" --iterations "$1" > "$2" 2> "$2.stderr"
  local status=$?
  [ $status -eq 0 ] || { cat "$2" "$2.stderr"; fail "ppo_cuda exited with status $status"; }
}

start=$SECONDS
run "$iterations" "$work/first.out"
cat "$work/first.out"
[ "$(head -n 1 "$work/first.out")" = params=2216347 ] || fail "the first line is not params=2216347"
number='-?[0-9]+(\.[0-9]+)?'
line_re="^iter=[0-9]+ sps=$number collect_sps=$number learn_sps=$number inference_s=$number learn_s=$number return=$number\$"
lines=$(grep -cE "$line_re" "$work/first.out")
[ "$lines" -eq "$iterations" ] || fail "expected $iterations well-formed iteration lines, saw $lines"
returns=$(sed -nE 's/^iter=.* return=(.*)$/\1/p' "$work/first.out")
awk -v gain="$min_gain" -v n="$iterations" '
  { r[NR] = $1 }
  END {
    early = (r[2] + r[3]) / 2; late = (r[n - 1] + r[n]) / 2
    printf "check_learns: mean return, iterations 2-3: %.4f, last two: %.4f (need a gain of %s)\n", early, late, gain
    exit !(late - early >= gain)
  }' <<< "$returns" || fail "the return did not improve enough"

run 2 "$work/second.out"
diff <(head -n 3 "$work/first.out" | sed -nE 's/^.* return=//p') \
     <(sed -nE 's/^.* return=//p' "$work/second.out") ||
  fail "a second run with the same seed printed other returns"
echo "check_learns: learns, and reproduces its returns ($((SECONDS - start)) s)"
