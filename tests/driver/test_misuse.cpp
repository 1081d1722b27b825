// API misuse, handle kind by handle kind: destroyed handles, foreign and garbage values
// (random addresses, handles of other kinds), null out-parameters, double destroys and
// freed device pointers. Every case must give the CUDA error code, never a crash.
// The calls go to the exported functions, typed by the header's declarations.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "libcuda_loader.h"

using namespace mimic::test;

namespace {

const char* kPtx = ".version 8.0\n.target sm_75\n.address_size 64\n"
                   ".visible .global .align 4 .u32 value = 7;\n"
                   ".visible .entry k(.param .u64 p)\n{\n ret;\n}\n";

enum class Kind {
  Context,
  Module,
  Function,
  Library,
  Kernel,
  Stream,
  Event,
  Graph,
  Node,
  Exec,
  Pool,
  Array
};

// One live handle of every kind, made in the primary context of device 0.
class Misuse : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, 0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuModuleLoadData)(&mod, kPtx), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuModuleGetFunction)(&fn, mod, "k"), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuLibraryLoadData)(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0),
              CUDA_SUCCESS);
    ASSERT_EQ(CU(cuLibraryGetKernel)(&kern, lib, "k"), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuStreamCreate)(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuEventCreate)(&event, 0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuGraphCreate)(&graph, 0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuGraphAddEmptyNode)(&node, graph, nullptr, 0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuGraphInstantiate)(&exec, graph, 0), CUDA_SUCCESS);
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    ASSERT_EQ(CU(cuMemPoolCreate)(&pool, &props), CUDA_SUCCESS);
    CUDA_ARRAY_DESCRIPTOR desc{16, 16, CU_AD_FORMAT_FLOAT, 1};
    ASSERT_EQ(CU(cuArrayCreate)(&array, &desc), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuMemAlloc)(&dptr, 4096), CUDA_SUCCESS);
  }

  void TearDown() override {
    CU(cuMemFree)(dptr);
    CU(cuArrayDestroy)(array);
    CU(cuMemPoolDestroy)(pool);
    CU(cuGraphExecDestroy)(exec);
    CU(cuGraphDestroy)(graph);
    CU(cuEventDestroy)(event);
    CU(cuStreamDestroy)(stream);
    CU(cuLibraryUnload)(lib);
    CU(cuModuleUnload)(mod);
    CU(cuCtxSetCurrent)(ctx);
    EXPECT_EQ(CU(cuCtxSynchronize)(), CUDA_SUCCESS);
    CU(cuDevicePrimaryCtxRelease)(0);
  }

  void* live(Kind k) const {
    switch (k) {
    case Kind::Context:
      return ctx;
    case Kind::Module:
      return mod;
    case Kind::Function:
      return fn;
    case Kind::Library:
      return lib;
    case Kind::Kernel:
      return kern;
    case Kind::Stream:
      return stream;
    case Kind::Event:
      return event;
    case Kind::Graph:
      return graph;
    case Kind::Node:
      return node;
    case Kind::Exec:
      return exec;
    case Kind::Pool:
      return pool;
    case Kind::Array:
      return array;
    }
    return nullptr;
  }

  // Values that are not a live handle of kind `k`: addresses of nothing, of this test's
  // own memory, of random bytes, and every live handle of another kind. (A CUkernel is a
  // valid CUfunction, as on CUDA.)
  std::vector<void*> not_a(Kind k) {
    std::vector<void*> bad = {reinterpret_cast<void*>(uintptr_t(0x10)),
                              reinterpret_cast<void*>(uintptr_t(0xdeadbeef000)),
                              reinterpret_cast<void*>(~uintptr_t(0) & ~uintptr_t(7)),
                              &garbage_,
                              garbage_heap_.data(),
                              reinterpret_cast<void*>(uintptr_t(dptr))};
    for (int i = 0; i <= int(Kind::Array); ++i) {
      Kind other = Kind(i);
      if (other == k || (k == Kind::Function && other == Kind::Kernel)) continue;
      bad.push_back(live(other));
    }
    return bad;
  }

  CUcontext ctx = nullptr;
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  CUlibrary lib = nullptr;
  CUkernel kern = nullptr;
  CUstream stream = nullptr;
  CUevent event = nullptr;
  CUgraph graph = nullptr;
  CUgraphNode node = nullptr;
  CUgraphExec exec = nullptr;
  CUmemoryPool pool = nullptr;
  CUarray array = nullptr;
  CUdeviceptr dptr = 0;
  uint64_t garbage_[8] = {0x1234567890abcdefull, 0xffffffffffffffffull, 0, 42, 0xdeadbeef, 1, 2, 3};
  std::vector<uint64_t> garbage_heap_ = std::vector<uint64_t>(64, 0x5a5a5a5a5a5a5a5aull);
};

// Runs `call(bad)` for every bad value of kind `k` plus `stale` and expects `want`.
#define EXPECT_REJECTS(kind, stale, want, Type, call)                                              \
  do {                                                                                             \
    auto bads = not_a(kind);                                                                       \
    bads.push_back(reinterpret_cast<void*>(stale));                                                \
    for (void* raw : bads) {                                                                       \
      Type h = reinterpret_cast<Type>(raw);                                                        \
      EXPECT_EQ(call, want) << #call << " with " << raw;                                           \
    }                                                                                              \
  } while (0)

