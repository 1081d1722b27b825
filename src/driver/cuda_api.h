/* The CUDA toolkit headers as libcuda.so.1 itself sees them: with
 * __CUDA_API_VERSION_INTERNAL, cuda.h declares every exported symbol under its own name
 * (the legacy cuMemAlloc with 32-bit sizes as well as cuMemAlloc_v2 and the _ptds/_ptsz
 * variants) and cudaTypedefs.h declares the PFN typedefs of the legacy versions too.
 * Beware: in this mode `cuMemAlloc` names the legacy function, not the macro for
 * cuMemAlloc_v2. Include this before any other CUDA header. C and C++. */
#ifndef MIMIC_DRIVER_CUDA_API_H
#define MIMIC_DRIVER_CUDA_API_H

#if defined(__cuda_cuda_h__) && !defined(__CUDA_API_VERSION_INTERNAL)
#error "cuda.h was included before driver/cuda_api.h: include driver/cuda_api.h first"
#endif
#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif

#include <cuda.h>
#include <cudaProfiler.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>

/* The driver version Mimic reports (cuDriverGetVersion) and serves (cuGetProcAddress). */
#define MIMIC_DRIVER_VERSION 13000

/* The library is built with hidden visibility; the version script selects the exports. */
#define MIMIC_EXPORT __attribute__((visibility("default")))

#endif
