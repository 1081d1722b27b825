#!/bin/sh
# A workload for tests/cli/bench_ab.sh: a cold first iteration (sps=1) and then steady
# ones at $SPEED (default 100); learn_s is 1/sps-like. FAIL=1 makes it exit with status 3.
speed=${SPEED:-100}
echo "params=42 note=not-a-number"
echo "iter=1 sps=1 learn_s=9"
for i in 2 3 4; do
  echo "iter=$i sps=$((speed + i)) learn_s=$((1000 / speed))"
done
[ "${FAIL:-0}" = 1 ] && exit 3
exit 0