TEST_F(Misuse, Contexts) {
  CUcontext created = nullptr;
  ASSERT_EQ(CU(cuCtxCreate)(&created, nullptr, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxDestroy)(created), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuCtxDestroy)(created), CUDA_ERROR_INVALID_CONTEXT); // double destroy
  unsigned version = 0;
  CUdevice dev = -1;
  EXPECT_REJECTS(Kind::Context, created, CUDA_ERROR_INVALID_CONTEXT, CUcontext,
                 CU(cuCtxSetCurrent)(h));
  EXPECT_REJECTS(Kind::Context, created, CUDA_ERROR_INVALID_CONTEXT, CUcontext,
                 CU(cuCtxPushCurrent)(h));
  EXPECT_REJECTS(Kind::Context, created, CUDA_ERROR_INVALID_CONTEXT, CUcontext,
                 CU(cuCtxDestroy)(h));
  EXPECT_REJECTS(Kind::Context, created, CUDA_ERROR_INVALID_CONTEXT, CUcontext,
                 CU(cuCtxGetApiVersion)(h, &version));
  EXPECT_REJECTS(Kind::Context, created, CUDA_ERROR_INVALID_CONTEXT, CUcontext,
                 CU(cuCtxGetDevice_v2)(&dev, h));
  EXPECT_REJECTS(Kind::Context, created, CUDA_ERROR_INVALID_CONTEXT, CUcontext,
                 CU(cuCtxSynchronize_v2)(h));
  // The current context is unchanged by all of that.
  CUcontext current = nullptr;
  EXPECT_EQ(CU(cuCtxGetCurrent)(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, ctx);
  // Null out-parameters.
  EXPECT_EQ(CU(cuCtxCreate)(nullptr, nullptr, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuCtxGetCurrent)(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuCtxGetDevice)(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuCtxGetApiVersion)(ctx, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuCtxGetLimit)(nullptr, CU_LIMIT_STACK_SIZE), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuCtxGetFlags)(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuCtxGetCacheConfig)(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuCtxGetStreamPriorityRange)(nullptr, nullptr), CUDA_SUCCESS); // both optional
  EXPECT_EQ(CU(cuCtxGetId)(ctx, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuDevicePrimaryCtxRetain)(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuDevicePrimaryCtxGetState)(0, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  // The primary context cannot be destroyed with cuCtxDestroy.
  EXPECT_EQ(CU(cuCtxDestroy)(ctx), CUDA_ERROR_INVALID_CONTEXT);
  // Popping an empty stack.
  CUcontext popped = nullptr;
  EXPECT_EQ(CU(cuCtxPopCurrent)(&popped), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuCtxPopCurrent)(&popped), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
}

TEST_F(Misuse, ContextDestroyedWhileCurrentElsewhere) {
  CUcontext created = nullptr;
  ASSERT_EQ(CU(cuCtxCreate)(&created, nullptr, 0, 0), CUDA_SUCCESS); // pushed on this thread
  CUdeviceptr p = 0;
  ASSERT_EQ(CU(cuMemAlloc)(&p, 64), CUDA_SUCCESS);
  CUstream s = nullptr;
  ASSERT_EQ(CU(cuStreamCreate)(&s, 0), CUDA_SUCCESS);
  CUcontext popped = nullptr;
  ASSERT_EQ(CU(cuCtxPopCurrent)(&popped), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxDestroy)(created), CUDA_SUCCESS);
  // Its memory and streams went with it.
  EXPECT_EQ(CU(cuMemFree)(p), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuStreamSynchronize)(s), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuStreamDestroy)(s), CUDA_ERROR_INVALID_HANDLE);
  uint32_t word = 0;
  EXPECT_EQ(CU(cuMemcpyHtoD)(p, &word, 4), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(Misuse, ModulesAndFunctions) {
  CUmodule gone = nullptr;
  CUfunction gone_fn = nullptr;
  ASSERT_EQ(CU(cuModuleLoadData)(&gone, kPtx), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuModuleGetFunction)(&gone_fn, gone, "k"), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuModuleUnload)(gone), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuModuleUnload)(gone), CUDA_ERROR_INVALID_HANDLE); // double unload
  CUfunction f = nullptr;
  CUdeviceptr g = 0;
  size_t bytes = 0;
  unsigned count = 0;
  EXPECT_REJECTS(Kind::Module, gone, CUDA_ERROR_INVALID_HANDLE, CUmodule, CU(cuModuleUnload)(h));
  EXPECT_REJECTS(Kind::Module, gone, CUDA_ERROR_INVALID_HANDLE, CUmodule,
                 CU(cuModuleGetFunction)(&f, h, "k"));
  EXPECT_REJECTS(Kind::Module, gone, CUDA_ERROR_INVALID_HANDLE, CUmodule,
                 CU(cuModuleGetGlobal)(&g, &bytes, h, "value"));
  EXPECT_REJECTS(Kind::Module, gone, CUDA_ERROR_INVALID_HANDLE, CUmodule,
                 CU(cuModuleGetFunctionCount)(&count, h));
  EXPECT_REJECTS(Kind::Module, gone, CUDA_ERROR_INVALID_HANDLE, CUmodule,
                 CU(cuModuleEnumerateFunctions)(&f, 1, h));

  int value = 0;
  const char* name = nullptr;
  CUmodule owner = nullptr;
  CUdeviceptr arg = 0;
  void* params[] = {&arg};
  EXPECT_REJECTS(Kind::Function, gone_fn, CUDA_ERROR_INVALID_HANDLE, CUfunction,
                 CU(cuFuncGetAttribute)(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, h));
  EXPECT_REJECTS(Kind::Function, gone_fn, CUDA_ERROR_INVALID_HANDLE, CUfunction,
                 CU(cuFuncSetAttribute)(h, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0));
  EXPECT_REJECTS(Kind::Function, gone_fn, CUDA_ERROR_INVALID_HANDLE, CUfunction,
                 CU(cuFuncSetCacheConfig)(h, CU_FUNC_CACHE_PREFER_L1));
  EXPECT_REJECTS(Kind::Function, gone_fn, CUDA_ERROR_INVALID_HANDLE, CUfunction,
                 CU(cuFuncGetName)(&name, h));
  EXPECT_REJECTS(Kind::Function, gone_fn, CUDA_ERROR_INVALID_HANDLE, CUfunction,
                 CU(cuFuncGetModule)(&owner, h));
  EXPECT_REJECTS(Kind::Function, gone_fn, CUDA_ERROR_INVALID_HANDLE, CUfunction,
                 CU(cuLaunchKernel)(h, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr));
  EXPECT_REJECTS(Kind::Function, gone_fn, CUDA_ERROR_INVALID_HANDLE, CUfunction,
                 CU(cuOccupancyMaxActiveBlocksPerMultiprocessor)(&value, h, 32, 0));

  // Null out-parameters and names.
  EXPECT_EQ(CU(cuModuleLoadData)(nullptr, kPtx), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuModuleLoadData)(&owner, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuModuleGetFunction)(nullptr, mod, "k"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuModuleGetFunction)(&f, mod, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuModuleGetFunction)(&f, mod, "missing"), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(CU(cuModuleGetGlobal)(&g, &bytes, mod, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuModuleGetFunctionCount)(nullptr, mod), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuFuncGetAttribute)(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, fn),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuFuncGetName)(nullptr, fn), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuFuncGetModule)(nullptr, fn), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuModuleLoad)(&owner, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuModuleLoad)(&owner, "/nonexistent/mimic.ptx"), CUDA_ERROR_FILE_NOT_FOUND);
  // Not device code at all.
  EXPECT_NE(CU(cuModuleLoadData)(&owner, "garbage that is no image"), CUDA_SUCCESS);
  // A launch without its parameters.
  EXPECT_EQ(CU(cuLaunchKernel)(fn, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
}

TEST_F(Misuse, LibrariesAndKernels) {
  CUlibrary gone = nullptr;
  CUkernel gone_kernel = nullptr;
  ASSERT_EQ(CU(cuLibraryLoadData)(&gone, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0),
            CUDA_SUCCESS);
  ASSERT_EQ(CU(cuLibraryGetKernel)(&gone_kernel, gone, "k"), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuLibraryUnload)(gone), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuLibraryUnload)(gone), CUDA_ERROR_INVALID_HANDLE);
  CUkernel k = nullptr;
  CUmodule m = nullptr;
  CUdeviceptr g = 0;
  size_t bytes = 0;
  unsigned count = 0;
  EXPECT_REJECTS(Kind::Library, gone, CUDA_ERROR_INVALID_HANDLE, CUlibrary, CU(cuLibraryUnload)(h));
  EXPECT_REJECTS(Kind::Library, gone, CUDA_ERROR_INVALID_HANDLE, CUlibrary,
                 CU(cuLibraryGetKernel)(&k, h, "k"));
  EXPECT_REJECTS(Kind::Library, gone, CUDA_ERROR_INVALID_HANDLE, CUlibrary,
                 CU(cuLibraryGetModule)(&m, h));
  EXPECT_REJECTS(Kind::Library, gone, CUDA_ERROR_INVALID_HANDLE, CUlibrary,
                 CU(cuLibraryGetGlobal)(&g, &bytes, h, "value"));
  EXPECT_REJECTS(Kind::Library, gone, CUDA_ERROR_INVALID_HANDLE, CUlibrary,
                 CU(cuLibraryGetKernelCount)(&count, h));

  CUfunction f = nullptr;
  CUlibrary owner = nullptr;
  int value = 0;
  const char* name = nullptr;
  EXPECT_REJECTS(Kind::Kernel, gone_kernel, CUDA_ERROR_INVALID_HANDLE, CUkernel,
                 CU(cuKernelGetFunction)(&f, h));
  EXPECT_REJECTS(Kind::Kernel, gone_kernel, CUDA_ERROR_INVALID_HANDLE, CUkernel,
                 CU(cuKernelGetLibrary)(&owner, h));
  EXPECT_REJECTS(Kind::Kernel, gone_kernel, CUDA_ERROR_INVALID_HANDLE, CUkernel,
                 CU(cuKernelGetName)(&name, h));
  EXPECT_REJECTS(Kind::Kernel, gone_kernel, CUDA_ERROR_INVALID_HANDLE, CUkernel,
                 CU(cuKernelGetAttribute)(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, h, 0));
  // A stale kernel given where a function is expected.
  CUdeviceptr arg = 0;
  void* params[] = {&arg};
  EXPECT_EQ(CU(cuLaunchKernel)(reinterpret_cast<CUfunction>(gone_kernel), 1, 1, 1, 1, 1, 1, 0,
                               nullptr, params, nullptr),
            CUDA_ERROR_INVALID_HANDLE);

  EXPECT_EQ(CU(cuLibraryLoadData)(nullptr, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLibraryLoadData)(&owner, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLibraryGetKernel)(nullptr, lib, "k"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLibraryGetKernel)(&k, lib, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLibraryGetKernel)(&k, lib, "missing"), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(CU(cuLibraryGetModule)(nullptr, lib), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuKernelGetFunction)(nullptr, kern), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuKernelGetName)(nullptr, kern), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLibraryLoadFromFile)(&owner, "/nonexistent/lib.ptx", nullptr, nullptr, 0, nullptr,
                                      nullptr, 0),
            CUDA_ERROR_FILE_NOT_FOUND);
}

