// A cublasLtHandle_t. cuBLASLt handles are not tied to a CUDA context: a call works on the
// current context (the runtime's primary context when none is current) and the stream it
// is given. cuBLAS documents that a cublasHandle_t may be cast to a cublasLtHandle_t;
// Mimic's libcublas does not link this library, so such a handle is recognised by asking
// the loaded libcublas whether it is one of its live handles.
#pragma once

#include "libs/common/device.h"
#include "libs/common/stream_order.h"

#include <cublasLt.h>

namespace mimic::cublaslt {

struct Context {
  // Work recorded into graphs by stream capture lives as long as the handle.
  libs::CapturedWork captured;
};

cublasStatus_t create_context(cublasLtHandle_t* out);
cublasStatus_t destroy_context(cublasLtHandle_t handle);
// The live context `handle` names (one shared by all cuBLAS handles used as cuBLASLt
// handles), or nullptr for a NULL, stale or foreign handle.
Context* find_context(cublasLtHandle_t handle);

// Where a call's work goes: the current context (bound as the runtime would) and `stream`.
cublasStatus_t bind_target(Context& context, CUstream stream, libs::StreamTarget* target,
                           libs::DeviceKind* kind);

// CUDA driver results as cuBLAS statuses.
cublasStatus_t status_from(CUresult result);

} // namespace mimic::cublaslt

namespace mimic::cublaslt {

class LtBackend;

// The backend for the current device and where its work goes; NOT_SUPPORTED (said once)
// when that kind of device has no backend yet.
cublasStatus_t select_backend(Context& context, CUstream stream, libs::StreamTarget* target,
                              LtBackend** backend);

} // namespace mimic::cublaslt
