// Pitched and 3D copies for callers other than the cuMemcpy* entry points (graph memcpy
// nodes): the same checks against the allocation registry and the array registry, and
// the work that performs the copy later (impl_memory2d.cpp).
#pragma once

#include <cuda.h>

#include "runtime/context.h"
#include "runtime/stream.h"

namespace mimic::driver {

// Checks every side of `p` (host, device, unified or array memory) and returns the work
// that copies it; CUDA_ERROR_INVALID_VALUE for a malformed description or a device-side
// region outside its allocation, before any byte moves.
CUresult prepare_copy_3d(runtime::Context* c, const CUDA_MEMCPY3D& p, runtime::Work& work);
// The same, also saying whether a side is pageable host memory (which the caller must
// not return before the copy has read or written).
CUresult prepare_copy_3d(runtime::Context* c, const CUDA_MEMCPY3D& p, runtime::Work& work, bool& pageable_host);

} // namespace mimic::driver
