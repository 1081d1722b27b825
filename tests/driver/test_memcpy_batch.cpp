// Batched copies: cuMemcpyBatchAsync and cuMemcpy3DBatchAsync in their CUDA 12.8 forms
// (with failIdx) and 13.0 forms, attribute ranges, source access orders, validation
// before anything is copied, arrays in 3D batches.
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "libcuda_loader.h"

namespace {

using mimic::test::exported;

class Batch : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, 0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuStreamCreate)(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuMemAlloc)(&a, 4096), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuMemAlloc)(&b, 4096), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuMemsetD8)(a, 0, 4096), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuMemsetD8)(b, 0, 4096), CUDA_SUCCESS);
  }
  void TearDown() override {
    CU(cuMemFree)(a);
    CU(cuMemFree)(b);
    CU(cuStreamDestroy)(stream);
    CU(cuDevicePrimaryCtxRelease)(0);
  }
  static CUdeviceptr host(const void* p) { return CUdeviceptr(reinterpret_cast<uintptr_t>(p)); }
  static CUmemcpyAttributes order(CUmemcpySrcAccessOrder o) {
    CUmemcpyAttributes attr{};
    attr.srcAccessOrder = o;
    return attr;
  }

  PFN_cuMemcpyBatchAsync_v12080 batch_v1 =
      exported<PFN_cuMemcpyBatchAsync_v12080>("cuMemcpyBatchAsync");
  PFN_cuMemcpy3DBatchAsync_v12080 batch3d_v1 =
      exported<PFN_cuMemcpy3DBatchAsync_v12080>("cuMemcpy3DBatchAsync");
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  CUdeviceptr a = 0, b = 0;
};

TEST_F(Batch, CopiesInStreamOrderWithAttributeRanges) {
  std::vector<uint32_t> in(256), out(256, 0);
  std::iota(in.begin(), in.end(), 1000u);
  // host -> a, a -> b, b -> host; the first copy under one attribute, the others another.
  CUdeviceptr dsts[] = {a, b, host(out.data())};
  CUdeviceptr srcs[] = {host(in.data()), a, b};
  size_t sizes[] = {1024, 1024, 1024};
  CUmemcpyAttributes attrs[] = {order(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM),
                                order(CU_MEMCPY_SRC_ACCESS_ORDER_ANY)};
  size_t idx[] = {0, 1};
  ASSERT_EQ(CU(cuMemcpyBatchAsync)(dsts, srcs, sizes, 3, attrs, idx, 2, stream), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuStreamSynchronize)(stream), CUDA_SUCCESS);
  EXPECT_EQ(out, in);
  // The 12.8 form, with failIdx left at SIZE_MAX on success.
  std::vector<uint32_t> again(256, 0);
  dsts[2] = host(again.data());
  size_t failed = 7;
  ASSERT_EQ(batch_v1(dsts, srcs, sizes, 3, attrs, idx, 2, &failed, stream), CUDA_SUCCESS);
  EXPECT_EQ(failed, SIZE_MAX);
  ASSERT_EQ(CU(cuStreamSynchronize)(stream), CUDA_SUCCESS);
  EXPECT_EQ(again, in);
}

TEST_F(Batch, SourcesReadDuringTheCall) {
  std::vector<uint32_t> out(64, 0);
  {
    uint32_t ephemeral[64];
    for (uint32_t i = 0; i < 64; ++i)
      ephemeral[i] = i * 3;
    CUdeviceptr dsts[] = {a};
    CUdeviceptr srcs[] = {host(ephemeral)};
    size_t sizes[] = {sizeof ephemeral};
    CUmemcpyAttributes attrs[] = {order(CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL)};
    size_t idx[] = {0};
    ASSERT_EQ(CU(cuMemcpyBatchAsync)(dsts, srcs, sizes, 1, attrs, idx, 1, stream), CUDA_SUCCESS);
    std::memset(ephemeral, 0xff, sizeof ephemeral); // the source is done with
  }
  ASSERT_EQ(CU(cuMemcpyDtoH)(out.data(), a, 256), CUDA_SUCCESS);
  for (uint32_t i = 0; i < 64; ++i)
    EXPECT_EQ(out[i], i * 3);
}

