// Sticky context errors. A kernel fault leaves its error on the context: from then on
// every call that does work in that context (launches, copies, fills, allocations,
// synchronisation, new streams, events and modules) returns it, while calls that only
// read state (current context, device, limits, flags, attributes) still answer, and
// cuDevicePrimaryCtxReset starts the context afresh, as on CUDA.
//
// The CPU backend has no faulting kernels to provoke one, so this test links the driver's
// objects (not libcuda.so.1) and sets the error on the runtime's Context the way a failed
// launch does (driver::run_launch). The entry points are the exported C functions.
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/context.h"

namespace {

const char* kPtx = ".version 8.0\n.target sm_75\n.address_size 64\n"
                   ".visible .global .align 4 .u32 value = 7;\n"
                   ".visible .entry k(.param .u64 p)\n{\n ret;\n}\n";

constexpr CUresult kFault = CUDA_ERROR_ILLEGAL_ADDRESS;

void fault(CUcontext ctx) {
  mimic::runtime::Context* c = mimic::runtime::find_context(ctx);
  ASSERT_NE(c, nullptr);
  CUresult expected = CUDA_SUCCESS;
  c->sticky_error.compare_exchange_strong(expected, kFault);
}

class Sticky : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    ASSERT_EQ(cuMemAlloc_v2(&dptr, 1024), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(cuEventCreate(&event, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleLoadData(&mod, kPtx), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleGetFunction(&fn, mod, "k"), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    CUgraphNode node;
    ASSERT_EQ(cuGraphAddEmptyNode(&node, graph, nullptr, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuEventRecord(event, stream), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  }
  void TearDown() override {
    // A reset clears the error and everything the activation held.
    EXPECT_EQ(cuDevicePrimaryCtxReset_v2(0), CUDA_SUCCESS);
  }

  CUcontext ctx = nullptr;
  CUdeviceptr dptr = 0;
  CUstream stream = nullptr;
  CUevent event = nullptr;
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
};

TEST_F(Sticky, WorkFailsWithTheStickyError) {
  fault(ctx);
  std::vector<uint8_t> host(1024);
  void* params[] = {&dptr};
  CUdeviceptr p = 0;
  void* pinned = nullptr;
  CUstream s = nullptr;
  CUevent e = nullptr;
  CUmodule m = nullptr;
  EXPECT_EQ(cuCtxSynchronize(), kFault);
  EXPECT_EQ(cuCtxSynchronize(), kFault) << "sticky: it does not clear when reported";
  EXPECT_EQ(cuStreamSynchronize(stream), kFault);
  EXPECT_EQ(cuStreamSynchronize(nullptr), kFault);
  EXPECT_EQ(cuStreamQuery(stream), kFault);
  EXPECT_EQ(cuEventSynchronize(event), kFault);
  EXPECT_EQ(cuEventQuery(event), kFault);
  EXPECT_EQ(cuEventRecord(event, stream), kFault);
  EXPECT_EQ(cuStreamWaitEvent(stream, event, 0), kFault);
  EXPECT_EQ(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr), kFault);
  EXPECT_EQ(cuLaunchHostFunc(
                stream, [](void*) { ADD_FAILURE() << "ran after the fault"; }, nullptr),
            kFault);
  EXPECT_EQ(cuGraphLaunch(exec, stream), kFault);
  EXPECT_EQ(cuMemcpyHtoD_v2(dptr, host.data(), host.size()), kFault);
  EXPECT_EQ(cuMemcpyDtoH_v2(host.data(), dptr, host.size()), kFault);
  EXPECT_EQ(cuMemcpyDtoD_v2(dptr, dptr + 512, 512), kFault);
  EXPECT_EQ(cuMemcpyHtoDAsync_v2(dptr, host.data(), host.size(), stream), kFault);
  EXPECT_EQ(cuMemsetD8_v2(dptr, 1, 16), kFault);
  EXPECT_EQ(cuMemsetD32Async(dptr, 1, 16, stream), kFault);
  EXPECT_EQ(cuMemAlloc_v2(&p, 64), kFault);
  EXPECT_EQ(cuMemAllocHost_v2(&pinned, 64), kFault);
  EXPECT_EQ(cuMemAllocAsync(&p, 64, stream), kFault);
  EXPECT_EQ(cuStreamCreate(&s, 0), kFault);
  EXPECT_EQ(cuEventCreate(&e, 0), kFault);
  EXPECT_EQ(cuModuleLoadData(&m, kPtx), kFault);
}

TEST_F(Sticky, QueriesStillAnswer) {
  fault(ctx);
  CUcontext current = nullptr;
  EXPECT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, ctx);
  CUdevice dev = -1;
  EXPECT_EQ(cuCtxGetDevice(&dev), CUDA_SUCCESS);
  EXPECT_EQ(dev, 0);
  size_t limit = 0;
  EXPECT_EQ(cuCtxGetLimit(&limit, CU_LIMIT_STACK_SIZE), CUDA_SUCCESS);
  EXPECT_GT(limit, 0u);
  unsigned flags = 0, version = 0;
  EXPECT_EQ(cuCtxGetFlags(&flags), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxGetApiVersion(ctx, &version), CUDA_SUCCESS);
  CUfunc_cache cache;
  EXPECT_EQ(cuCtxGetCacheConfig(&cache), CUDA_SUCCESS);
  int value = 0;
  EXPECT_EQ(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0), CUDA_SUCCESS);
  EXPECT_EQ(value, 32);
  EXPECT_EQ(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn), CUDA_SUCCESS);
  CUfunction again = nullptr;
  EXPECT_EQ(cuModuleGetFunction(&again, mod, "k"), CUDA_SUCCESS);
  CUcontext owner = nullptr;
  EXPECT_EQ(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, dptr), CUDA_SUCCESS);
  EXPECT_EQ(owner, ctx);
  EXPECT_EQ(cuStreamGetFlags(stream, &flags), CUDA_SUCCESS);
  unsigned active = 0;
  int state = 0;
  EXPECT_EQ(cuDevicePrimaryCtxGetState(0, &active, &state), CUDA_SUCCESS);
  EXPECT_EQ(state, 1);
}

