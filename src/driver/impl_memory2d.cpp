// Pitched and 3D copies and fills, peer copies, and CUDA arrays. Every side of a copy
// becomes a pitched region (runtime/pitched.h): linear memory as the program describes it,
// an array as its row-major backing store. Device-side regions are checked against the
// allocation registry before any byte moves, so a wild pointer is CUDA_ERROR_INVALID_VALUE.
#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "driver/impl_copy.h"
#include "runtime/array.h"
#include "runtime/graph.h"
#include "runtime/memory.h"
#include "runtime/pitched.h"
#include "runtime/stream.h"

namespace mimic::driver::impl {

namespace {

using runtime::MemoryKind;

// One side of a copy as the CUDA_MEMCPY2D/3D/3D_PEER structures describe it.
struct CopySide {
  CUmemorytype type = CU_MEMORYTYPE_HOST;
  const void* host = nullptr;
  CUdeviceptr device = 0;
  CUarray array = nullptr;
  CUcontext context = nullptr; // peer copies only
  size_t x_bytes = 0, y = 0, z = 0, lod = 0;
  size_t pitch = 0, height = 0;
};

struct CopyRequest {
  CopySide dst, src;
  runtime::CopyExtent extent;
};

// A resolved side: the region to copy and whether it is pageable host memory (which the
// stream may only touch while the caller waits).
struct Region {
  runtime::PitchedRegion region;
  bool pageable_host = false;
};

bool is_pinned_host(const void* p, size_t bytes) {
  auto a = runtime::find_allocation(p, bytes ? bytes : 1);
  return a && a->kind != MemoryKind::Device;
}

// start = base + z * pitch * height + y * pitch + x, without overflow.
bool offset_address(uintptr_t base, size_t x, size_t y, size_t z, size_t pitch, size_t slice_pitch,
                    uintptr_t& out) {
  size_t by_z = 0, by_y = 0, offset = 0;
  if (__builtin_mul_overflow(z, slice_pitch, &by_z) || __builtin_mul_overflow(y, pitch, &by_y) ||
      __builtin_add_overflow(by_z, by_y, &offset) || __builtin_add_overflow(offset, x, &offset))
    return false;
  return !__builtin_add_overflow(base, offset, &out);
}

CUresult resolve_array_side(const CopySide& side, const runtime::CopyExtent& e, Region& out) {
  runtime::Array* a = runtime::find_array(side.array);
  if (!a) return side.array ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
  if (side.lod != 0) return CUDA_ERROR_INVALID_VALUE;
  // Its memory may have gone with its context, and the address been handed out again.
  auto storage = runtime::find_allocation(a->data);
  if (!storage || storage->buffer_id != a->buffer_id) return CUDA_ERROR_INVALID_VALUE;
  if (side.x_bytes > a->row_bytes || e.width_bytes > a->row_bytes - side.x_bytes ||
      side.y > a->rows || e.height > a->rows - side.y || side.z > a->slices ||
      e.depth > a->slices - side.z)
    return CUDA_ERROR_INVALID_VALUE;
  out.region.pitch = a->row_bytes;
  out.region.slice_pitch = a->slice_bytes();
  out.region.device = true;
  out.region.start = reinterpret_cast<uintptr_t>(a->data) + side.z * a->slice_bytes() +
                     side.y * a->row_bytes + side.x_bytes;
  return CUDA_SUCCESS;
}

CUresult resolve_side(const CopySide& side, const runtime::CopyExtent& e, Region& out) {
  if (side.type == CU_MEMORYTYPE_ARRAY) return resolve_array_side(side, e, out);
  if (side.lod != 0) return CUDA_ERROR_INVALID_VALUE;
  uintptr_t base = 0;
  switch (side.type) {
  case CU_MEMORYTYPE_HOST:
    base = reinterpret_cast<uintptr_t>(side.host);
    break;
  case CU_MEMORYTYPE_DEVICE:
  case CU_MEMORYTYPE_UNIFIED:
    base = uintptr_t(side.device);
    out.region.device = true;
    break;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (base == 0) return CUDA_ERROR_INVALID_VALUE;
  size_t pitch = side.pitch;
  size_t slice_pitch = 0;
  if (e.depth > 1 && __builtin_mul_overflow(pitch, side.height, &slice_pitch))
    return CUDA_ERROR_INVALID_VALUE;
  out.region.pitch = pitch;
  out.region.slice_pitch = slice_pitch;
  if (!offset_address(base, side.x_bytes, side.y, side.z, pitch, slice_pitch, out.region.start))
    return CUDA_ERROR_INVALID_VALUE;
  // A unified address the registry does not know is pageable host memory.
  if (side.type == CU_MEMORYTYPE_UNIFIED &&
      !runtime::find_allocation(reinterpret_cast<void*>(out.region.start)))
    out.region.device = false;
  // Host rows outside one pinned block may be gone when the caller returns.
  size_t span = 0;
  if (!out.region.device)
    out.pageable_host = !runtime::region_span(out.region, e, span) ||
                        !is_pinned_host(reinterpret_cast<void*>(out.region.start), span);
  return CUDA_SUCCESS;
}

CUresult stream_for(CUstream h, bool per_thread, runtime::Context*& c, runtime::Stream*& s) {
  if (CUresult r = current_context(c)) return r;
  s = runtime::resolve_stream(h, c, per_thread);
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  return check_async_work(s); // the legacy stream is unusable during capture
}

// The work of a checked copy, and whether a side is pageable host memory.
CUresult prepare_copy(const CopyRequest& request, runtime::Context* c, runtime::Work& work,
                      bool& pageable_host) {
  pageable_host = false;
  if (request.extent.empty()) {
    work = [] { return CUDA_SUCCESS; };
    return CUDA_SUCCESS;
  }
  Region dst, src;
  if (CUresult r = resolve_side(request.dst, request.extent, dst)) return r;
  if (CUresult r = resolve_side(request.src, request.extent, src)) return r;
  if (CUresult r = runtime::check_region(dst.region, request.extent)) return r;
  if (CUresult r = runtime::check_region(src.region, request.extent)) return r;
  runtime::Backend* backend = &c->device->backend();
  work = [backend, d = dst.region, sr = src.region, e = request.extent] {
    return runtime::copy_pitched(*backend, d, sr, e) ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
  };
  pageable_host = dst.pageable_host || src.pageable_host;
  return CUDA_SUCCESS;
}

// Copies synchronously unless `async` and neither side is pageable host memory.
CUresult copy(const CopyRequest& request, CUstream h, bool per_thread, bool async) {
  runtime::Context* c;
  runtime::Stream* s;
  if (CUresult r = stream_for(h, per_thread, c, s)) return r;
  if (request.extent.empty()) return CUDA_SUCCESS;
  runtime::Work work;
  bool pageable_host = false;
  if (CUresult r = prepare_copy(request, c, work, pageable_host)) return r;
  if (async && runtime::is_capturing(s)) {
    runtime::GraphNode node;
    node.type = CU_GRAPH_NODE_TYPE_MEMCPY;
    node.context = c;
    node.work = std::move(work);
    return runtime::capture_node(s, node);
  }
  if (!async || pageable_host) return runtime::submit_and_wait(s, std::move(work));
  runtime::submit(s, std::move(work));
  return CUDA_SUCCESS;
}

CopyRequest from_2d(const CUDA_MEMCPY2D* p) {
  CopyRequest r;
  r.src = {p->srcMemoryType, p->srcHost, p->srcDevice,
           p->srcArray,      nullptr,    p->srcXInBytes,
           p->srcY,          0,          0,
           p->srcPitch,      0};
  r.dst = {p->dstMemoryType, p->dstHost, p->dstDevice,
           p->dstArray,      nullptr,    p->dstXInBytes,
           p->dstY,          0,          0,
           p->dstPitch,      0};
  r.extent = {p->WidthInBytes, p->Height, 1};
  return r;
}

CopyRequest from_3d(const CUDA_MEMCPY3D* p) {
  CopyRequest r;
  r.src = {p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, nullptr,     p->srcXInBytes,
           p->srcY,          p->srcZ,    p->srcLOD,    p->srcPitch, p->srcHeight};
  r.dst = {p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, nullptr,     p->dstXInBytes,
           p->dstY,          p->dstZ,    p->dstLOD,    p->dstPitch, p->dstHeight};
  r.extent = {p->WidthInBytes, p->Height, p->Depth};
  return r;
}

CopyRequest from_3d_peer(const CUDA_MEMCPY3D_PEER* p) {
  CopyRequest r;
  r.src = {p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcContext, p->srcXInBytes,
           p->srcY,          p->srcZ,    p->srcLOD,    p->srcPitch, p->srcHeight};
  r.dst = {p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstContext, p->dstXInBytes,
           p->dstY,          p->dstZ,    p->dstLOD,    p->dstPitch, p->dstHeight};
  r.extent = {p->WidthInBytes, p->Height, p->Depth};
  return r;
}

CUresult copy_2d(const CUDA_MEMCPY2D* p, CUstream h, bool per_thread, bool async) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  return copy(from_2d(p), h, per_thread, async);
}

CUresult copy_3d(const CUDA_MEMCPY3D* p, CUstream h, bool per_thread, bool async) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (p->reserved0 || p->reserved1) return CUDA_ERROR_INVALID_VALUE;
  return copy(from_3d(p), h, per_thread, async);
}

// Peer contexts must be live; NULL means the current context. Everything shares one
// address space, so a peer copy is an ordinary copy.
CUresult check_peer_context(CUcontext h) {
  return h == nullptr || runtime::find_context(h) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult copy_3d_peer(const CUDA_MEMCPY3D_PEER* p, CUstream h, bool per_thread, bool async) {
  if (!p) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = check_peer_context(p->srcContext)) return r;
  if (CUresult r = check_peer_context(p->dstContext)) return r;
  return copy(from_3d_peer(p), h, per_thread, async);
}

CUresult copy_peer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n,
                   CUstream h, bool per_thread, bool async) {
  if (!dst_ctx || !src_ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if (CUresult r = check_peer_context(dst_ctx)) return r;
  if (CUresult r = check_peer_context(src_ctx)) return r;
  CopyRequest request;
  request.dst.type = CU_MEMORYTYPE_DEVICE;
  request.dst.device = dst;
  request.src.type = CU_MEMORYTYPE_DEVICE;
  request.src.device = src;
  request.extent = {n, 1, 1};
  return copy(request, h, per_thread, async);
}

CUresult fill_2d(CUdeviceptr dst, size_t pitch, uint32_t value, size_t element, size_t width,
                 size_t height, CUstream h, bool per_thread, bool async) {
  runtime::Context* c;
  runtime::Stream* s;
  if (CUresult r = stream_for(h, per_thread, c, s)) return r;
  if (width == 0 || height == 0) return CUDA_SUCCESS;
  size_t width_bytes = 0;
  if (__builtin_mul_overflow(width, element, &width_bytes)) return CUDA_ERROR_INVALID_VALUE;
  if (dst % element != 0 || (height > 1 && pitch % element != 0)) return CUDA_ERROR_INVALID_VALUE;
  runtime::PitchedRegion region{uintptr_t(dst), height > 1 ? pitch : width_bytes, 0, true};
  runtime::CopyExtent extent{width_bytes, height, 1};
  if (CUresult r = runtime::check_region(region, extent)) return r;
  runtime::Backend* backend = &c->device->backend();
  auto work = [backend, region, value, element, extent] {
    return runtime::fill_pitched(*backend, region, value, element, extent) ? CUDA_SUCCESS
                                                                           : CUDA_ERROR_UNKNOWN;
  };
  if (async && runtime::is_capturing(s)) {
    runtime::GraphNode node;
    node.type = CU_GRAPH_NODE_TYPE_MEMSET;
    node.context = c;
    node.memset = CUDA_MEMSET_NODE_PARAMS{dst, pitch, value, unsigned(element), width, height};
    node.work = work;
    return runtime::capture_node(s, node);
  }
  if (!async) return runtime::submit_and_wait(s, work);
  runtime::submit(s, work);
  return CUDA_SUCCESS;
}

} // namespace

} // namespace mimic::driver::impl

