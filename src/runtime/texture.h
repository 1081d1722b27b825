// Texture and surface objects (CUtexObject, CUsurfObject).
//
// Each object is an immutable descriptor in a plain C layout that generated kernel code
// reads directly: the 64-bit handle an application passes to a kernel IS the device address
// of its MimicTextureDescriptor. A tex/tld4/suld/sust instruction therefore needs no lookup:
// it loads the fields it needs from the handle. On a device that reads host memory (the
// CPU) that is the object's own descriptor; on one that does not (a GPU, whose
// DeviceProperties::integrated is false) a copy in device memory, written once at creation
// (the resource's `base` is a device address already). The runtime keeps each descriptor
// alive and at the same address until the object is destroyed (and beyond: destroyed
// objects and their device copies stay allocated, so a stale handle never points at reused
// memory), and validates handles through a registry in the API calls (destroy, get*). As
// on CUDA, the resource (array or memory) must outlive the object: `base` is resolved once,
// at creation.
//
// The descriptor's layout and reading rules: runtime/texture_descriptor.h.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "runtime/context.h"
#include "runtime/texture_descriptor.h"
#include "support/error.h"

namespace mimic::runtime {

namespace descriptor_values {
static_assert(kUnsignedInt8 == CU_AD_FORMAT_UNSIGNED_INT8 &&
              kUnsignedInt16 == CU_AD_FORMAT_UNSIGNED_INT16 &&
              kUnsignedInt32 == CU_AD_FORMAT_UNSIGNED_INT32 &&
              kSignedInt8 == CU_AD_FORMAT_SIGNED_INT8 &&
              kSignedInt16 == CU_AD_FORMAT_SIGNED_INT16 &&
              kSignedInt32 == CU_AD_FORMAT_SIGNED_INT32 && kHalf == CU_AD_FORMAT_HALF &&
              kFloat == CU_AD_FORMAT_FLOAT && kUnormInt8 == CU_AD_FORMAT_UNORM_INT8X1 &&
              kUnormInt16 == CU_AD_FORMAT_UNORM_INT16X1 &&
              kSnormInt8 == CU_AD_FORMAT_SNORM_INT8X1 && kSnormInt16 == CU_AD_FORMAT_SNORM_INT16X1);
static_assert(kWrap == CU_TR_ADDRESS_MODE_WRAP && kClamp == CU_TR_ADDRESS_MODE_CLAMP &&
              kMirror == CU_TR_ADDRESS_MODE_MIRROR && kBorder == CU_TR_ADDRESS_MODE_BORDER);
static_assert(kFilterPoint == CU_TR_FILTER_MODE_POINT && kFilterLinear == CU_TR_FILTER_MODE_LINEAR);
static_assert(kResourceArray == CU_RESOURCE_TYPE_ARRAY &&
              kResourceLinear == CU_RESOURCE_TYPE_LINEAR &&
              kResourcePitch2d == CU_RESOURCE_TYPE_PITCH2D);
} // namespace descriptor_values

// One texture or surface object. The descriptor comes first: the object's address is
// the descriptor's, which is the handle's value where the device reads host memory.
struct TextureObject {
  MimicTextureDescriptor descriptor = {};
  uint64_t handle = 0; // what kernels receive: &descriptor, or the device copy's address
  Context* context = nullptr;
  bool surface = false;
  // What the application gave, for cuTexObjectGet*/cuSurfObjectGetResourceDesc.
  CUDA_RESOURCE_DESC resource = {};
  CUDA_TEXTURE_DESC texture = {};
  CUDA_RESOURCE_VIEW_DESC view = {};
  bool has_view = false;
};

// Validates the descriptions (CUDA_ERROR_INVALID_VALUE naming the problem; a stale array
// is CUDA_ERROR_INVALID_HANDLE, a mipmapped array CUDA_ERROR_NOT_SUPPORTED) and makes
// the object. `texture` is null for a surface; `view` may be null.
Result<TextureObject*> create_texture_object(Context* context, const CUDA_RESOURCE_DESC& resource,
                                             const CUDA_TEXTURE_DESC* texture,
                                             const CUDA_RESOURCE_VIEW_DESC* view);
Result<TextureObject*> create_surface_object(Context* context, const CUDA_RESOURCE_DESC& resource);
CUresult destroy_texture_object(TextureObject* object);

// A live object of that kind, or nullptr.
TextureObject* find_texture_object(CUtexObject handle);
TextureObject* find_surface_object(CUsurfObject handle);

// Destroys the objects of a context when it ends.
void retire_texture_objects(Context* context);

} // namespace mimic::runtime
