// Helpers shared by the launch entry points (impl_launch.cpp) and the occupancy queries
// (impl_occupancy.cpp): what the occupancy calculator needs to know of a function, and
// the resident-grid check of cooperative launches.
#pragma once

#include <cuda.h>

#include "runtime/module.h"
#include "runtime/occupancy.h"

namespace mimic::driver {

// A function's limits as its attributes report them (threads per block, NUM_REGS,
// static shared memory).
runtime::KernelResources kernel_resources(runtime::Function* f);

// The function a CUfunction or CUkernel handle names in the current context, checked.
CUresult occupancy_function(CUfunction handle, runtime::Context*& c, runtime::Function*& f);

// CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE when the grid's blocks cannot all be resident
// at once; CUDA_ERROR_NOT_SUPPORTED when the device has no cooperative launches.
CUresult check_cooperative_grid(runtime::Function* f, const unsigned grid[3],
                                const unsigned block[3], unsigned shared);

} // namespace mimic::driver