namespace mimic::driver {

CUresult prepare_copy_3d(runtime::Context* c, const CUDA_MEMCPY3D& p, runtime::Work& work) {
  bool pageable_host = false;
  return prepare_copy_3d(c, p, work, pageable_host);
}

CUresult prepare_copy_3d(runtime::Context* c, const CUDA_MEMCPY3D& p, runtime::Work& work, bool& pageable_host) {
  if (p.reserved0 || p.reserved1) return CUDA_ERROR_INVALID_VALUE;
  pageable_host = false;
  return impl::prepare_copy(impl::from_3d(&p), c, work, pageable_host);
}

} // namespace mimic::driver

namespace mimic::driver::impl {

// ---- 2D and 3D copies

CUresult cuMemcpy2D_v3020(const CUDA_MEMCPY2D* p) {
  return copy_2d(p, nullptr, false, false);
}
CUresult cuMemcpy2D_v7000_ptds(const CUDA_MEMCPY2D* p) {
  return copy_2d(p, nullptr, true, false);
}
CUresult cuMemcpy2DUnaligned_v3020(const CUDA_MEMCPY2D* p) {
  return copy_2d(p, nullptr, false, false);
}
CUresult cuMemcpy2DUnaligned_v7000_ptds(const CUDA_MEMCPY2D* p) {
  return copy_2d(p, nullptr, true, false);
}
CUresult cuMemcpy2DAsync_v3020(const CUDA_MEMCPY2D* p, CUstream s) {
  return copy_2d(p, s, false, true);
}
CUresult cuMemcpy2DAsync_v7000_ptsz(const CUDA_MEMCPY2D* p, CUstream s) {
  return copy_2d(p, s, true, true);
}

CUresult cuMemcpy3D_v3020(const CUDA_MEMCPY3D* p) {
  return copy_3d(p, nullptr, false, false);
}
CUresult cuMemcpy3D_v7000_ptds(const CUDA_MEMCPY3D* p) {
  return copy_3d(p, nullptr, true, false);
}
CUresult cuMemcpy3DAsync_v3020(const CUDA_MEMCPY3D* p, CUstream s) {
  return copy_3d(p, s, false, true);
}
CUresult cuMemcpy3DAsync_v7000_ptsz(const CUDA_MEMCPY3D* p, CUstream s) {
  return copy_3d(p, s, true, true);
}

CUresult cuMemcpy3DPeer_v4000(const CUDA_MEMCPY3D_PEER* p) {
  return copy_3d_peer(p, nullptr, false, false);
}
CUresult cuMemcpy3DPeer_v7000_ptds(const CUDA_MEMCPY3D_PEER* p) {
  return copy_3d_peer(p, nullptr, true, false);
}
CUresult cuMemcpy3DPeerAsync_v4000(const CUDA_MEMCPY3D_PEER* p, CUstream s) {
  return copy_3d_peer(p, s, false, true);
}
CUresult cuMemcpy3DPeerAsync_v7000_ptsz(const CUDA_MEMCPY3D_PEER* p, CUstream s) {
  return copy_3d_peer(p, s, true, true);
}

// ---- peer copies

CUresult cuMemcpyPeer_v4000(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                            size_t n) {
  return copy_peer(dst, dctx, src, sctx, n, nullptr, false, false);
}
CUresult cuMemcpyPeer_v7000_ptds(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                                 size_t n) {
  return copy_peer(dst, dctx, src, sctx, n, nullptr, true, false);
}
CUresult cuMemcpyPeerAsync_v4000(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                                 size_t n, CUstream s) {
  return copy_peer(dst, dctx, src, sctx, n, s, false, true);
}
CUresult cuMemcpyPeerAsync_v7000_ptsz(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                                      CUcontext sctx, size_t n, CUstream s) {
  return copy_peer(dst, dctx, src, sctx, n, s, true, true);
}

// ---- 2D fills

CUresult cuMemsetD2D8_v3020(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h) {
  return fill_2d(d, pitch, v, 1, w, h, nullptr, false, false);
}
CUresult cuMemsetD2D8_v7000_ptds(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h) {
  return fill_2d(d, pitch, v, 1, w, h, nullptr, true, false);
}
CUresult cuMemsetD2D16_v3020(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h) {
  return fill_2d(d, pitch, v, 2, w, h, nullptr, false, false);
}
CUresult cuMemsetD2D16_v7000_ptds(CUdeviceptr d, size_t pitch, unsigned short v, size_t w,
                                  size_t h) {
  return fill_2d(d, pitch, v, 2, w, h, nullptr, true, false);
}
CUresult cuMemsetD2D32_v3020(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h) {
  return fill_2d(d, pitch, v, 4, w, h, nullptr, false, false);
}
CUresult cuMemsetD2D32_v7000_ptds(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h) {
  return fill_2d(d, pitch, v, 4, w, h, nullptr, true, false);
}
CUresult cuMemsetD2D8Async_v3020(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h,
                                 CUstream s) {
  return fill_2d(d, pitch, v, 1, w, h, s, false, true);
}
CUresult cuMemsetD2D8Async_v7000_ptsz(CUdeviceptr d, size_t pitch, unsigned char v, size_t w,
                                      size_t h, CUstream s) {
  return fill_2d(d, pitch, v, 1, w, h, s, true, true);
}
CUresult cuMemsetD2D16Async_v3020(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h,
                                  CUstream s) {
  return fill_2d(d, pitch, v, 2, w, h, s, false, true);
}
CUresult cuMemsetD2D16Async_v7000_ptsz(CUdeviceptr d, size_t pitch, unsigned short v, size_t w,
                                       size_t h, CUstream s) {
  return fill_2d(d, pitch, v, 2, w, h, s, true, true);
}
CUresult cuMemsetD2D32Async_v3020(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h,
                                  CUstream s) {
  return fill_2d(d, pitch, v, 4, w, h, s, false, true);
}
CUresult cuMemsetD2D32Async_v7000_ptsz(CUdeviceptr d, size_t pitch, unsigned int v, size_t w,
                                       size_t h, CUstream s) {
  return fill_2d(d, pitch, v, 4, w, h, s, true, true);
}

// ---- arrays

CUresult cuArray3DCreate_v3020(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c)) return r;
  if (!pHandle || !desc) return CUDA_ERROR_INVALID_VALUE;
  auto a = runtime::create_array(c, *desc);
  if (!a) return CUresult(a.error().code());
  *pHandle = runtime::to_handle(a.value());
  return CUDA_SUCCESS;
}