// Launches through a CUkernel reuse the function it resolved to last; that function must
// not outlive its library or its context's module.
TEST_F(Misuse, KernelLaunchesAfterUnloadAndAcrossContexts) {
  CUdeviceptr arg = 0;
  void* params[] = {&arg};
  auto launch = [&](CUkernel k) {
    return CU(cuLaunchKernel)(reinterpret_cast<CUfunction>(k), 1, 1, 1, 1, 1, 1, 0, nullptr, params,
                              nullptr);
  };
  CUlibrary gone = nullptr;
  CUkernel gone_kernel = nullptr;
  CUfunction gone_function = nullptr;
  ASSERT_EQ(CU(cuLibraryLoadData)(&gone, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0),
            CUDA_SUCCESS);
  ASSERT_EQ(CU(cuLibraryGetKernel)(&gone_kernel, gone, "k"), CUDA_SUCCESS);
  EXPECT_EQ(launch(gone_kernel), CUDA_SUCCESS);
  EXPECT_EQ(launch(gone_kernel), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuKernelGetFunction)(&gone_function, gone_kernel), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuLibraryUnload)(gone), CUDA_SUCCESS);
  EXPECT_EQ(launch(gone_kernel), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuLaunchKernel)(gone_function, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr),
            CUDA_ERROR_INVALID_HANDLE);

  // The kernel in another context gets that context's module, and again after the
  // context that used it last is gone.
  EXPECT_EQ(launch(kern), CUDA_SUCCESS);
  CUfunction in_primary = nullptr, in_created = nullptr, again = nullptr;
  ASSERT_EQ(CU(cuKernelGetFunction)(&in_primary, kern), CUDA_SUCCESS);
  CUcontext created = nullptr;
  ASSERT_EQ(CU(cuCtxCreate)(&created, nullptr, 0, 0), CUDA_SUCCESS); // current now
  EXPECT_EQ(launch(kern), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuKernelGetFunction)(&in_created, kern), CUDA_SUCCESS);
  EXPECT_NE(in_created, in_primary);
  EXPECT_EQ(CU(cuCtxSynchronize)(), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxDestroy)(created), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
  EXPECT_EQ(launch(kern), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuKernelGetFunction)(&again, kern), CUDA_SUCCESS);
  EXPECT_EQ(again, in_primary);
  EXPECT_EQ(CU(cuLaunchKernel)(in_created, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr),
            CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuCtxSynchronize)(), CUDA_SUCCESS);
}

