#!/usr/bin/env bash
# Runs the `// RUN:` lines of one test file, lit-style: %mimic is the mimic tool, %s the
# file, %t a scratch path; LLVM's FileCheck, not, llvm-readobj and llvm-objdump come from
# LLVM 22's bin folder.   usage: run_check.sh MIMIC LLVM_BIN TEST
set -euo pipefail
mimic=$1 llvm_bin=$2 test=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export PATH="$llvm_bin:$PATH"
n=0
while IFS= read -r line; do
  cmd=${line#*RUN: }
  cmd=${cmd//%mimic/$mimic}
  cmd=${cmd//%s/$test}
  cmd=${cmd//%t/$scratch/t}
  n=$((n + 1))
  if ! bash -o pipefail -c "$cmd"; then
    echo "FAILED: RUN line $n: $cmd" >&2
    exit 1
  fi
done < <(grep -E '^// RUN: ' "$test")
[ "$n" -gt 0 ] || { echo "no RUN lines in $test" >&2; exit 1; }
