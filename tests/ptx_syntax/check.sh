#!/usr/bin/env bash
# PTX syntax coverage check for the Mimic front end.
#
# usage: tests/ptx_syntax/check.sh path/to/mimic [FILE.ptx...]
#
# For every tests/ptx_syntax/*.ptx (or the files named after the binary that do not start
# with '// expect:'):
#   1. `mimic ptx roundtrip` must pass (parse, print, re-parse, identical trees);
#   2. the output of `mimic ptx print` must be accepted by `ptxas -c` with the -arch named
#      by the file's .target (-c: relocatable, so .extern symbols may stay unresolved).
#      The original file is assembled too, so a broken test file is reported as such
#      rather than blamed on the printer.
# For every tests/ptx_syntax/errors/*.ptx, whose first line is `// expect: TEXT`, and for a
# few generated cases, `mimic ptx print` must fail with an error that contains TEXT and
# starts with FILE:LINE:COLUMN.
#
# Environment: PTXAS (default: ptxas on PATH, else /usr/local/cuda/bin/ptxas; a value
# that names no program, e.g. PTXAS=none, skips the ptxas checks).
set -u
shopt -s nullglob

if [[ $# -lt 1 ]]; then
  echo "usage: $0 path/to/mimic [FILE.ptx...]" >&2
  exit 2
fi
MIMIC=$1
shift
if [[ ! -x $MIMIC ]]; then
  echo "$0: '$MIMIC' is not an executable mimic binary" >&2
  exit 2
fi

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ -z ${PTXAS-} ]]; then
  PTXAS=$(command -v ptxas || true)
  if [[ -z $PTXAS && -x /usr/local/cuda/bin/ptxas ]]; then
    PTXAS=/usr/local/cuda/bin/ptxas
  fi
elif ! command -v "$PTXAS" >/dev/null; then
  PTXAS=
fi
if [[ -z $PTXAS ]]; then
  echo "note: ptxas not found (set PTXAS=/path/to/ptxas): skipping the ptxas checks;" \
    "running the round trips and the error cases only"
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL $1"
  if [[ $# -gt 1 && -n $2 ]]; then
    printf '%s\n' "$2" | head -n 15 | sed 's/^/    /'
  fi
}

# The -arch for ptxas: the first sm_XX word of the file's .target directive.
arch_of() {
  sed -n 's/^[[:space:]]*\.target[[:space:]]*//p' "$1" | head -n 1 | grep -o 'sm_[0-9]*[af]\?' | head -n 1
}

check_valid() {
  local f=$1 name out arch
  name=$(basename "$f")
  if ! out=$("$MIMIC" ptx roundtrip "$f" 2>&1); then
    fail "$name: roundtrip" "$out"
    return
  fi
  if ! out=$("$MIMIC" ptx print "$f" -o "$TMP/$name" 2>&1); then
    fail "$name: print" "$out"
    return
  fi
  if [[ -n $PTXAS ]]; then
    arch=$(arch_of "$f")
    if [[ -z $arch ]]; then
      fail "$name: no sm_XX target in its .target directive"
      return
    fi
    if ! out=$("$PTXAS" -c -arch="$arch" "$f" -o /dev/null 2>&1); then
      fail "$name: the test file itself is rejected by ptxas -arch=$arch" "$out"
      return
    fi
    if ! out=$("$PTXAS" -c -arch="$arch" "$TMP/$name" -o /dev/null 2>&1); then
      fail "$name: ptxas -arch=$arch rejects the printed PTX" "$out"
      return
    fi
  fi
  pass
}

# $1: file, $2: expected substring of the error message.
check_error() {
  local f=$1 expect=$2 name out rc
  name=$(basename "$f")
  if [[ -z $expect ]]; then
    fail "$name: first line must be '// expect: <part of the error message>'"
    return
  fi
  out=$("$MIMIC" ptx print "$f" -o "$TMP/out.ptx" 2>&1)
  rc=$?
  if [[ $rc -eq 0 ]]; then
    fail "$name: accepted, expected an error containing '$expect'"
    return
  fi
  if [[ $out != *"$expect"* ]]; then
    fail "$name: error does not contain '$expect'" "$out"
    return
  fi
  # file:line:column: error: ...
  if ! grep -qE "^$(printf '%s' "$f" | sed 's/[][\.*^$/]/\\&/g'):[0-9]+:[0-9]+: error: " <<<"$out"; then
    fail "$name: error has no FILE:LINE:COLUMN location" "$out"
    return
  fi
  pass
}

expect_of() {
  sed -n '1s|^//[[:space:]]*expect:[[:space:]]*||p' "$1"
}

# Generated negative cases (too large to keep as files).
generate_errors() {
  local d=$TMP/gen
  mkdir -p "$d"
  {
    echo '// expect: nesting deeper than'
    echo '.version 9.0'
    echo '.target sm_80'
    echo '.visible .entry deep()'
    echo '{'
    echo '.reg .b32 %r;'
    printf 'mov.u32 %%r, '
    printf '(%.0s' $(seq 1 300)
    printf '1'
    printf ')%.0s' $(seq 1 300)
    echo ';'
    echo 'ret;'
    echo '}'
  } >"$d/nested_expression.ptx"
  {
    echo '// expect: nesting deeper than'
    echo '.version 9.0'
    echo '.target sm_80'
    echo '.visible .entry deep()'
    printf '{\n%.0s' $(seq 1 300)
    printf '}\n%.0s' $(seq 1 300)
  } >"$d/nested_blocks.ptx"
  printf '%s\n' "$d"/*.ptx
}

if [[ $# -gt 0 ]]; then
  valid=()
  errors=()
  for f in "$@"; do # a file that starts with '// expect:' is a negative case
    if [[ -n $(expect_of "$f") ]]; then errors+=("$f"); else valid+=("$f"); fi
  done
else
  valid=("$HERE"/*.ptx)
  errors=("$HERE"/errors/*.ptx)
  mapfile -t -O "${#errors[@]}" errors < <(generate_errors)
fi

for f in "${valid[@]}"; do
  check_valid "$f"
done
for f in "${errors[@]}"; do
  check_error "$f" "$(expect_of "$f")"
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