TEST_F(Sticky, OtherContextsStayHealthy) {
  CUcontext other = nullptr;
  ASSERT_EQ(cuCtxCreate_v4(&other, nullptr, 0, 0), CUDA_SUCCESS); // current now
  fault(ctx);
  CUdeviceptr p = 0;
  EXPECT_EQ(cuMemAlloc_v2(&p, 64), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD8_v2(p, 3, 64), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxDestroy_v2(other), CUDA_SUCCESS);
  // The faulted context's error shows when it is named explicitly.
  EXPECT_EQ(cuCtxSynchronize_v2(ctx), kFault);
}

TEST_F(Sticky, WorkQueuedBeforeTheFaultDoesNotRunAfterIt) {
  // Work already queued behind a blocked stream is dropped once the context faults.
  CUevent gate = nullptr;
  ASSERT_EQ(cuEventCreate(&gate, 0), CUDA_SUCCESS);
  static std::atomic<int> ran{0};
  ran = 0;
  CUstream other = nullptr;
  ASSERT_EQ(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  // `other` holds a host function that waits until the fault is in place.
  static std::atomic<bool> release{false};
  release = false;
  ASSERT_EQ(cuLaunchHostFunc(
                other,
                [](void*) {
                  while (!release) {
                  }
                },
                nullptr),
            CUDA_SUCCESS);
  ASSERT_EQ(cuLaunchHostFunc(
                other, [](void*) { ++ran; }, nullptr),
            CUDA_SUCCESS);
  fault(ctx);
  release = true;
  EXPECT_EQ(cuStreamSynchronize(other), kFault);
  EXPECT_EQ(ran.load(), 0);
}

TEST_F(Sticky, PrimaryResetRecovers) {
  fault(ctx);
  ASSERT_EQ(cuDevicePrimaryCtxReset_v2(0), CUDA_SUCCESS);
  CUcontext again = nullptr;
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&again, 0), CUDA_SUCCESS);
  EXPECT_EQ(again, ctx);
  ASSERT_EQ(cuCtxSetCurrent(again), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  EXPECT_EQ(cuMemAlloc_v2(&p, 64), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSynchronize(), CUDA_SUCCESS);
  // What the faulted activation held is gone.
  EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuMemFree_v2(dptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(p), CUDA_SUCCESS);
}

TEST_F(Sticky, CreatedContextCanBeDestroyedAfterAFault) {
  CUcontext other = nullptr;
  ASSERT_EQ(cuCtxCreate_v4(&other, nullptr, 0, 0), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  ASSERT_EQ(cuMemAlloc_v2(&p, 64), CUDA_SUCCESS);
  fault(other);
  EXPECT_EQ(cuMemsetD8_v2(p, 0, 64), kFault);
  EXPECT_EQ(cuCtxDestroy_v2(other), CUDA_SUCCESS);
  CUcontext current = nullptr;
  EXPECT_EQ(cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, ctx);
}

} // namespace
