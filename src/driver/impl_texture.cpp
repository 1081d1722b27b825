// Texture and surface objects (runtime/texture.h): the handle is the device address of the
// object's descriptor, which kernels read directly.
#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "runtime/texture.h"
#include "support/log.h"

namespace mimic::driver::impl {

namespace {

CUresult report(const Error& e) {
  log_error(e.message());
  return e.code() ? CUresult(e.code()) : CUDA_ERROR_INVALID_VALUE;
}

// A handle of 0 is CUDA_ERROR_INVALID_VALUE, any other value that is not a live object of
// the kind CUDA_ERROR_INVALID_HANDLE.
CUresult texture_of(CUtexObject handle, runtime::TextureObject*& out) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  out = runtime::find_texture_object(handle);
  return out ? CUDA_SUCCESS : handle ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
}

CUresult surface_of(CUsurfObject handle, runtime::TextureObject*& out) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  out = runtime::find_surface_object(handle);
  return out ? CUDA_SUCCESS : handle ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
}

} // namespace

CUresult cuTexObjectCreate_v5000(CUtexObject* pTexObject, const CUDA_RESOURCE_DESC* pResDesc,
                                 const CUDA_TEXTURE_DESC* pTexDesc,
                                 const CUDA_RESOURCE_VIEW_DESC* pResViewDesc) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c)) return r;
  if (!pTexObject || !pResDesc || !pTexDesc) return CUDA_ERROR_INVALID_VALUE;
  auto object = runtime::create_texture_object(c, *pResDesc, pTexDesc, pResViewDesc);
  if (!object) return report(object.error());
  *pTexObject = CUtexObject(object.value()->handle);
  return CUDA_SUCCESS;
}

CUresult cuTexObjectDestroy_v5000(CUtexObject texObject) {
  runtime::TextureObject* o;
  if (CUresult r = texture_of(texObject, o)) return r;
  return runtime::destroy_texture_object(o);
}

CUresult cuTexObjectGetResourceDesc_v5000(CUDA_RESOURCE_DESC* pResDesc, CUtexObject texObject) {
  runtime::TextureObject* o;
  if (CUresult r = texture_of(texObject, o)) return r;
  if (!pResDesc) return CUDA_ERROR_INVALID_VALUE;
  *pResDesc = o->resource;
  return CUDA_SUCCESS;
}

CUresult cuTexObjectGetTextureDesc_v5000(CUDA_TEXTURE_DESC* pTexDesc, CUtexObject texObject) {
  runtime::TextureObject* o;
  if (CUresult r = texture_of(texObject, o)) return r;
  if (!pTexDesc) return CUDA_ERROR_INVALID_VALUE;
  *pTexDesc = o->texture;
  return CUDA_SUCCESS;
}

CUresult cuTexObjectGetResourceViewDesc_v5000(CUDA_RESOURCE_VIEW_DESC* pResViewDesc,
                                              CUtexObject texObject) {
  runtime::TextureObject* o;
  if (CUresult r = texture_of(texObject, o)) return r;
  if (!pResViewDesc || !o->has_view)
    return CUDA_ERROR_INVALID_VALUE; // as CUDA: no view was given at creation
  *pResViewDesc = o->view;
  return CUDA_SUCCESS;
}

CUresult cuSurfObjectCreate_v5000(CUsurfObject* pSurfObject, const CUDA_RESOURCE_DESC* pResDesc) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c)) return r;
  if (!pSurfObject || !pResDesc) return CUDA_ERROR_INVALID_VALUE;
  auto object = runtime::create_surface_object(c, *pResDesc);
  if (!object) return report(object.error());
  *pSurfObject = CUsurfObject(object.value()->handle);
  return CUDA_SUCCESS;
}

CUresult cuSurfObjectDestroy_v5000(CUsurfObject surfObject) {
  runtime::TextureObject* o;
  if (CUresult r = surface_of(surfObject, o)) return r;
  return runtime::destroy_texture_object(o);
}

CUresult cuSurfObjectGetResourceDesc_v5000(CUDA_RESOURCE_DESC* pResDesc, CUsurfObject surfObject) {
  runtime::TextureObject* o;
  if (CUresult r = surface_of(surfObject, o)) return r;
  if (!pResDesc) return CUDA_ERROR_INVALID_VALUE;
  *pResDesc = o->resource;
  return CUDA_SUCCESS;
}

} // namespace mimic::driver::impl