TEST_F(Misuse, Streams) {
  CUstream gone = nullptr;
  ASSERT_EQ(CU(cuStreamCreate)(&gone, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuStreamDestroy)(gone), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuStreamDestroy)(gone), CUDA_ERROR_INVALID_HANDLE);
  uint32_t word = 0;
  unsigned flags = 0;
  int priority = 0;
  CUcontext c = nullptr;
  CUdeviceptr arg = 0;
  void* params[] = {&arg};
  CUstreamCaptureStatus capturing{};
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream, CU(cuStreamDestroy)(h));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuStreamSynchronize)(h));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream, CU(cuStreamQuery)(h));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuStreamGetFlags)(h, &flags));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuStreamGetPriority)(h, &priority));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuStreamGetCtx)(h, &c));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuStreamWaitEvent)(h, event, 0));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuEventRecord)(event, h));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuStreamIsCapturing)(h, &capturing));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuStreamBeginCapture)(h, CU_STREAM_CAPTURE_MODE_GLOBAL));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuMemcpyHtoDAsync)(dptr, &word, 4, h));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuMemsetD8Async)(dptr, 0, 4, h));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuLaunchKernel)(fn, 1, 1, 1, 1, 1, 1, 0, h, params, nullptr));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuLaunchHostFunc)(
                     h, [](void*) {}, nullptr));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuGraphLaunch)(exec, h));
  EXPECT_REJECTS(Kind::Stream, gone, CUDA_ERROR_INVALID_HANDLE, CUstream,
                 CU(cuMemAllocAsync)(&arg, 64, h));

  EXPECT_EQ(CU(cuStreamCreate)(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuStreamCreate)(&gone, 0x80), CUDA_ERROR_INVALID_VALUE); // unknown flag
  EXPECT_EQ(CU(cuStreamGetFlags)(stream, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuStreamGetPriority)(stream, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuStreamGetCtx)(stream, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuStreamIsCapturing)(stream, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLaunchHostFunc)(stream, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  // The legacy and per-thread default streams cannot be destroyed.
  EXPECT_EQ(CU(cuStreamDestroy)(CU_STREAM_LEGACY), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuStreamDestroy)(CU_STREAM_PER_THREAD), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuStreamDestroy)(nullptr), CUDA_ERROR_INVALID_HANDLE);
  // Ending a capture that never began.
  CUgraph g = nullptr;
  EXPECT_EQ(CU(cuStreamEndCapture)(stream, &g), CUDA_ERROR_ILLEGAL_STATE);
}

