#!/bin/sh
# Runs a program built by nvcc (the CUDA runtime linked statically, as nvcc does by default)
# against Mimic's libcuda.so.1 with MIMIC_TRACE. While most entry points are stubs it
# cannot succeed, but it must fail cleanly (no signal) after the runtime has looked up its
# entry points and asked for the driver version.
#   run_vector_add.sh <nvcc> <program.cu> <libcuda dir> <work dir>
set -u
nvcc=$1 source=$2 libdir=$3 work=$4
if [ ! -x "$nvcc" ]; then
  echo "SKIP: no nvcc at $nvcc"
  exit 77
fi
mkdir -p "$work"
program=$work/$(basename "$source" .cu)
trace=$work/trace.txt
"$nvcc" -o "$program" "$source" || { echo "FAIL: nvcc could not build $source"; exit 1; }
rm -f "$trace"
LD_LIBRARY_PATH=$libdir MIMIC_TRACE=$trace "$program" >"$work/stdout.txt" 2>"$work/stderr.txt"
status=$?
echo "exit status $status; stderr:"
cat "$work/stderr.txt"
echo "trace: $(wc -l <"$trace") lines, the first ones:"
head -n 5 "$trace"
failed=0
if [ "$status" -ge 128 ]; then
  echo "FAIL: the program died of signal $((status - 128))"
  failed=1
fi
for call in 'cuGetProcAddress_v2(symbol="cuInit"' 'cuDriverGetVersion(driverVersion='; do
  if ! grep -qF "$call" "$trace"; then
    echo "FAIL: the trace has no $call...) line"
    failed=1
  fi
done
exit $failed
