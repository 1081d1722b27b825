#include "runtime/texture.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/array.h"
#include "runtime/handle.h"
#include "runtime/memory.h"

namespace mimic::runtime {

namespace {

HandleRegistry<TextureObject>& objects() {
  static auto* r = new HandleRegistry<TextureObject>;
  return *r;
}

constexpr uint32_t kKnownFlags = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES |
                                 CU_TRSF_SRGB | CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION |
                                 CU_TRSF_SEAMLESS_CUBEMAP;

Error invalid(const std::string& what) {
  return Error(what, CUDA_ERROR_INVALID_VALUE);
}

bool is_float_format(CUarray_format f) {
  return f == CU_AD_FORMAT_FLOAT || f == CU_AD_FORMAT_HALF;
}

bool is_32bit_integer(CUarray_format f) {
  return f == CU_AD_FORMAT_UNSIGNED_INT32 || f == CU_AD_FORMAT_SIGNED_INT32;
}

// Format and channel count of a linear or pitched resource.
Status check_element(CUarray_format format, unsigned channels) {
  if (channel_bytes(format) == 0)
    return invalid("unknown or unsupported element format " + std::to_string(int(format)));
  if (channels != 1 && channels != 2 && channels != 4)
    return invalid("elements have 1, 2 or 4 channels, not " + std::to_string(channels));
  return {};
}

void set_element(MimicTextureDescriptor& d, CUarray_format format, unsigned channels) {
  d.format = uint32_t(format);
  d.channels = channels;
  d.channel_bytes = uint32_t(channel_bytes(format));
  d.element_bytes = d.channels * d.channel_bytes;
}

// Fills the resource part of the descriptor: base, extent, pitches, element format.
Status describe_resource(Context* context, const CUDA_RESOURCE_DESC& r, MimicTextureDescriptor& d) {
  if (r.flags != 0) return invalid("CUDA_RESOURCE_DESC::flags must be 0");
  const DeviceProperties& p = context->device->properties();
  d.resource_type = uint32_t(r.resType);
  switch (r.resType) {
  case CU_RESOURCE_TYPE_ARRAY: {
    Array* a = find_array(r.res.array.hArray);
    if (!a) return Error("the resource's array is not a live CUarray", CUDA_ERROR_INVALID_HANDLE);
    const CUDA_ARRAY3D_DESCRIPTOR& ad = a->descriptor;
    set_element(d, ad.Format, ad.NumChannels);
    d.base = reinterpret_cast<uintptr_t>(a->data);
    d.width = uint32_t(ad.Width);
    d.height = uint32_t(a->rows);
    d.depth = uint32_t(a->slices);
    d.dimensions = ad.Depth ? 3 : ad.Height ? 2 : 1;
    d.pitch = a->row_bytes;
    d.slice_pitch = a->slice_bytes();
    return {};
  }
  case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
    return Error("mipmapped arrays are not supported yet", CUDA_ERROR_NOT_SUPPORTED);
  case CU_RESOURCE_TYPE_LINEAR: {
    const auto& l = r.res.linear;
    if (Status s = check_element(l.format, l.numChannels); !s) return s;
    set_element(d, l.format, l.numChannels);
    if (!l.devPtr || l.sizeInBytes == 0)
      return invalid("a linear resource needs a device pointer and a size");
    if (l.devPtr % p.texture_alignment)
      return invalid("a linear resource's address must be a multiple of " +
                     std::to_string(p.texture_alignment) +
                     " bytes (CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)");
    if (!find_allocation(reinterpret_cast<void*>(l.devPtr), l.sizeInBytes))
      return invalid("the linear resource's " + std::to_string(l.sizeInBytes) +
                     " bytes do not lie in one device allocation");
    size_t elements = l.sizeInBytes / d.element_bytes;
    if (elements == 0 || elements > (size_t(1) << 28))
      return invalid("a linear resource holds 1 to 2^28 elements "
                     "(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH)");
    d.base = l.devPtr;
    d.width = uint32_t(elements);
    d.height = d.depth = 1;
    d.dimensions = 1;
    d.pitch = d.slice_pitch = elements * d.element_bytes;
    return {};
  }
  case CU_RESOURCE_TYPE_PITCH2D: {
    const auto& q = r.res.pitch2D;
    if (Status s = check_element(q.format, q.numChannels); !s) return s;
    set_element(d, q.format, q.numChannels);
    if (!q.devPtr || q.width == 0 || q.height == 0)
      return invalid("a pitched resource needs a device pointer, a width and a height");
    if (q.devPtr % p.texture_alignment)
      return invalid("a pitched resource's address must be a multiple of " +
                     std::to_string(p.texture_alignment) +
                     " bytes (CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)");
    if (q.pitchInBytes % p.texture_pitch_alignment)
      return invalid("a pitched resource's pitch must be a multiple of " +
                     std::to_string(p.texture_pitch_alignment) +
                     " bytes (CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT)");
    if (q.width > 131072 || q.height > 65000)
      return invalid("a pitched resource is at most 131072 x 65000 elements");
    size_t row = q.width * d.element_bytes;
    if (q.pitchInBytes < row)
      return invalid("the pitch (" + std::to_string(q.pitchInBytes) +
                     " bytes) is shorter than a row (" + std::to_string(row) + " bytes)");
    size_t extent = q.pitchInBytes * (q.height - 1) + row;
    if (!find_allocation(reinterpret_cast<void*>(q.devPtr), extent))
      return invalid("the pitched resource's rows do not lie in one device allocation");
    d.base = q.devPtr;
    d.width = uint32_t(q.width);
    d.height = uint32_t(q.height);
    d.depth = 1;
    d.dimensions = 2;
    d.pitch = q.pitchInBytes;
    d.slice_pitch = extent;
    return {};
  }
  default:
    return invalid("unknown resource type " + std::to_string(int(r.resType)));
  }
}

Status describe_sampling(const CUDA_TEXTURE_DESC& t, MimicTextureDescriptor& d) {
  for (int i = 0; i < 3; ++i) {
    if (t.addressMode[i] < CU_TR_ADDRESS_MODE_WRAP || t.addressMode[i] > CU_TR_ADDRESS_MODE_BORDER)
      return invalid("unknown address mode " + std::to_string(int(t.addressMode[i])) +
                     " for dimension " + std::to_string(i));
    d.address_mode[i] = uint32_t(t.addressMode[i]);
  }
  if (t.filterMode != CU_TR_FILTER_MODE_POINT && t.filterMode != CU_TR_FILTER_MODE_LINEAR)
    return invalid("unknown filter mode " + std::to_string(int(t.filterMode)));
  if (t.mipmapFilterMode != CU_TR_FILTER_MODE_POINT &&
      t.mipmapFilterMode != CU_TR_FILTER_MODE_LINEAR)
    return invalid("unknown mipmap filter mode " + std::to_string(int(t.mipmapFilterMode)));
  if (t.flags & ~kKnownFlags)
    return invalid("unknown texture flags 0x" + [&] {
      char hex[16];
      snprintf(hex, sizeof hex, "%x", t.flags & ~kKnownFlags);
      return std::string(hex);
    }());
  if (t.maxAnisotropy > 16) return invalid("maxAnisotropy is at most 16");
  auto format = CUarray_format(d.format);
  bool reads_integers =
      !is_float_format(format) && ((t.flags & CU_TRSF_READ_AS_INTEGER) || is_32bit_integer(format));
  if (t.filterMode == CU_TR_FILTER_MODE_LINEAR && reads_integers)
    return invalid(
        "linear filtering needs values read as float: a float or half format, or 8/16-bit integers "
        "without CU_TRSF_READ_AS_INTEGER");
  if (t.filterMode == CU_TR_FILTER_MODE_LINEAR && d.resource_type == CU_RESOURCE_TYPE_LINEAR)
    return invalid("linear resources are fetched by index: use CU_TR_FILTER_MODE_POINT");
  if ((t.flags & CU_TRSF_SRGB) && format != CU_AD_FORMAT_UNSIGNED_INT8 &&
      format != CU_AD_FORMAT_UNORM_INT8X1)
    return invalid("CU_TRSF_SRGB needs an 8-bit unsigned format");
  d.filter_mode = uint32_t(t.filterMode);
  d.mipmap_filter_mode = uint32_t(t.mipmapFilterMode);
  d.flags = ((t.flags & CU_TRSF_READ_AS_INTEGER) ? kFlagReadAsInteger : 0) |
            ((t.flags & CU_TRSF_NORMALIZED_COORDINATES) ? kFlagNormalizedCoords : 0) |
            ((t.flags & CU_TRSF_SRGB) ? kFlagSrgb : 0) |
            ((t.flags & CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION) ? kFlagDisableTrilinear : 0) |
            ((t.flags & CU_TRSF_SEAMLESS_CUBEMAP) ? kFlagSeamlessCubemap : 0);
  for (int i = 0; i < 4; ++i)
    d.border_color[i] = t.borderColor[i];
  d.max_anisotropy = t.maxAnisotropy;
  d.mipmap_level_bias = t.mipmapLevelBias;
  d.min_mipmap_level_clamp = t.minMipmapLevelClamp;
  d.max_mipmap_level_clamp = t.maxMipmapLevelClamp;
  return {};
}

// A view may only restate the whole array (one level, one layer) in its own format.
Status check_view(const CUDA_RESOURCE_VIEW_DESC& v, const CUDA_RESOURCE_DESC& r,
                  const MimicTextureDescriptor& d) {
  if (r.resType != CU_RESOURCE_TYPE_ARRAY && r.resType != CU_RESOURCE_TYPE_MIPMAPPED_ARRAY)
    return invalid("a resource view applies to arrays only");
  size_t height = d.dimensions >= 2 ? d.height : 0, depth = d.dimensions == 3 ? d.depth : 0;
  if (v.width != d.width || v.height != height || v.depth != depth)
    return Error("resource views of part of an array are not supported: give the array's extent",
                 CUDA_ERROR_NOT_SUPPORTED);
  if (v.firstMipmapLevel || v.lastMipmapLevel || v.firstLayer || v.lastLayer)
    return Error("resource views of other levels or layers are not supported",
                 CUDA_ERROR_NOT_SUPPORTED);
  if (v.format != CU_RES_VIEW_FORMAT_NONE)
    return Error(
        "resource views that reinterpret the format are not supported: use CU_RES_VIEW_FORMAT_NONE",
        CUDA_ERROR_NOT_SUPPORTED);
  return {};
}

// Handles of objects whose descriptor a device reads from device memory -> the object.
struct DeviceHandles {
  std::mutex mutex;
  std::unordered_map<uint64_t, TextureObject*> objects;
};

DeviceHandles& device_handles() {
  static auto* h = new DeviceHandles;
  return *h;
}

// A copy of `d` in the device memory of `device`: descriptors are taken in order from
// blocks of device memory that are never freed or reused, as destroyed objects stay
// allocated (a kernel still holding a stale handle reads a descriptor, not other data).
Result<uint64_t> copy_to_device(const Device& device, const MimicTextureDescriptor& d) {
  constexpr size_t kBlockBytes = 64 << 10;
  struct Block {
    char* next = nullptr;
    size_t left = 0;
  };
  static std::mutex mutex;
  static auto* blocks = new std::map<const Device*, Block>;
  std::lock_guard lock(mutex);
  Block& b = (*blocks)[&device];
  if (b.left < sizeof d) {
    Result<void*> block = device.backend().allocate(device.backend_index(), kBlockBytes);
    if (!block)
      return block.error().context("allocating device memory for texture and surface descriptors");
    b.next = static_cast<char*>(block.value());
    b.left = kBlockBytes;
  }
  if (Status s = device.backend().copy(b.next, &d, sizeof d); !s)
    return s.error().context("writing a texture or surface descriptor to device memory");
  uint64_t address = reinterpret_cast<uintptr_t>(b.next);
  b.next += sizeof d;
  b.left -= sizeof d;
  return address;
}

Result<TextureObject*> add(std::unique_ptr<TextureObject> object) {
  const Device& device = *object->context->device;
  object->handle = reinterpret_cast<uintptr_t>(&object->descriptor);
  if (!device.properties().integrated) {
    Result<uint64_t> copy = copy_to_device(device, object->descriptor);
    if (!copy) return copy.error();
    object->handle = copy.value();
  }
  TextureObject* raw = object.release();
  if (raw->handle != reinterpret_cast<uintptr_t>(&raw->descriptor)) {
    DeviceHandles& h = device_handles();
    std::lock_guard lock(h.mutex);
    h.objects[raw->handle] = raw;
  }
  objects().add(raw);
  return raw;
}

// The live object `handle` names, of either kind.
TextureObject* find_object(uint64_t handle) {
  if (TextureObject* o = objects().find(reinterpret_cast<const void*>(uintptr_t(handle))))
    return o->handle == handle ? o : nullptr;
  DeviceHandles& h = device_handles();
  std::lock_guard lock(h.mutex);
  auto it = h.objects.find(handle);
  return it != h.objects.end() ? it->second : nullptr;
}

} // namespace

static_assert(offsetof(TextureObject, descriptor) == 0, "the handle is the descriptor's address");

Result<TextureObject*> create_texture_object(Context* context, const CUDA_RESOURCE_DESC& resource,
                                             const CUDA_TEXTURE_DESC* texture,
                                             const CUDA_RESOURCE_VIEW_DESC* view) {
  if (!texture) return invalid("a texture object needs a CUDA_TEXTURE_DESC");
  auto object = std::make_unique<TextureObject>();
  MimicTextureDescriptor& d = object->descriptor;
  d.magic = kTextureMagic;
  d.version = kDescriptorVersion;
  if (Status s = describe_resource(context, resource, d); !s) return s.error();
  if (Status s = describe_sampling(*texture, d); !s) return s.error();
  if (view) {
    if (Status s = check_view(*view, resource, d); !s) return s.error();
    object->view = *view;
    object->has_view = true;
  }
  object->context = context;
  object->resource = resource;
  object->texture = *texture;
  auto added = add(std::move(object));
  if (!added) return added.error();
  return added.value();
}

Result<TextureObject*> create_surface_object(Context* context, const CUDA_RESOURCE_DESC& resource) {
  if (resource.resType != CU_RESOURCE_TYPE_ARRAY)
    return invalid("a surface object's resource must be a CUDA array (CU_RESOURCE_TYPE_ARRAY)");
  if (Array* a = find_array(resource.res.array.hArray);
      a && !(a->descriptor.Flags & CUDA_ARRAY3D_SURFACE_LDST))
    return invalid("the array was not created with CUDA_ARRAY3D_SURFACE_LDST");
  auto object = std::make_unique<TextureObject>();
  MimicTextureDescriptor& d = object->descriptor;
  d.magic = kSurfaceMagic;
  d.version = kDescriptorVersion;
  if (Status s = describe_resource(context, resource, d); !s) return s.error();
  object->context = context;
  object->surface = true;
  object->resource = resource;
  auto added = add(std::move(object));
  if (!added) return added.error();
  return added.value();
}

CUresult destroy_texture_object(TextureObject* object) {
  // Kept allocated: a kernel still holding the handle reads a descriptor, never freed memory.
  if (!objects().remove(object)) return CUDA_ERROR_INVALID_HANDLE;
  DeviceHandles& h = device_handles();
  std::lock_guard lock(h.mutex);
  h.objects.erase(object->handle);
  return CUDA_SUCCESS;
}

TextureObject* find_texture_object(CUtexObject handle) {
  TextureObject* o = find_object(handle);
  return o && !o->surface ? o : nullptr;
}

TextureObject* find_surface_object(CUsurfObject handle) {
  TextureObject* o = find_object(handle);
  return o && o->surface ? o : nullptr;
}

void retire_texture_objects(Context* context) {
  std::vector<TextureObject*> doomed;
  objects().for_each([&](TextureObject* o) {
    if (o->context == context) doomed.push_back(o);
  });
  for (TextureObject* o : doomed)
    destroy_texture_object(o);
}

} // namespace mimic::runtime
