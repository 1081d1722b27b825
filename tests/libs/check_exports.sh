#!/usr/bin/env bash
# Mimic's libcublas exports what NVIDIA's does, under the same symbol version, less the
# internal entry points no header declares (listed here); libcublas.so.12 the same names
# under the CUDA 12 version node.
#   check_exports.sh MIMIC_LIB_DIR VENDOR_LIBCUBLAS
set -euo pipefail
lib=$1 vendor=$2
undeclared="cublasCbdmm cublasDbdmm cublasSbdmm cublasZbdmm cublasGetBackdoor cublasSetBackdoor
cublasSetBackdoorEx cublasGetEnvironmentMode cublasSetEnvironmentMode"
exports() { nm -D --defined-only "$1" | awk '$2 == "T" { print $3 }' | sort; }
want=$(exports "$vendor" | grep -vF -f <(printf '%s@@\n' $undeclared))
got13=$(exports "$lib/libcublas.so.13")
got12=$(exports "$lib/libcublas.so.12" | sed 's/@@libcublas.so.12$/@@libcublas.so.13/')
status=0
if ! diff <(echo "$want") <(echo "$got13") > /dev/null; then
  echo "libcublas.so.13 exports differ from $vendor (< vendor, > Mimic):"
  diff <(echo "$want") <(echo "$got13") | head -20
  status=1
fi
if [ "$got12" != "$got13" ]; then
  echo "libcublas.so.12 does not export the same names under libcublas.so.12"
  status=1
fi
[ $status -eq 0 ] && echo "libcublas exports: $(echo "$got13" | wc -l) entry points, versions match"
exit $status
