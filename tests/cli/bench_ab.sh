#!/bin/sh
# mimic bench ab on a scripted workload: alternation, dropping of cold iterations, medians,
# the difference in percent, the files it writes, and failing runs.
set -eu
mimic=$1
workload=$(dirname "$0")/ab_workload.sh
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "bench_ab: $*"; cat "$out/log"; exit 1; }

"$mimic" bench ab --trials 2 --quiet --a native,label=slow --b native,env:SPEED=150,label=fast \
  --out "$out/ab" -- sh "$workload" > "$out/log" || fail "exit status $?"
# slow: sps 102 103 104 in each of 2 trials (the cold 1 dropped): median 103; fast: 153.
grep -Eq '^sps +slow +6 +103 ' "$out/log" || fail "slow's sps median"
grep -Eq '^sps +fast +6 +153 ' "$out/log" || fail "fast's sps median"
grep -q 'sps              fast vs slow: median +48.5%' "$out/log" || fail "sps difference"
grep -q 'learn_s          fast vs slow: median -40.0%, mean -40.0% (fast better; lower is better)' "$out/log" ||
  fail "learn_s difference"
! grep -q '^params' "$out/log" || fail "a one-off value was reported as a metric"
# Every value is in the CSV (2 configs x 2 trials x (1 params + 4 sps + 4 learn_s)), cold ones marked.
[ "$(tail -n +2 "$out/ab/samples.csv" | wc -l)" = 36 ] || fail "samples.csv rows"
[ "$(grep -c ',1$' "$out/ab/samples.csv")" = 12 ] || fail "dropped rows"
# Trials alternate: A B then B A.
[ "$(tail -n +2 "$out/ab/samples.csv" | cut -d, -f1,3 | sort -u -t, -k2n | tr '\n' ' ')" = "slow,1 fast,2 fast,3 slow,4 " ] ||
  fail "order of runs"
grep -q '"median_diff_percent":48.5436' "$out/ab/summary.json" || fail "summary.json"
[ "$(grep -c '<circle' "$out/ab/plot.svg")" = $((32 + 2)) ] || fail "plot.svg points"

# Rounds: one measurement per run (its last value), the first run per configuration dropped.
"$mimic" bench ab --rounds --trials 3 --quiet --a native --b native,env:SPEED=200 --metrics sps \
  --out "$out/rounds" -- sh "$workload" > "$out/log" || fail "rounds: exit status $?"
grep -Eq '^sps +native +2 +104 ' "$out/log" || fail "rounds: native's sps"
grep -Eq '^sps +native\+SPEED=200 +2 +204 ' "$out/log" || fail "rounds: SPEED=200's sps"
! grep -q '^learn_s' "$out/log" || fail "--metrics sps still reported learn_s"

# A failing run makes the command fail; a program that cannot start stops it at once.
! "$mimic" bench ab --trials 1 --quiet --a native --b native,env:FAIL=1 --out "$out/f" -- sh "$workload" \
  > "$out/log" 2>&1 || fail "a failed run was not reported"
grep -q "run 1 of 'native+FAIL=1' ended with status 3" "$out/log" || fail "failed run message"
! "$mimic" bench ab --trials 5 --quiet --a native --b native -- /nonexistent/program > "$out/log" 2>&1 ||
  fail "a missing program did not fail"
[ "$(grep -c 'ended with status 127' "$out/log")" = 1 ] || fail "a missing program was run again"
! "$mimic" bench ab --a bogus -- true > "$out/log" 2>&1 || fail "a bad SPEC was accepted"
echo "bench_ab: ok"
