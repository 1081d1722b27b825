#!/usr/bin/env bash
# Mimic's libcublasLt exports what NVIDIA's does, under the same symbol version, less the
# internal entry points no header declares (NVIDIA's libcublas calls them: per-type matmul
# families such as cublasLtSSSMatmul, cublasLtLegacyGemm*, cublasLt_for_cublas_*, context
# and heuristics-cache internals; matched below); libcublasLt.so.12 the same names under
# the CUDA 12 version node.
#   check_cublaslt_exports.sh MIMIC_LIB_DIR VENDOR_LIBCUBLASLT
set -euo pipefail
lib=$1 vendor=$2
internal='^cublasLt[A-Z]{3}Matmul|^cublasLtLegacyGemm|^cublasLt_for_cublas_'
internal+='|^cublasLt(AlgoCharacteristicGetAttribute|ClearNvjetCache|CtxInit|ShutdownCtx'
internal+='|GetEnvironmentMode|SetEnvironmentMode|HeuristicLutSerializeEntry'
internal+='|HeuristicsCache(Create|Destroy|Get|Put)|MatmulAlgoConfigGetAttributeRange)@'
exports() { nm -D --defined-only "$1" | awk '$2 == "T" { print $3 }' | sort; }
want=$(exports "$vendor" | grep -vE "$internal")
got13=$(exports "$lib/libcublasLt.so.13")
got12=$(exports "$lib/libcublasLt.so.12" | sed 's/@@libcublasLt.so.12$/@@libcublasLt.so.13/')
status=0
if ! diff <(echo "$want") <(echo "$got13") > /dev/null; then
  echo "libcublasLt.so.13 exports differ from $vendor (< vendor, > Mimic):"
  diff <(echo "$want") <(echo "$got13") | head -20
  status=1
fi
if [ "$got12" != "$got13" ]; then
  echo "libcublasLt.so.12 does not export the same names under libcublasLt.so.12"
  status=1
fi
[ $status -eq 0 ] && echo "libcublasLt exports: $(echo "$got13" | wc -l) entry points, versions match"
exit $status
