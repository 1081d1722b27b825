// Helpers shared by the driver API implementations (impl_*.cpp): initialisation state,
// the checked current context, device lookup. Every implementation validates its
// arguments and handles before touching anything.
#pragma once

#include <cuda.h>

#include "runtime/context.h"
#include "runtime/device.h"

namespace mimic::driver {

bool initialized();
void mark_initialized();

// The calling thread's current context, checked: CUDA_ERROR_NOT_INITIALIZED before
// cuInit, CUDA_ERROR_INVALID_CONTEXT when there is none, the context's sticky error
// after a kernel fault.
CUresult current_context(runtime::Context*& out);
// A context handle, or the current context for NULL (as several APIs accept).
CUresult context_or_current(CUcontext handle, runtime::Context*& out);
CUresult device_of(CUdevice ordinal, const runtime::Device*& out);

} // namespace mimic::driver
