// nvcc-flags: -lcuda
// The driver API used directly: contexts (created, pushed, popped, destroyed), a module
// loaded from PTX text with its functions, parameters and initialised globals, memory,
// streams and events, and misuse answered with the right errors instead of crashes.
// variants: all
#include <cstdio>
#include <cstring>
#include <cuda.h>

static int failures = 0;
#define CHECK(call)                                                                                    \
  do {                                                                                                 \
    CUresult r_ = (call);                                                                              \
    if (r_ != CUDA_SUCCESS) {                                                                          \
      const char* s_ = nullptr;                                                                        \
      cuGetErrorName(r_, &s_);                                                                         \
      fprintf(stderr, "%s:%d: %s = %s\n", __FILE__, __LINE__, #call, s_ ? s_ : "?");                   \
      return 1;                                                                                        \
    }                                                                                                  \
  } while (0)
#define EXPECT_RESULT(call, expected)                                                                  \
  do {                                                                                                 \
    CUresult r_ = (call);                                                                              \
    if (r_ != (expected)) {                                                                            \
      fprintf(stderr, "%s:%d: %s = %d, expected %s\n", __FILE__, __LINE__, #call, int(r_), #expected); \
      ++failures;                                                                                      \
    }                                                                                                  \
  } while (0)
#define EXPECT(cond)                                                                                   \
  do {                                                                                                 \
    if (!(cond)) {                                                                                     \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                              \
      ++failures;                                                                                      \
    }                                                                                                  \
  } while (0)

static const char* kPtx = R"(
.version 8.0
.target sm_75
.address_size 64
.visible .global .align 4 .u32 answer = 42;
.visible .global .align 8 .f64 scale[2] = {0.5, 2.0};
.visible .entry scale_kernel(.param .u64 data, .param .u32 n, .param .f32 factor)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [data];
  ld.param.u32 %r1, [n];
  ld.param.f32 %f1, [factor];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd2, %rd2, %rd3;
  ld.global.f32 %f2, [%rd2];
  mul.f32 %f2, %f2, %f1;
  st.global.f32 [%rd2], %f2;
DONE:
  ret;
}
)";