TEST_F(Batch, ValidationReportsTheFailingCopyAndCopiesNothing) {
  std::vector<uint8_t> in(512, 7), out(512, 0);
  CUdeviceptr dsts[] = {a, b + 4000, b};
  CUdeviceptr srcs[] = {host(in.data()), a, a};
  size_t sizes[] = {512, 256, 512};
  CUmemcpyAttributes attrs[] = {order(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM),
                                order(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM)};
  size_t idx[] = {0, 2};
  size_t failed = 0;
  // Copy 1 runs past the end of b: nothing is copied, not even copy 0.
  EXPECT_EQ(batch_v1(dsts, srcs, sizes, 3, attrs, idx, 2, &failed, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 1u);
  ASSERT_EQ(CU(cuMemcpyDtoH)(out.data(), a, 512), CUDA_SUCCESS);
  EXPECT_EQ(out, std::vector<uint8_t>(512, 0));
  dsts[1] = b;
  // An invalid source access order in attrs[1] fails the first copy it applies to.
  attrs[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
  EXPECT_EQ(batch_v1(dsts, srcs, sizes, 3, attrs, idx, 2, &failed, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 2u);
  attrs[1].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  attrs[1].flags = 0x80;
  EXPECT_EQ(batch_v1(dsts, srcs, sizes, 3, attrs, idx, 2, &failed, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 2u);
  attrs[1].flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
  // Null pointers of one copy.
  dsts[0] = 0;
  EXPECT_EQ(batch_v1(dsts, srcs, sizes, 3, attrs, idx, 2, &failed, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 0u);
  dsts[0] = a;
  // Errors about the batch as a whole leave failIdx at SIZE_MAX.
  size_t bad_start[] = {1, 2};
  EXPECT_EQ(batch_v1(dsts, srcs, sizes, 3, attrs, bad_start, 2, &failed, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, SIZE_MAX);
  size_t not_increasing[] = {0, 0};
  EXPECT_EQ(batch_v1(dsts, srcs, sizes, 3, attrs, not_increasing, 2, &failed, stream),
            CUDA_ERROR_INVALID_VALUE);
  size_t past_end[] = {0, 3};
  EXPECT_EQ(batch_v1(dsts, srcs, sizes, 3, attrs, past_end, 2, &failed, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(batch_v1(dsts, srcs, sizes, 1, attrs, idx, 2, &failed, stream),
            CUDA_ERROR_INVALID_VALUE); // numAttrs > count
  EXPECT_EQ(batch_v1(dsts, srcs, sizes, 0, attrs, idx, 1, &failed, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(batch_v1(nullptr, srcs, sizes, 3, attrs, idx, 2, &failed, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(batch_v1(dsts, srcs, sizes, 3, nullptr, idx, 2, &failed, stream),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, SIZE_MAX);
  // The legacy NULL stream is not allowed; the per-thread one is.
  EXPECT_EQ(CU(cuMemcpyBatchAsync)(dsts, srcs, sizes, 3, attrs, idx, 2, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemcpyBatchAsync)(dsts, srcs, sizes, 3, attrs, idx, 2, CU_STREAM_LEGACY),
            CUDA_ERROR_INVALID_VALUE);
  auto per_thread = exported<PFN_cuMemcpyBatchAsync_v13000_ptsz>("cuMemcpyBatchAsync_v2_ptsz");
  EXPECT_EQ(per_thread(dsts, srcs, sizes, 3, attrs, idx, 2, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuStreamSynchronize)(CU_STREAM_PER_THREAD), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuMemcpyDtoH)(out.data(), b, 512), CUDA_SUCCESS);
  EXPECT_EQ(out, in);
  // Stale streams.
  CUstream gone = nullptr;
  ASSERT_EQ(CU(cuStreamCreate)(&gone, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuStreamDestroy)(gone), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuMemcpyBatchAsync)(dsts, srcs, sizes, 3, attrs, idx, 2, gone),
            CUDA_ERROR_INVALID_HANDLE);
}

CUmemcpy3DOperand pointer(CUdeviceptr p, size_t row_length = 0, size_t layer_height = 0) {
  CUmemcpy3DOperand o{};
  o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  o.op.ptr.ptr = p;
  o.op.ptr.rowLength = row_length;
  o.op.ptr.layerHeight = layer_height;
  return o;
}

CUmemcpy3DOperand array(CUarray a, size_t x = 0, size_t y = 0, size_t z = 0) {
  CUmemcpy3DOperand o{};
  o.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  o.op.array.array = a;
  o.op.array.offset = {x, y, z};
  return o;
}

CUDA_MEMCPY3D_BATCH_OP op(CUmemcpy3DOperand src, CUmemcpy3DOperand dst, size_t w, size_t h,
                          size_t d) {
  CUDA_MEMCPY3D_BATCH_OP o{};
  o.src = src;
  o.dst = dst;
  o.extent = {w, h, d};
  o.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  return o;
}

TEST_F(Batch, ThreeDimensionalCopiesWithArrays) {
  CUDA_ARRAY3D_DESCRIPTOR desc{8, 4, 2, CU_AD_FORMAT_FLOAT, 1, 0};
  CUarray first = nullptr, second = nullptr;
  ASSERT_EQ(CU(cuArray3DCreate)(&first, &desc), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuArray3DCreate)(&second, &desc), CUDA_SUCCESS);
  std::vector<float> in(8 * 4 * 2), out(10 * 4 * 2, -1.0f);
  std::iota(in.begin(), in.end(), 0.0f);
  // host -> first (whole), first -> second, second -> host with a row length of 10.
  CUDA_MEMCPY3D_BATCH_OP ops[] = {
      op(pointer(host(in.data())), array(first), 8, 4, 2), op(array(first), array(second), 8, 4, 2),
      op(array(second, 2, 1, 0), pointer(host(out.data()), 10, 4), 6, 3, 2)};
  ASSERT_EQ(CU(cuMemcpy3DBatchAsync)(3, ops, 0, stream), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuStreamSynchronize)(stream), CUDA_SUCCESS);
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 3; ++y)
      for (size_t x = 0; x < 6; ++x)
        EXPECT_EQ(out[(z * 4 + y) * 10 + x], in[(z * 4 + y + 1) * 8 + x + 2])
            << x << "," << y << "," << z;
  EXPECT_EQ(out[6], -1.0f); // outside the copied width

  // Validation, with the failing op's index.
  size_t failed = 0;
  CUDA_MEMCPY3D_BATCH_OP bad[] = {ops[0], ops[1]};
  bad[1].extent.depth = 0;
  EXPECT_EQ(batch3d_v1(2, bad, &failed, 0, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 1u);
  bad[1] = op(pointer(a, 4), pointer(b), 8, 1, 1); // row length shorter than the width
  EXPECT_EQ(batch3d_v1(2, bad, &failed, 0, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 1u);
  bad[1] = op(array(first, 4, 0, 0), array(second), 8, 4, 2); // past the array's end
  EXPECT_EQ(batch3d_v1(2, bad, &failed, 0, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 1u);
  CUDA_ARRAY3D_DESCRIPTOR bytes_desc{8, 4, 2, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0};
  CUarray narrow = nullptr;
  ASSERT_EQ(CU(cuArray3DCreate)(&narrow, &bytes_desc), CUDA_SUCCESS);
  bad[1] = op(array(first), array(narrow), 8, 4, 2); // element sizes differ
  EXPECT_EQ(batch3d_v1(2, bad, &failed, 0, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 1u);
  bad[0].srcAccessOrder = CUmemcpySrcAccessOrder(9);
  EXPECT_EQ(batch3d_v1(2, bad, &failed, 0, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 0u);
  bad[0] = ops[0];
  bad[0].dst.type = CUmemcpy3DOperandType(5);
  EXPECT_EQ(batch3d_v1(2, bad, &failed, 0, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(failed, 0u);
  EXPECT_EQ(batch3d_v1(2, ops, &failed, 1, stream), CUDA_ERROR_INVALID_VALUE); // flags must be 0
  EXPECT_EQ(failed, SIZE_MAX);
  EXPECT_EQ(batch3d_v1(0, ops, &failed, 0, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemcpy3DBatchAsync)(1, ops, 0, nullptr),
            CUDA_ERROR_INVALID_VALUE); // legacy stream
  ASSERT_EQ(CU(cuArrayDestroy)(narrow), CUDA_SUCCESS);
  bad[0] = ops[0];
  bad[1] = op(array(first), array(narrow), 8, 4, 2); // a destroyed array
  EXPECT_EQ(batch3d_v1(2, bad, &failed, 0, stream), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(failed, 1u);
  EXPECT_EQ(CU(cuArrayDestroy)(first), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuArrayDestroy)(second), CUDA_SUCCESS);
}

} // namespace
