// The CUDA runtime's private interfaces, reached through cuGetExportTable.
#pragma once

#include <cstdint>
#include "driver/cuda_api.h"

namespace mimic::driver {

// The driver version Mimic reports (cuDriverGetVersion) and feeds the integrity check.
inline constexpr int kDriverVersion = MIMIC_DRIVER_VERSION;

// Looks up a private table by UUID; CUDA_ERROR_NOT_FOUND for unknown ones (logged once).
CUresult get_export_table(const void** table, const CUuuid* id);

// The integrity table's slot 1, callable directly for tests.
CUresult integrity_digest(uint32_t version, uint64_t unix_seconds, uint64_t out[2]);

} // namespace mimic::driver