int main() {
  EXPECT_RESULT(cuCtxSynchronize(), CUDA_ERROR_NOT_INITIALIZED);
  CHECK(cuInit(0));
  int version = 0;
  CHECK(cuDriverGetVersion(&version));
  EXPECT(version >= 13000);
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  EXPECT_RESULT(cuDeviceGet(&dev, 99), CUDA_ERROR_INVALID_DEVICE);
  char name[256];
  CHECK(cuDeviceGetName(name, sizeof name, dev));
  CUuuid uuid1, uuid2;
  CHECK(cuDeviceGetUuid(&uuid1, dev));
  CHECK(cuDeviceGetUuid(&uuid2, dev));
  EXPECT(std::memcmp(&uuid1, &uuid2, sizeof uuid1) == 0);
  char bus[32];
  CHECK(cuDeviceGetPCIBusId(bus, sizeof bus, dev));
  CUdevice same;
  CHECK(cuDeviceGetByPCIBusId(&same, bus));
  EXPECT(same == dev);

  // Contexts: create makes it current; push/pop; stale handles are rejected.
  CUcontext ctx, current, other;
  CHECK(cuCtxCreate(&ctx, nullptr, 0, dev));
  CHECK(cuCtxGetCurrent(&current));
  EXPECT(current == ctx);
  CHECK(cuCtxCreate(&other, nullptr, 0, dev));
  CHECK(cuCtxPopCurrent(&current));
  EXPECT(current == other);
  CHECK(cuCtxDestroy(other));
  EXPECT_RESULT(cuCtxDestroy(other), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_RESULT(cuCtxPushCurrent(other), CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuCtxGetCurrent(&current));
  EXPECT(current == ctx);
  size_t stack = 0;
  CHECK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096));
  CHECK(cuCtxGetLimit(&stack, CU_LIMIT_STACK_SIZE));
  EXPECT(stack == 4096);

  // A module from PTX text: functions, parameter layout, initialised globals.
  CUmodule module;
  CHECK(cuModuleLoadData(&module, kPtx));
  CUfunction fn;
  CHECK(cuModuleGetFunction(&fn, module, "scale_kernel"));
  EXPECT_RESULT(cuModuleGetFunction(&fn, module, "missing"), CUDA_ERROR_NOT_FOUND);
  CHECK(cuModuleGetFunction(&fn, module, "scale_kernel"));
  size_t offset = 0, size = 0;
  CHECK(cuFuncGetParamInfo(fn, 2, &offset, &size));
  EXPECT(offset == 12 && size == 4);
  const char* fname = nullptr;
  CHECK(cuFuncGetName(&fname, fn));
  EXPECT(fname && std::strcmp(fname, "scale_kernel") == 0);
  CUdeviceptr answer;
  size_t answer_size = 0;
  CHECK(cuModuleGetGlobal(&answer, &answer_size, module, "answer"));
  EXPECT(answer_size == 4);
  unsigned value = 0;
  CHECK(cuMemcpyDtoH(&value, answer, 4));
  EXPECT(value == 42);
  CUdeviceptr scale;
  CHECK(cuModuleGetGlobal(&scale, &size, module, "scale"));
  double factors[2];
  CHECK(cuMemcpyDtoH(factors, scale, sizeof factors));
  EXPECT(factors[0] == 0.5 && factors[1] == 2.0);
  EXPECT_RESULT(cuModuleLoadData(&module, ".version 8.0\n.target sm_75\n.entry broken()\n{\n frob;\n}\n"),
                CUDA_ERROR_INVALID_PTX);

  // Memory and a stream with an event.
  CUdeviceptr buf;
  CHECK(cuMemAlloc(&buf, 1024 * sizeof(float)));
  CHECK(cuMemsetD32(buf, 0x3f800000, 1024)); // 1.0f
  CUstream stream;
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUevent done;
  CHECK(cuEventCreate(&done, CU_EVENT_DEFAULT));
  float host[1024];
  CHECK(cuMemcpyDtoHAsync(host, buf, sizeof host, stream));
  CHECK(cuEventRecord(done, stream));
  CHECK(cuEventSynchronize(done));
  EXPECT(host[0] == 1.0f && host[1023] == 1.0f);
  // Launch the PTX kernel: kernelParams, then the same through `extra` (a packed buffer).
  unsigned n = 1000;
  float factor = 3.0f;
  void* args[] = {&buf, &n, &factor};
  CHECK(cuLaunchKernel(fn, 1, 1, 1, 1024, 1, 1, 0, stream, args, nullptr));
  struct {
    CUdeviceptr data;
    unsigned n;
    float factor;
  } packed{buf, 1024, 0.5f};
  size_t packed_size = sizeof packed;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                   CU_LAUNCH_PARAM_END};
  CHECK(cuLaunchKernel(fn, 1, 1, 1, 1024, 1, 1, 0, stream, nullptr, extra));
  CHECK(cuMemcpyDtoHAsync(host, buf, sizeof host, stream));
  CHECK(cuStreamSynchronize(stream));
  EXPECT(host[0] == 1.5f && host[999] == 1.5f && host[1000] == 0.5f && host[1023] == 0.5f);
  EXPECT_RESULT(cuLaunchKernel(fn, 1, 1, 1, 2048, 1, 1, 0, stream, args, nullptr), CUDA_ERROR_INVALID_VALUE);

  CUdeviceptr base;
  size_t range = 0;
  CHECK(cuMemGetAddressRange(&base, &range, buf + 100));
  EXPECT(base == buf && range == 1024 * sizeof(float));
  unsigned type = 0;
  CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, buf));
  EXPECT(type == CU_MEMORYTYPE_DEVICE);

  // Misuse: errors, not crashes.
  EXPECT_RESULT(cuMemFree(buf + 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RESULT(cuMemcpyHtoD(0x1000, host, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RESULT(cuStreamSynchronize(reinterpret_cast<CUstream>(&value)), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_RESULT(cuEventQuery(reinterpret_cast<CUevent>(&value)), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_RESULT(cuMemAlloc(nullptr, 16), CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemFree(buf));
  EXPECT_RESULT(cuMemFree(buf), CUDA_ERROR_INVALID_VALUE); // double free

  CHECK(cuEventDestroy(done));
  CHECK(cuStreamDestroy(stream));
  EXPECT_RESULT(cuStreamDestroy(stream), CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuModuleUnload(module));
  EXPECT_RESULT(cuModuleGetFunction(&fn, module, "scale_kernel"), CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuCtxDestroy(ctx));
  printf("driver_api: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
