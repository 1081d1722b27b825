#include "runtime/array.h"

#include <memory>
#include <string>

#include "runtime/handle.h"
#include "runtime/memory.h"

namespace mimic::runtime {

namespace {

HandleRegistry<Array>& arrays() {
  static auto* r = new HandleRegistry<Array>;
  return *r;
}

// The largest extent of any dimension; keeps sizes far from overflow.
constexpr size_t kMaxExtent = size_t(1) << 20;

} // namespace

size_t channel_bytes(CUarray_format format) {
  switch (format) {
  case CU_AD_FORMAT_UNSIGNED_INT8:
  case CU_AD_FORMAT_SIGNED_INT8:
  case CU_AD_FORMAT_UNORM_INT8X1:
  case CU_AD_FORMAT_SNORM_INT8X1:
    return 1;
  case CU_AD_FORMAT_UNSIGNED_INT16:
  case CU_AD_FORMAT_SIGNED_INT16:
  case CU_AD_FORMAT_HALF:
  case CU_AD_FORMAT_UNORM_INT16X1:
  case CU_AD_FORMAT_SNORM_INT16X1:
    return 2;
  case CU_AD_FORMAT_UNSIGNED_INT32:
  case CU_AD_FORMAT_SIGNED_INT32:
  case CU_AD_FORMAT_FLOAT:
    return 4;
  default:
    return 0;
  }
}

Result<Array*> create_array(Context* context, const CUDA_ARRAY3D_DESCRIPTOR& d) {
  size_t channel = channel_bytes(d.Format);
  if (channel == 0)
    return Error("unknown array format " + std::to_string(int(d.Format)), CUDA_ERROR_INVALID_VALUE);
  if (d.NumChannels != 1 && d.NumChannels != 2 && d.NumChannels != 4)
    return Error("arrays have 1, 2 or 4 channels, not " + std::to_string(d.NumChannels),
                 CUDA_ERROR_INVALID_VALUE);
  if (d.Width == 0 || (d.Height == 0 && d.Depth != 0))
    return Error("array extent is empty", CUDA_ERROR_INVALID_VALUE);
  if (d.Width > kMaxExtent || d.Height > kMaxExtent || d.Depth > kMaxExtent)
    return Error("array extent is too large", CUDA_ERROR_INVALID_VALUE);
  constexpr unsigned kKnown = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST |
                              CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_TEXTURE_GATHER |
                              CUDA_ARRAY3D_DEPTH_TEXTURE | CUDA_ARRAY3D_COLOR_ATTACHMENT |
                              CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING;
  if (d.Flags & ~kKnown) return Error("unknown array flags", CUDA_ERROR_INVALID_VALUE);
  if (d.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_SPARSE |
                 CUDA_ARRAY3D_DEFERRED_MAPPING))
    return Error("layered, cubemap, sparse and deferred-mapping arrays are not supported",
                 CUDA_ERROR_NOT_SUPPORTED);
  auto array = std::make_unique<Array>();
  array->context = context;
  array->descriptor = d;
  array->element_bytes = channel * d.NumChannels;
  array->row_bytes = d.Width * array->element_bytes;
  array->rows = d.Height ? d.Height : 1;
  array->slices = d.Depth ? d.Depth : 1;
  size_t bytes = array->slice_bytes() * array->slices;
  if (bytes > context->device->properties().total_memory)
    return Error("array does not fit in device memory", CUDA_ERROR_OUT_OF_MEMORY);
  auto data = allocate(context, bytes, MemoryKind::Device);
  if (!data)
    return Error("cannot allocate " + std::to_string(bytes) + " bytes for an array",
                 CUDA_ERROR_OUT_OF_MEMORY);
  array->data = data.value();
  array->buffer_id = find_allocation(array->data)->buffer_id;
  Array* a = array.release();
  arrays().add(a);
  return a;
}

CUresult destroy_array(Array* array) {
  if (!arrays().remove(array)) return CUDA_ERROR_INVALID_HANDLE;
  // The memory may already be gone with its context (release_all), and its address
  // handed out again: release it only while it is still the array's.
  auto a = find_allocation(array->data);
  if (a && a->base == reinterpret_cast<uintptr_t>(array->data) && a->buffer_id == array->buffer_id)
    release(array->data, {MemoryKind::Device});
  array->data = nullptr;
  return CUDA_SUCCESS;
}

void retire_arrays(Context* context) {
  std::vector<Array*> doomed;
  arrays().for_each([&](Array* a) {
    if (a->context == context)
      doomed.push_back(a);
  });
  for (Array* a : doomed)
    destroy_array(a);
}

Array* find_array(CUarray handle) { return arrays().find(handle); }

} // namespace mimic::runtime
