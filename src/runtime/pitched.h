// Pitched (2D and 3D) regions of linear memory: the rows a cuMemcpy2D/3D or cuMemsetD2D
// touches, checked against the allocation registry before any byte moves, and copied or
// filled row by row through the backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cuda.h>

#include "runtime/backend.h"

namespace mimic::runtime {

// One side of a pitched copy: row r of slice s starts at start + s * slice_pitch + r * pitch.
struct PitchedRegion {
  uintptr_t start = 0;
  size_t pitch = 0;
  size_t slice_pitch = 0;
  // The region must lie inside one registered allocation (device memory, or any memory
  // given as a device pointer); host regions are the caller's responsibility.
  bool device = false;
};

struct CopyExtent {
  size_t width_bytes = 0;
  size_t height = 1;
  size_t depth = 1;
  bool empty() const { return width_bytes == 0 || height == 0 || depth == 0; }
};

// The bytes from the first row's start to the last row's end; false when the region's
// pitches cannot hold the extent (pitch < width with several rows, slice pitch < rows
// * pitch with several slices) or the span overflows.
bool region_span(const PitchedRegion& region, const CopyExtent& extent, size_t& bytes);

// CUDA_ERROR_INVALID_VALUE when the region is malformed or, for a device region, when
// any of its rows leaves the allocation holding its first byte. Every row lies between
// the first byte and the end of the last row, so checking that span covers them all.
CUresult check_region(const PitchedRegion& region, const CopyExtent& extent);

// Copies (or fills with `element_size`-byte `value`s; width_bytes a multiple of it) every
// row; one backend call when both sides are contiguous. Regions must have been checked.
Status copy_pitched(Backend& backend, const PitchedRegion& dst, const PitchedRegion& src,
                    const CopyExtent& extent);
Status fill_pitched(Backend& backend, const PitchedRegion& dst, uint32_t value, size_t element_size,
                    const CopyExtent& extent);

} // namespace mimic::runtime
