// Placeholder until the private export tables of the runtime are implemented: delete this
// file when cuGetExportTable_v3000 is defined elsewhere.
#include "driver/driver_impl.h"

namespace mimic::driver::impl {

CUresult cuGetExportTable_v3000(const void** ppExportTable, const CUuuid* pExportTableId) {
  return CUDA_ERROR_NOT_SUPPORTED;
}

} // namespace mimic::driver::impl
