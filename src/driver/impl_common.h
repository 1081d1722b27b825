// Helpers shared by the driver API implementations (impl_*.cpp): initialisation state,
// the checked current context, device lookup. Every implementation validates its
// arguments and handles before touching anything.
#pragma once

#include <cuda.h>

#include <vector>

#include "runtime/context.h"
#include "runtime/device.h"

namespace mimic::runtime {
struct GraphNode;
struct Stream;
struct KernelNodeParams;
struct Function;
struct KernelInfo;
} // namespace mimic::runtime

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

// Before asynchronous work goes on a stream: the sticky error of the stream's context,
// then the stream-capture rules (impl_stream.cpp).
CUresult check_async_work(runtime::Stream* s);

// Graph nodes for a copy or a fill (impl_graph.cpp), as stream capture records them.
runtime::GraphNode memcpy_node(runtime::Context* c, void* dst, const void* src, size_t bytes);
runtime::GraphNode memset_node(runtime::Context* c, CUdeviceptr dst, unsigned value, unsigned element, size_t count);

// Kernel launches (impl_module.cpp): validation and parameter packing, and the launch
// itself, which graph kernel nodes call when they run.
// Stream-ordered allocation on a capturing stream (impl_graph.cpp): a memory allocation
// node whose memory is allocated now and keeps its address for every launch, and a free
// node.
CUresult capture_mem_alloc(runtime::Stream* s, size_t bytes, CUdeviceptr* out);
CUresult capture_mem_free(runtime::Stream* s, CUdeviceptr p);

// check_launch: the function (resolved in `c`), shape and shared memory are valid; `info`
// then describes the kernel. pack_parameters: kernelParams or extra packed into `out`
// (info.param_bytes). keep_launch: a launch's own copy for work that outlives the call.
// prepare_launch: check, pack and keep, into a graph node's parameters.
CUresult check_launch(runtime::Context* c, CUfunction fn, const unsigned grid[3],
                      const unsigned block[3], unsigned shared, const runtime::KernelInfo*& info);
CUresult pack_parameters(const runtime::KernelInfo& info, void** params, void** extra,
                         uint8_t* out);
void keep_launch(CUfunction fn, runtime::Context* c, const unsigned grid[3], const unsigned block[3],
                 unsigned shared, const runtime::KernelInfo& info, std::vector<uint8_t> args,
                 runtime::KernelNodeParams& out);
CUresult prepare_launch(runtime::Context* c, CUfunction fn, const unsigned grid[3], const unsigned block[3],
                        unsigned shared, void** params, void** extra, runtime::KernelNodeParams& out);
CUresult run_kernel(CUfunction fn, runtime::Context* c, const unsigned grid[3],
                    const unsigned block[3], unsigned shared, const void* args);
CUresult run_launch(const runtime::KernelNodeParams& launch);
// Whether the backend's code for `f` runs in clusters of `cluster` blocks (all zero: the
// kernel's own .reqnctapercluster or cuFuncSetAttribute's required cluster, if any).
// NOT_SUPPORTED, said once, when the code assumes smaller clusters.
CUresult check_cluster_support(const runtime::Function& f, const unsigned cluster[3]);

} // namespace mimic::driver
