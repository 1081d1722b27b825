#!/usr/bin/env bash
# Builds Mimic and runs every test:
#   1. the release build's ctest suite (unit tests, the toolkit PTX corpus round trip,
#      ptxas acceptance of printed PTX, PTX ISA syntax coverage);
#   2. the unit and syntax tests again under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the runtime and driver concurrency tests under ThreadSanitizer;
#   4. each libFuzzer target for a short time (FUZZ_SECONDS, default 60).
# Ends with one line 'tests: N passed, M failed'.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${JOBS:-$(nproc)}
fuzz_seconds=${FUZZ_SECONDS:-60}
export CC=${CC:-clang-22} CXX=${CXX:-clang++-22}
passed=0
failed=0

tally_ctest() { # LOG
  local line
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$1" | tail -n 1)
  if [ -z "$line" ]; then
    echo "test-all: ctest printed no summary"; failed=$((failed + 1)); return
  fi
  local total bad
  total=$(echo "$line" | sed -E 's/.*out of ([0-9]+).*/\1/')
  bad=$(echo "$line" | sed -E 's/.* ([0-9]+) tests? failed.*/\1/')
  passed=$((passed + total - bad))
  failed=$((failed + bad))
}

build() { # DIR [cmake args...]
  local dir=$1
  shift
  mkdir -p "$dir"
  cmake -S "$root" -B "$dir" -G Ninja "$@" > "$dir/configure.log" 2>&1 || {
    cat "$dir/configure.log"; return 1; }
  cmake --build "$dir" -j "$jobs"
}

echo "== release build"
if build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIMIC_BUILD_TESTS=ON -DMIMIC_BUILD_BENCH=ON; then
  (cd build && ctest --output-on-failure -j "$jobs" 2>&1) | tee build/ctest.log
  tally_ctest build/ctest.log
else
  echo "test-all: release build failed"; failed=$((failed + 1))
fi

echo "== AddressSanitizer + UBSan build"
if build build-asan -DCMAKE_BUILD_TYPE=Debug -DMIMIC_SANITIZE=ON -DMIMIC_BUILD_TESTS=ON -DMIMIC_BUILD_BENCH=OFF; then
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure -j "$jobs" -L "unit|syntax" 2>&1) | tee build-asan/ctest.log
  tally_ctest build-asan/ctest.log
else
  echo "test-all: sanitizer build failed"; failed=$((failed + 1))
fi

echo "== ThreadSanitizer build: the runtime and the driver from many threads"
if build build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIMIC_SANITIZE_THREAD=ON -DMIMIC_BUILD_TESTS=ON -DMIMIC_BUILD_BENCH=OFF; then
  (cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
     ctest --output-on-failure -j "$jobs" -R "^(Runtime|Concurrency)\\." 2>&1) | tee build-tsan/ctest.log
  tally_ctest build-tsan/ctest.log
else
  echo "test-all: ThreadSanitizer build failed"; failed=$((failed + 1))
fi

echo "== fuzzers, ${fuzz_seconds}s each"
if build build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIMIC_FUZZ=ON -DMIMIC_BUILD_TESTS=OFF -DMIMIC_BUILD_BENCH=OFF; then
  for target in fuzz_fatbin fuzz_ptx; do
    if fuzz/run.sh "$fuzz_seconds" build-fuzz "$target"; then
      passed=$((passed + 1))
    else
      echo "test-all: $target found a problem"; failed=$((failed + 1))
    fi
  done
else
  echo "test-all: fuzz build failed"; failed=$((failed + 1))
fi

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
