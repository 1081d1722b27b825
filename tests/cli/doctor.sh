#!/bin/sh
# mimic doctor: on a working build every required line is ok and the exit status 0; a
# broken driver is reported with what to do, and the exit status is 1.
set -eu
mimic=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "doctor: $*"; cat "$out/log"; exit 1; }
export MIMIC_CACHE_DIR="$out/cache"

"$mimic" doctor > "$out/log" 2>&1 || fail "exit status $? on a working build"
for component in 'driver' 'PTX kernel (driver API)' 'CUDA runtime' 'kernels (CUDA runtime)' 'cuBLAS' 'cuBLASLt' \
                 'CPU backend' 'JIT cache'; do
  grep -q "^  ok    $component " "$out/log" || fail "'$component' is not ok"
done
grep -q "^ready: 0 problems" "$out/log" || fail "summary line"
"$mimic" doctor --json > "$out/json" || fail "--json exit status"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] and len(d["checks"]) >= 8' "$out/json" ||
  fail "--json output"

# A libcuda.so.1 that is not a library: the driver line fails and says what to do.
mkdir "$out/lib"
echo "not an ELF file" > "$out/lib/libcuda.so.1"
if MIMIC_LIBRARY_PATH="$out/lib" "$mimic" doctor > "$out/log" 2>&1; then fail "a broken driver passed"; fi
grep -q "^  FAIL  driver .*does not load" "$out/log" || fail "the broken driver's line"
grep -q "fix: " "$out/log" || fail "no fix offered"
grep -q "^broken: " "$out/log" || fail "summary of a broken install"
echo "doctor: ok"