TEST_F(Misuse, Events) {
  CUevent gone = nullptr;
  ASSERT_EQ(CU(cuEventCreate)(&gone, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuEventDestroy)(gone), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuEventDestroy)(gone), CUDA_ERROR_INVALID_HANDLE);
  float ms = 0;
  EXPECT_REJECTS(Kind::Event, gone, CUDA_ERROR_INVALID_HANDLE, CUevent, CU(cuEventDestroy)(h));
  EXPECT_REJECTS(Kind::Event, gone, CUDA_ERROR_INVALID_HANDLE, CUevent,
                 CU(cuEventRecord)(h, stream));
  EXPECT_REJECTS(Kind::Event, gone, CUDA_ERROR_INVALID_HANDLE, CUevent,
                 CU(cuEventRecordWithFlags)(h, stream, 0));
  EXPECT_REJECTS(Kind::Event, gone, CUDA_ERROR_INVALID_HANDLE, CUevent, CU(cuEventSynchronize)(h));
  EXPECT_REJECTS(Kind::Event, gone, CUDA_ERROR_INVALID_HANDLE, CUevent, CU(cuEventQuery)(h));
  EXPECT_REJECTS(Kind::Event, gone, CUDA_ERROR_INVALID_HANDLE, CUevent,
                 CU(cuEventElapsedTime)(&ms, h, event));
  EXPECT_REJECTS(Kind::Event, gone, CUDA_ERROR_INVALID_HANDLE, CUevent,
                 CU(cuEventElapsedTime)(&ms, event, h));
  EXPECT_REJECTS(Kind::Event, gone, CUDA_ERROR_INVALID_HANDLE, CUevent,
                 CU(cuStreamWaitEvent)(stream, h, 0));
  EXPECT_REJECTS(Kind::Event, gone, CUDA_ERROR_INVALID_HANDLE, CUevent,
                 CU(cuStreamWaitEvent)(nullptr, h, 0));

  EXPECT_EQ(CU(cuEventCreate)(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuEventCreate)(&gone, 0x100), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuEventElapsedTime)(nullptr, event, event), CUDA_ERROR_INVALID_VALUE);
  // Timing an event that was never recorded, or one made without timing.
  CUevent untimed = nullptr;
  ASSERT_EQ(CU(cuEventCreate)(&untimed, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuEventElapsedTime)(&ms, event, event), CUDA_ERROR_INVALID_HANDLE);
  ASSERT_EQ(CU(cuEventRecord)(event, stream), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuEventRecord)(untimed, stream), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuEventSynchronize)(untimed), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuEventElapsedTime)(&ms, event, untimed), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuEventDestroy)(untimed), CUDA_SUCCESS);
}

