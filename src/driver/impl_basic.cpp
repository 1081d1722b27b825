// Initialisation and version queries.
#include "driver/driver_impl.h"

namespace mimic::driver::impl {

CUresult cuInit_v2000(unsigned int Flags) {
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion_v2020(int* driverVersion) {
  if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = MIMIC_DRIVER_VERSION;
  return CUDA_SUCCESS;
}

} // namespace mimic::driver::impl
