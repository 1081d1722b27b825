#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS, starting from a copy of its seed corpus
# (fuzz/corpus/<target>/, plus tests/ptx_syntax/*.ptx for fuzz_ptx).
#
#   fuzz/run.sh SECONDS BUILD_DIR [TARGET...]     (targets: fuzz_fatbin fuzz_ptx; default both)
#
# BUILD_DIR is a tree configured with -DMIMIC_FUZZ=ON (clang). Exits non-zero when a
# fuzzer finds a crash, leak, timeout, out-of-memory or sanitizer report; the reproducer
# is kept in BUILD_DIR/fuzz-artifacts/ and its path printed. Set FUZZ_KEEP_CORPUS=1 to
# keep the grown corpora (their directory is printed).
set -u

if [ $# -lt 2 ]; then
  echo "usage: $0 SECONDS BUILD_DIR [TARGET...]" >&2
  exit 2
fi
seconds=$1
build=$(cd "$2" && pwd) || exit 2
shift 2
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_fatbin fuzz_ptx)

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/mimic-fuzz.XXXXXX")
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
if [ "${FUZZ_KEEP_CORPUS:-0}" = 1 ]; then
  echo "corpora in $work"
else
  trap 'rm -rf "$work"' EXIT
fi

status=0
for target in "${targets[@]}"; do
  exe="$build/bin/$target"
  if [ ! -x "$exe" ]; then
    echo "$target: $exe not built (configure with -DMIMIC_FUZZ=ON)" >&2
    status=1
    continue
  fi
  case $target in
    fuzz_fatbin) seeds="$here/corpus/fatbin"; extra=() ;;
    fuzz_ptx) seeds="$here/corpus/ptx"; extra=(-dict="$here/ptx.dict") ;;
    *) echo "unknown target $target" >&2; status=1; continue ;;
  esac
  corpus="$work/$target"
  mkdir -p "$corpus"
  cp "$seeds"/* "$corpus"/
  # The PTX syntax tests make good seeds too: they cover more of the grammar.
  if [ "$target" = fuzz_ptx ] && [ -d "$here/../tests/ptx_syntax" ]; then
    for f in "$here"/../tests/ptx_syntax/*.ptx; do
      [ -f "$f" ] && cp "$f" "$corpus/syntax-$(basename "$f")"
    done
  fi
  log="$work/$target.log"
  echo "== $target: ${seconds}s"
  "$exe" "$corpus" "${extra[@]}" \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$target-" >"$log" 2>&1
  rc=$?
  # The last coverage line and the final statistics.
  grep -E '^#[0-9]+.*(DONE|pulse|REDUCE|NEW)' "$log" | tail -1
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log"
  echo "corpus: $(ls "$corpus" | wc -l) inputs"
  if [ $rc -ne 0 ]; then
    echo "$target FAILED (exit $rc):"
    grep -E 'ERROR|SUMMARY|runtime error|round trip|Test unit written|timeout|out-of-memory' "$log" | head -20
    cp "$log" "$artifacts/$target.log"
    echo "log: $artifacts/$target.log"
    status=1
  fi
done
exit $status
