// Batched copies (CUDA 12.8+): cuMemcpyBatchAsync (pointer to pointer) and
// cuMemcpy3DBatchAsync (pointers and arrays). Every copy is checked before any is
// enqueued; the batch then runs as one stream item, in stream order. The 12.8 forms report
// the index of the copy that failed validation in *failIdx (SIZE_MAX when the error is
// not about one copy); the 13.0 forms dropped that parameter.
#include <cstdint>
#include <vector>

#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "driver/impl_copy.h"
#include "runtime/array.h"
#include "runtime/graph.h"
#include "runtime/memory.h"
#include "runtime/stream.h"

namespace mimic::driver::impl {

namespace {

constexpr size_t kNoCopy = SIZE_MAX;

// Reports `r` for copy `index` through failIdx (when given).
CUresult fail(size_t* failIdx, size_t index, CUresult r) {
  if (failIdx) *failIdx = index;
  return r;
}

bool valid_order(CUmemcpySrcAccessOrder order) {
  return order == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
         order == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL ||
         order == CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
}

bool valid_location(const CUmemLocation& l) {
  return l.type >= CU_MEM_LOCATION_TYPE_INVALID && l.type <= CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
}

// The batch's stream: any but the legacy NULL stream (the per-thread forms' NULL is the
// per-thread stream, which is allowed).
CUresult batch_stream(CUstream h, bool per_thread, runtime::Context*& c, runtime::Stream*& s) {
  if (CUresult r = current_context(c)) return r;
  if (h == CU_STREAM_LEGACY || (!h && !per_thread)) return CUDA_ERROR_INVALID_VALUE;
  s = runtime::resolve_stream(h, c, per_thread);
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  return check_async_work(s);
}

// Runs the batch on the stream. It waits when a source must be read before the call
// returns (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL) or pageable host memory is
// involved, which the caller may reuse once the call returns.
CUresult enqueue(runtime::Stream* s, std::vector<runtime::Work> copies, bool wait) {
  auto work = [copies = std::move(copies)] {
    for (const runtime::Work& copy : copies)
      if (CUresult r = copy()) return r;
    return CUDA_SUCCESS;
  };
  if (wait) return runtime::submit_and_wait(s, std::move(work));
  runtime::submit(s, std::move(work));
  return CUDA_SUCCESS;
}

CUresult batch(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
               CUmemcpyAttributes* attrs, size_t* attrIdxs, size_t numAttrs, size_t* failIdx,
               CUstream h, bool per_thread) {
  if (failIdx) *failIdx = kNoCopy;
  runtime::Context* c;
  runtime::Stream* s;
  if (CUresult r = batch_stream(h, per_thread, c, s)) return r;
  if (count == 0 || !dsts || !srcs || !sizes || numAttrs == 0 || numAttrs > count || !attrs ||
      !attrIdxs)
    return CUDA_ERROR_INVALID_VALUE;
  if (attrIdxs[0] != 0) return CUDA_ERROR_INVALID_VALUE;
  for (size_t k = 0; k < numAttrs; ++k) {
    if (k > 0 && attrIdxs[k] <= attrIdxs[k - 1]) return CUDA_ERROR_INVALID_VALUE;
    if (attrIdxs[k] >= count) return CUDA_ERROR_INVALID_VALUE;
    const CUmemcpyAttributes& a = attrs[k];
    if (!valid_order(a.srcAccessOrder) ||
        (a.flags & ~unsigned(CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)) ||
        !valid_location(a.srcLocHint) || !valid_location(a.dstLocHint))
      return fail(failIdx, attrIdxs[k], CUDA_ERROR_INVALID_VALUE);
  }
  runtime::Backend* backend = &c->device->backend();
  bool capturing = runtime::is_capturing(s);
  bool wait = false;
  std::vector<runtime::Work> copies;
  std::vector<runtime::GraphNode> nodes;
  size_t attr = 0;
  for (size_t i = 0; i < count; ++i) {
    while (attr + 1 < numAttrs && attrIdxs[attr + 1] <= i)
      ++attr;
    size_t n = sizes[i];
    if (n == 0) continue;
    void* dst = reinterpret_cast<void*>(uintptr_t(dsts[i]));
    const void* src = reinterpret_cast<const void*>(uintptr_t(srcs[i]));
    if (!dst || !src) return fail(failIdx, i, CUDA_ERROR_INVALID_VALUE);
    // An address inside an allocation must not run past its end; any other address is
    // host memory (unified addressing).
    bool dst_device = runtime::find_allocation(dst).has_value();
    bool src_device = runtime::find_allocation(src).has_value();
    if ((dst_device && !runtime::find_allocation(dst, n)) ||
        (src_device && !runtime::find_allocation(src, n)))
      return fail(failIdx, i, CUDA_ERROR_INVALID_VALUE);
    CUmemcpySrcAccessOrder order = attrs[attr].srcAccessOrder;
    wait |= !dst_device || order == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL ||
            (!src_device && order == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    if (capturing)
      nodes.push_back(memcpy_node(c, dst, src, n));
    else
      copies.push_back([backend, dst, src, n] {
        Status st = backend->copy(dst, src, n);
        return st ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
      });
  }
  if (capturing) {
    for (const runtime::GraphNode& node : nodes)
      if (CUresult r = runtime::capture_node(s, node)) return r;
    return CUDA_SUCCESS;
  }
  return enqueue(s, std::move(copies), wait);
}

// One operand of a 3D batch copy as a side of CUDA_MEMCPY3D. `element` is the element
// size of the copy (1 for pointer-to-pointer copies, else the array's).
CUresult operand_side(const CUmemcpy3DOperand& o, const CUextent3D& extent, size_t element,
                      bool source, CUDA_MEMCPY3D& p) {
  CUmemorytype& type = source ? p.srcMemoryType : p.dstMemoryType;
  switch (o.type) {
  case CU_MEMCPY_OPERAND_TYPE_POINTER: {
    const auto& q = o.op.ptr;
    if (!q.ptr || (q.rowLength && q.rowLength < extent.width) ||
        (q.layerHeight && q.layerHeight < extent.height) || !valid_location(q.locHint))
      return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = (q.rowLength ? q.rowLength : extent.width) * element;
    size_t height = q.layerHeight ? q.layerHeight : extent.height;
    type = CU_MEMORYTYPE_UNIFIED;
    (source ? p.srcDevice : p.dstDevice) = q.ptr;
    (source ? p.srcPitch : p.dstPitch) = pitch;
    (source ? p.srcHeight : p.dstHeight) = height;
    return CUDA_SUCCESS;
  }
  case CU_MEMCPY_OPERAND_TYPE_ARRAY: {
    const auto& a = o.op.array;
    type = CU_MEMORYTYPE_ARRAY;
    (source ? p.srcArray : p.dstArray) = a.array;
    (source ? p.srcXInBytes : p.dstXInBytes) = a.offset.x * element;
    (source ? p.srcY : p.dstY) = a.offset.y;
    (source ? p.srcZ : p.dstZ) = a.offset.z;
    return CUDA_SUCCESS;
  }
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

// Element size of an array operand; 0 for a pointer; nullopt-like CUresult for a stale array.
CUresult operand_element(const CUmemcpy3DOperand& o, size_t& element) {
  element = 0;
  if (o.type != CU_MEMCPY_OPERAND_TYPE_ARRAY) return CUDA_SUCCESS;
  runtime::Array* a = runtime::find_array(o.op.array.array);
  if (!a) return o.op.array.array ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
  element = a->element_bytes;
  return CUDA_SUCCESS;
}

CUresult batch_3d(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* opList, size_t* failIdx,
                  unsigned long long flags, CUstream h, bool per_thread) {
  if (failIdx) *failIdx = kNoCopy;
  runtime::Context* c;
  runtime::Stream* s;
  if (CUresult r = batch_stream(h, per_thread, c, s)) return r;
  if (numOps == 0 || !opList || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (runtime::is_capturing(s))
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; // not recorded as graph nodes yet
  bool wait = false;
  std::vector<runtime::Work> copies;
  for (size_t i = 0; i < numOps; ++i) {
    const CUDA_MEMCPY3D_BATCH_OP& op = opList[i];
    if (!valid_order(op.srcAccessOrder) ||
        (op.flags & ~unsigned(CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)) ||
        op.extent.width == 0 || op.extent.height == 0 || op.extent.depth == 0)
      return fail(failIdx, i, CUDA_ERROR_INVALID_VALUE);
    size_t src_element, dst_element;
    if (CUresult r = operand_element(op.src, src_element)) return fail(failIdx, i, r);
    if (CUresult r = operand_element(op.dst, dst_element)) return fail(failIdx, i, r);
    if (src_element && dst_element && src_element != dst_element)
      return fail(failIdx, i, CUDA_ERROR_INVALID_VALUE); // arrays of different element sizes
    size_t element = src_element ? src_element : dst_element ? dst_element : 1;
    CUDA_MEMCPY3D p{};
    if (CUresult r = operand_side(op.src, op.extent, element, true, p)) return fail(failIdx, i, r);
    if (CUresult r = operand_side(op.dst, op.extent, element, false, p)) return fail(failIdx, i, r);
    p.WidthInBytes = op.extent.width * element;
    p.Height = op.extent.height;
    p.Depth = op.extent.depth;
    runtime::Work work;
    bool pageable = false;
    if (CUresult r = prepare_copy_3d(c, p, work, pageable)) return fail(failIdx, i, r);
    wait |= pageable || op.srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    copies.push_back(std::move(work));
  }
  return enqueue(s, std::move(copies), wait);
}

} // namespace

CUresult cuMemcpyBatchAsync_v12080(CUdeviceptr_v2* dsts, CUdeviceptr_v2* srcs, size_t* sizes,
                                   size_t count, CUmemcpyAttributes_v1* attrs, size_t* attrIdxs,
                                   size_t numAttrs, size_t* failIdx, CUstream hStream) {
  return batch(dsts, srcs, sizes, count, attrs, attrIdxs, numAttrs, failIdx, hStream, false);
}
CUresult cuMemcpyBatchAsync_v12080_ptsz(CUdeviceptr_v2* dsts, CUdeviceptr_v2* srcs, size_t* sizes,
                                        size_t count, CUmemcpyAttributes_v1* attrs,
                                        size_t* attrIdxs, size_t numAttrs, size_t* failIdx,
                                        CUstream hStream) {
  return batch(dsts, srcs, sizes, count, attrs, attrIdxs, numAttrs, failIdx, hStream, true);
}
CUresult cuMemcpyBatchAsync_v13000(CUdeviceptr_v2* dsts, CUdeviceptr_v2* srcs, size_t* sizes,
                                   size_t count, CUmemcpyAttributes_v1* attrs, size_t* attrIdxs,
                                   size_t numAttrs, CUstream hStream) {
  return batch(dsts, srcs, sizes, count, attrs, attrIdxs, numAttrs, nullptr, hStream, false);
}
CUresult cuMemcpyBatchAsync_v13000_ptsz(CUdeviceptr_v2* dsts, CUdeviceptr_v2* srcs, size_t* sizes,
                                        size_t count, CUmemcpyAttributes_v1* attrs,
                                        size_t* attrIdxs, size_t numAttrs, CUstream hStream) {
  return batch(dsts, srcs, sizes, count, attrs, attrIdxs, numAttrs, nullptr, hStream, true);
}

CUresult cuMemcpy3DBatchAsync_v12080(size_t numOps, CUDA_MEMCPY3D_BATCH_OP_v1* opList,
                                     size_t* failIdx, unsigned long long flags, CUstream hStream) {
  return batch_3d(numOps, opList, failIdx, flags, hStream, false);
}
CUresult cuMemcpy3DBatchAsync_v12080_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP_v1* opList,
                                          size_t* failIdx, unsigned long long flags,
                                          CUstream hStream) {
  return batch_3d(numOps, opList, failIdx, flags, hStream, true);
}
CUresult cuMemcpy3DBatchAsync_v13000(size_t numOps, CUDA_MEMCPY3D_BATCH_OP_v1* opList,
                                     unsigned long long flags, CUstream hStream) {
  return batch_3d(numOps, opList, nullptr, flags, hStream, false);
}
CUresult cuMemcpy3DBatchAsync_v13000_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP_v1* opList,
                                          unsigned long long flags, CUstream hStream) {
  return batch_3d(numOps, opList, nullptr, flags, hStream, true);
}

} // namespace mimic::driver::impl
