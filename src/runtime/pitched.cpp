#include "runtime/pitched.h"

#include "runtime/memory.h"

namespace mimic::runtime {

namespace {

bool contiguous(const PitchedRegion& r, const CopyExtent& e) {
  return (e.height == 1 || r.pitch == e.width_bytes) &&
         (e.depth == 1 || r.slice_pitch == e.width_bytes * e.height);
}

template <typename RowFn> Status for_each_row(const CopyExtent& e, RowFn row) {
  for (size_t s = 0; s < e.depth; ++s)
    for (size_t r = 0; r < e.height; ++r)
      if (Status st = row(s, r); !st) return st;
  return Status();
}

uintptr_t row_start(const PitchedRegion& region, size_t slice, size_t row) {
  return region.start + slice * region.slice_pitch + row * region.pitch;
}

} // namespace

bool region_span(const PitchedRegion& region, const CopyExtent& extent, size_t& bytes) {
  bytes = 0;
  if (extent.empty()) return true;
  if (extent.height > 1 && region.pitch < extent.width_bytes) return false;
  size_t slice_rows_end = 0; // end of the last row of one slice
  if (__builtin_mul_overflow(extent.height - 1, region.pitch, &slice_rows_end) ||
      __builtin_add_overflow(slice_rows_end, extent.width_bytes, &slice_rows_end))
    return false;
  if (extent.depth > 1 && region.slice_pitch < slice_rows_end) return false;
  size_t slices = 0;
  if (__builtin_mul_overflow(extent.depth - 1, region.slice_pitch, &slices) ||
      __builtin_add_overflow(slices, slice_rows_end, &bytes))
    return false;
  uintptr_t end = 0;
  return !__builtin_add_overflow(region.start, bytes, &end);
}

CUresult check_region(const PitchedRegion& region, const CopyExtent& extent) {
  size_t bytes = 0;
  if (!region_span(region, extent, bytes)) return CUDA_ERROR_INVALID_VALUE;
  if (bytes == 0) return CUDA_SUCCESS;
  if (region.start == 0) return CUDA_ERROR_INVALID_VALUE;
  if (region.device && !find_allocation(reinterpret_cast<const void*>(region.start), bytes))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

Status copy_pitched(Backend& backend, const PitchedRegion& dst, const PitchedRegion& src,
                    const CopyExtent& extent) {
  if (extent.empty()) return Status();
  if (contiguous(dst, extent) && contiguous(src, extent))
    return backend.copy(reinterpret_cast<void*>(dst.start),
                        reinterpret_cast<const void*>(src.start),
                        extent.width_bytes * extent.height * extent.depth);
  return for_each_row(extent, [&](size_t s, size_t r) {
    return backend.copy(reinterpret_cast<void*>(row_start(dst, s, r)),
                        reinterpret_cast<const void*>(row_start(src, s, r)), extent.width_bytes);
  });
}

Status fill_pitched(Backend& backend, const PitchedRegion& dst, uint32_t value, size_t element_size,
                    const CopyExtent& extent) {
  if (extent.empty()) return Status();
  size_t per_row = extent.width_bytes / element_size;
  if (contiguous(dst, extent))
    return backend.fill(reinterpret_cast<void*>(dst.start), value, element_size,
                        per_row * extent.height * extent.depth);
  return for_each_row(extent, [&](size_t s, size_t r) {
    return backend.fill(reinterpret_cast<void*>(row_start(dst, s, r)), value, element_size,
                        per_row);
  });
}

} // namespace mimic::runtime