TEST_F(Misuse, GraphsNodesAndExecs) {
  CUgraph gone = nullptr;
  CUgraphNode gone_node = nullptr;
  CUgraphExec gone_exec = nullptr;
  ASSERT_EQ(CU(cuGraphCreate)(&gone, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuGraphAddEmptyNode)(&gone_node, gone, nullptr, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuGraphInstantiate)(&gone_exec, gone, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuGraphExecDestroy)(gone_exec), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuGraphDestroy)(gone), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuGraphDestroy)(gone), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(CU(cuGraphExecDestroy)(gone_exec), CUDA_ERROR_INVALID_HANDLE);

  CUgraphNode n = nullptr;
  CUgraphExec e = nullptr;
  CUgraph g = nullptr;
  size_t count = 0;
  CUgraphNodeType type{};
  CUDA_HOST_NODE_PARAMS host{[](void*) {}, nullptr};
  EXPECT_REJECTS(Kind::Graph, gone, CUDA_ERROR_INVALID_HANDLE, CUgraph, CU(cuGraphDestroy)(h));
  EXPECT_REJECTS(Kind::Graph, gone, CUDA_ERROR_INVALID_HANDLE, CUgraph,
                 CU(cuGraphAddEmptyNode)(&n, h, nullptr, 0));
  EXPECT_REJECTS(Kind::Graph, gone, CUDA_ERROR_INVALID_HANDLE, CUgraph,
                 CU(cuGraphAddHostNode)(&n, h, nullptr, 0, &host));
  EXPECT_REJECTS(Kind::Graph, gone, CUDA_ERROR_INVALID_HANDLE, CUgraph,
                 CU(cuGraphInstantiate)(&e, h, 0));
  EXPECT_REJECTS(Kind::Graph, gone, CUDA_ERROR_INVALID_HANDLE, CUgraph, CU(cuGraphClone)(&g, h));
  EXPECT_REJECTS(Kind::Graph, gone, CUDA_ERROR_INVALID_HANDLE, CUgraph,
                 CU(cuGraphGetNodes)(h, nullptr, &count));
  EXPECT_REJECTS(Kind::Graph, gone, CUDA_ERROR_INVALID_HANDLE, CUgraph,
                 CU(cuGraphGetRootNodes)(h, nullptr, &count));
  EXPECT_REJECTS(Kind::Graph, gone, CUDA_ERROR_INVALID_HANDLE, CUgraph,
                 CU(cuGraphAddChildGraphNode)(&n, graph, nullptr, 0, h));
  EXPECT_REJECTS(Kind::Graph, gone, CUDA_ERROR_INVALID_HANDLE, CUgraph,
                 CU(cuGraphExecUpdate)(exec, h, nullptr));

  EXPECT_REJECTS(Kind::Node, gone_node, CUDA_ERROR_INVALID_HANDLE, CUgraphNode,
                 CU(cuGraphNodeGetType)(h, &type));
  EXPECT_REJECTS(Kind::Node, gone_node, CUDA_ERROR_INVALID_HANDLE, CUgraphNode,
                 CU(cuGraphDestroyNode)(h));
  EXPECT_REJECTS(Kind::Node, gone_node, CUDA_ERROR_INVALID_HANDLE, CUgraphNode,
                 CU(cuGraphHostNodeGetParams)(h, &host));
  EXPECT_REJECTS(Kind::Node, gone_node, CUDA_ERROR_INVALID_HANDLE, CUgraphNode,
                 CU(cuGraphAddEmptyNode)(&n, graph, &h, 1));
  EXPECT_REJECTS(Kind::Node, gone_node, CUDA_ERROR_INVALID_HANDLE, CUgraphNode,
                 CU(cuGraphNodeGetDependencies)(h, nullptr, nullptr, &count));
  EXPECT_REJECTS(Kind::Node, gone_node, CUDA_ERROR_INVALID_HANDLE, CUgraphNode,
                 CU(cuGraphNodeFindInClone)(&n, h, graph));

  CUgraphExecUpdateResultInfo info{};
  cuuint64_t flags = 0;
  EXPECT_REJECTS(Kind::Exec, gone_exec, CUDA_ERROR_INVALID_HANDLE, CUgraphExec,
                 CU(cuGraphExecDestroy)(h));
  EXPECT_REJECTS(Kind::Exec, gone_exec, CUDA_ERROR_INVALID_HANDLE, CUgraphExec,
                 CU(cuGraphLaunch)(h, stream));
  EXPECT_REJECTS(Kind::Exec, gone_exec, CUDA_ERROR_INVALID_HANDLE, CUgraphExec,
                 CU(cuGraphUpload)(h, stream));
  EXPECT_REJECTS(Kind::Exec, gone_exec, CUDA_ERROR_INVALID_HANDLE, CUgraphExec,
                 CU(cuGraphExecUpdate)(h, graph, &info));
  EXPECT_REJECTS(Kind::Exec, gone_exec, CUDA_ERROR_INVALID_HANDLE, CUgraphExec,
                 CU(cuGraphExecGetFlags)(h, &flags));

  // A node of one graph used as a dependency in another.
  CUgraph other = nullptr;
  ASSERT_EQ(CU(cuGraphCreate)(&other, 0), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuGraphAddEmptyNode)(&n, other, &node, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuGraphDestroy)(other), CUDA_SUCCESS);

  EXPECT_EQ(CU(cuGraphCreate)(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuGraphCreate)(&g, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuGraphAddEmptyNode)(nullptr, graph, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuGraphAddEmptyNode)(&n, graph, nullptr, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuGraphAddHostNode)(&n, graph, nullptr, 0, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuGraphInstantiate)(nullptr, graph, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuGraphNodeGetType)(node, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuGraphGetNodes)(graph, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuGraphExecGetFlags)(exec, nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(Misuse, MemoryPools) {
  CUmemoryPool gone = nullptr;
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  ASSERT_EQ(CU(cuMemPoolCreate)(&gone, &props), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuMemPoolDestroy)(gone), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuMemPoolDestroy)(gone), CUDA_ERROR_INVALID_HANDLE);
  CUdeviceptr p = 0;
  cuuint64_t value = 0;
  CUmemLocation where{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemAccess_flags access{};
  EXPECT_REJECTS(Kind::Pool, gone, CUDA_ERROR_INVALID_HANDLE, CUmemoryPool,
                 CU(cuMemPoolDestroy)(h));
  EXPECT_REJECTS(Kind::Pool, gone, CUDA_ERROR_INVALID_HANDLE, CUmemoryPool,
                 CU(cuMemAllocFromPoolAsync)(&p, 64, h, stream));
  EXPECT_REJECTS(Kind::Pool, gone, CUDA_ERROR_INVALID_HANDLE, CUmemoryPool,
                 CU(cuMemPoolGetAttribute)(h, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value));
  EXPECT_REJECTS(Kind::Pool, gone, CUDA_ERROR_INVALID_HANDLE, CUmemoryPool,
                 CU(cuMemPoolSetAttribute)(h, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value));
  EXPECT_REJECTS(Kind::Pool, gone, CUDA_ERROR_INVALID_HANDLE, CUmemoryPool,
                 CU(cuMemPoolTrimTo)(h, 0));
  EXPECT_REJECTS(Kind::Pool, gone, CUDA_ERROR_INVALID_HANDLE, CUmemoryPool,
                 CU(cuMemPoolGetAccess)(&access, h, &where));
  EXPECT_REJECTS(Kind::Pool, gone, CUDA_ERROR_INVALID_HANDLE, CUmemoryPool,
                 CU(cuDeviceSetMemPool)(0, h));

  EXPECT_EQ(CU(cuMemPoolCreate)(nullptr, &props), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemPoolCreate)(&gone, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemPoolGetAttribute)(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemAllocFromPoolAsync)(nullptr, 64, pool, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuDeviceGetDefaultMemPool)(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  // The default pool cannot be destroyed.
  CUmemoryPool fallback = nullptr;
  ASSERT_EQ(CU(cuDeviceGetDefaultMemPool)(&fallback, 0), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuMemPoolDestroy)(fallback), CUDA_ERROR_INVALID_VALUE);
  // Stream-ordered frees: twice, and of memory from cuMemAlloc.
  ASSERT_EQ(CU(cuMemAllocFromPoolAsync)(&p, 64, pool, stream), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuMemFreeAsync)(p, stream), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuStreamSynchronize)(stream), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuMemFreeAsync)(p, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemFreeAsync)(CUdeviceptr(0xdeadbeef000), stream), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(Misuse, Arrays) {
  CUarray gone = nullptr;
  CUDA_ARRAY_DESCRIPTOR desc{8, 8, CU_AD_FORMAT_UNSIGNED_INT8, 4};
  ASSERT_EQ(CU(cuArrayCreate)(&gone, &desc), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuArrayDestroy)(gone), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuArrayDestroy)(gone), CUDA_ERROR_INVALID_HANDLE);
  CUDA_ARRAY_DESCRIPTOR got{};
  CUDA_ARRAY3D_DESCRIPTOR got3{};
  std::vector<float> host(16 * 16);
  EXPECT_REJECTS(Kind::Array, gone, CUDA_ERROR_INVALID_HANDLE, CUarray, CU(cuArrayDestroy)(h));
  EXPECT_REJECTS(Kind::Array, gone, CUDA_ERROR_INVALID_HANDLE, CUarray,
                 CU(cuArrayGetDescriptor)(&got, h));
  EXPECT_REJECTS(Kind::Array, gone, CUDA_ERROR_INVALID_HANDLE, CUarray,
                 CU(cuArray3DGetDescriptor)(&got3, h));
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = host.data();
  copy.srcPitch = 64;
  copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  copy.WidthInBytes = 64;
  copy.Height = 16;
  EXPECT_REJECTS(Kind::Array, gone, CUDA_ERROR_INVALID_HANDLE, CUarray,
                 (copy.dstArray = h, CU(cuMemcpy2D)(&copy)));
  copy.dstArray = array;
  EXPECT_EQ(CU(cuMemcpy2D)(&copy), CUDA_SUCCESS);

  EXPECT_EQ(CU(cuArrayCreate)(nullptr, &desc), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuArrayCreate)(&gone, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuArrayGetDescriptor)(nullptr, array), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY_DESCRIPTOR bad_channels{8, 8, CU_AD_FORMAT_FLOAT, 3};
  EXPECT_EQ(CU(cuArrayCreate)(&gone, &bad_channels), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY_DESCRIPTOR bad_format{8, 8, CUarray_format(0x7777), 1};
  EXPECT_EQ(CU(cuArrayCreate)(&gone, &bad_format), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(Misuse, FreedAndForeignDevicePointers) {
  CUdeviceptr p = 0;
  ASSERT_EQ(CU(cuMemAlloc)(&p, 256), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuMemFree)(p), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuMemFree)(p), CUDA_ERROR_INVALID_VALUE); // double free
  std::vector<uint8_t> host(256);
  EXPECT_EQ(CU(cuMemcpyHtoD)(p, host.data(), 256), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemcpyDtoH)(host.data(), p, 256), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemcpyDtoD)(dptr, p, 256), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemcpyHtoDAsync)(p, host.data(), 256, stream), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemsetD8)(p, 1, 256), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemsetD32Async)(p, 1, 64, stream), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr base = 0;
  size_t size = 0;
  EXPECT_EQ(CU(cuMemGetAddressRange)(&base, &size, p), CUDA_ERROR_NOT_FOUND);
  CUcontext owner = nullptr;
  EXPECT_EQ(CU(cuPointerGetAttribute)(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(
      CU(cuMemPrefetchAsync)(p, 256, CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, 0}, 0, stream),
      CUDA_ERROR_INVALID_VALUE);
  // Past the end of a live allocation, and addresses that were never device memory.
  EXPECT_EQ(CU(cuMemcpyHtoD)(dptr + 4000, host.data(), 256), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemsetD8)(dptr, 0, 4097), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemFree)(dptr + 16), CUDA_ERROR_INVALID_VALUE); // not the base
  EXPECT_EQ(CU(cuMemFree)(CUdeviceptr(0xdeadbeef000)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemFree)(CUdeviceptr(uintptr_t(host.data()))), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemFree)(0), CUDA_SUCCESS); // freeing null is allowed
  // Misaligned fills.
  EXPECT_EQ(CU(cuMemsetD32)(dptr + 1, 0, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemsetD16)(dptr + 1, 0, 4), CUDA_ERROR_INVALID_VALUE);
  // Host memory: double frees, unregistering what was never registered.
  void* pinned = nullptr;
  ASSERT_EQ(CU(cuMemAllocHost)(&pinned, 64), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuMemFreeHost)(pinned), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuMemFreeHost)(pinned), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemFreeHost)(host.data()), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemHostUnregister)(host.data()), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  ASSERT_EQ(CU(cuMemHostRegister)(host.data(), host.size(), 0), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuMemHostRegister)(host.data(), host.size(), 0),
            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(CU(cuMemHostUnregister)(host.data()), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuMemHostUnregister)(host.data()), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  // Null out-parameters.
  EXPECT_EQ(CU(cuMemAlloc)(nullptr, 64), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemAlloc)(&p, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemAllocHost)(nullptr, 64), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemAllocManaged)(nullptr, 64, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
  size_t pitch = 0;
  EXPECT_EQ(CU(cuMemAllocPitch)(nullptr, &pitch, 64, 4, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemAllocPitch)(&p, nullptr, 64, 4, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemGetInfo)(nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuPointerGetAttribute)(nullptr, CU_POINTER_ATTRIBUTE_CONTEXT, dptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemcpyHtoD)(dptr, nullptr, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemcpy2D)(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemcpy3D)(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuMemHostGetDevicePointer)(nullptr, pinned, 0), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(Misuse, NothingWorksBeforeAContextIsCurrent) {
  CUcontext popped = nullptr;
  ASSERT_EQ(CU(cuCtxPopCurrent)(&popped), CUDA_SUCCESS);
  CUcontext none = reinterpret_cast<CUcontext>(1);
  ASSERT_EQ(CU(cuCtxGetCurrent)(&none), CUDA_SUCCESS);
  ASSERT_EQ(none, nullptr);
  CUdeviceptr p = 0;
  CUstream s = nullptr;
  CUmodule m = nullptr;
  CUevent e = nullptr;
  CUdevice dev = 0;
  EXPECT_EQ(CU(cuMemAlloc)(&p, 64), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(CU(cuStreamCreate)(&s, 0), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(CU(cuEventCreate)(&e, 0), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(CU(cuModuleLoadData)(&m, kPtx), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(CU(cuCtxSynchronize)(), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(CU(cuCtxGetDevice)(&dev), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
}

TEST_F(Misuse, DevicesOutOfRange) {
  int value = 0;
  char name[64];
  size_t bytes = 0;
  CUdevice dev = 0;
  CUuuid uuid{};
  for (CUdevice bad : {-1, 1000, 0x7fffffff}) {
    EXPECT_EQ(CU(cuDeviceGetAttribute)(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, bad),
              CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(CU(cuDeviceGetName)(name, sizeof name, bad), CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(CU(cuDeviceTotalMem)(&bytes, bad), CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(CU(cuDeviceGetUuid)(&uuid, bad), CUDA_ERROR_INVALID_DEVICE);
    EXPECT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, bad), CUDA_ERROR_INVALID_DEVICE);
    CUcontext c = nullptr;
    EXPECT_EQ(CU(cuCtxCreate)(&c, nullptr, 0, bad), CUDA_ERROR_INVALID_DEVICE);
  }
  EXPECT_EQ(CU(cuDeviceGet)(&dev, 1000), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(CU(cuDeviceGet)(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuDeviceGetCount)(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuDeviceGetAttribute)(nullptr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuDeviceGetAttribute)(&value, CUdevice_attribute(100000), 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuDeviceGetName)(nullptr, 64, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuDeviceGetUuid)(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
}

} // namespace
