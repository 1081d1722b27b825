// CUDA arrays (CUarray): opaque to programs, stored here as linear device memory in
// row-major order (x fastest, then rows, then slices) with no padding between rows.
// Mipmapped, layered and cubemap arrays are not supported yet.
#pragma once

#include <cuda.h>

#include "runtime/context.h"

namespace mimic::runtime {

struct Array {
  Context* context = nullptr;
  CUDA_ARRAY3D_DESCRIPTOR descriptor = {};
  size_t element_bytes = 0; // one element: channel size * channels
  size_t row_bytes = 0;     // Width * element_bytes
  size_t rows = 1;          // max(Height, 1)
  size_t slices = 1;        // max(Depth, 1)
  void* data = nullptr;
  unsigned long long buffer_id = 0; // of `data` in the allocation registry
  size_t slice_bytes() const { return row_bytes * rows; }
};

// Bytes of one channel of `format`; 0 for a format Mimic does not know.
size_t channel_bytes(CUarray_format format);

// CUDA_ERROR_INVALID_VALUE for a malformed descriptor, CUDA_ERROR_NOT_SUPPORTED for
// layered/cubemap/sparse arrays, CUDA_ERROR_OUT_OF_MEMORY when allocation fails.
Result<Array*> create_array(Context* context, const CUDA_ARRAY3D_DESCRIPTOR& descriptor);
CUresult destroy_array(Array* array);
// Destroys every array of a context (when the context ends).
void retire_arrays(Context* context);
// A live array, or nullptr for a stale or foreign handle.
Array* find_array(CUarray handle);
inline CUarray to_handle(Array* a) {
  return reinterpret_cast<CUarray>(a);
}

} // namespace mimic::runtime