CUresult cuArrayCreate_v3020(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* desc) {
  if (!desc) return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY3D_DESCRIPTOR d = {};
  d.Width = desc->Width;
  d.Height = desc->Height;
  d.Format = desc->Format;
  d.NumChannels = desc->NumChannels;
  return cuArray3DCreate_v3020(pHandle, &d);
}

CUresult cuArray3DGetDescriptor_v3020(CUDA_ARRAY3D_DESCRIPTOR* out, CUarray h) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c)) return r;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  runtime::Array* a = runtime::find_array(h);
  if (!a) return CUDA_ERROR_INVALID_HANDLE;
  *out = a->descriptor;
  return CUDA_SUCCESS;
}

CUresult cuArrayGetDescriptor_v3020(CUDA_ARRAY_DESCRIPTOR* out, CUarray h) {
  CUDA_ARRAY3D_DESCRIPTOR d;
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = cuArray3DGetDescriptor_v3020(&d, h)) return r;
  out->Width = d.Width;
  out->Height = d.Height;
  out->Format = d.Format;
  out->NumChannels = d.NumChannels;
  return CUDA_SUCCESS;
}

CUresult cuArrayDestroy_v2000(CUarray h) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c)) return r;
  runtime::Array* a = runtime::find_array(h);
  if (!a) return CUDA_ERROR_INVALID_HANDLE;
  // Copies into or out of the array may still be queued.
  runtime::synchronize_context(a->context);
  return runtime::destroy_array(a);
}

} // namespace mimic::driver::impl
