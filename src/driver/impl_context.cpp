// Contexts: creation, the per-thread current-context stack, limits and configuration.
#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "runtime/memory.h"
#include "runtime/stream.h"

namespace mimic::driver::impl {

namespace {

constexpr unsigned kContextFlags = CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX |
                                   CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS;

CUresult create(CUcontext* pctx, unsigned flags, CUdevice dev) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~kContextFlags)
    return CUDA_ERROR_INVALID_VALUE;
  auto c = runtime::create_context(*d, flags);
  if (!c)
    return CUDA_ERROR_OUT_OF_MEMORY;
  runtime::push_current_context(c.value());
  *pctx = runtime::to_handle(c.value());
  return CUDA_SUCCESS;
}

} // namespace

CUresult cuCtxCreate_v3020(CUcontext* pctx, unsigned int flags, CUdevice_v1 dev) { return create(pctx, flags, dev); }

CUresult cuCtxCreate_v11040(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams, unsigned int flags,
                            CUdevice_v1 dev) {
  if (numParams < 0 || (numParams > 0 && !paramsArray))
    return CUDA_ERROR_INVALID_VALUE;
  // Execution affinity (SM partitions) has no meaning on Mimic's devices.
  if (numParams > 0)
    return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
  return create(pctx, flags, dev);
}

CUresult cuCtxCreate_v12050(CUcontext* pctx, CUctxCreateParams* params, unsigned int flags, CUdevice dev) {
  if (params && (params->numExecAffinityParams > 0 || params->cigParams))
    return CUDA_ERROR_NOT_SUPPORTED;
  return create(pctx, flags, dev);
}

CUresult cuCtxDestroy_v4000(CUcontext ctx) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  runtime::Context* c = runtime::find_context(ctx);
  if (!c)
    return CUDA_ERROR_INVALID_CONTEXT;
  runtime::synchronize_context(c);
  return runtime::destroy_context(c);
}

CUresult cuCtxGetCurrent_v4000(CUcontext* pctx) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  *pctx = runtime::to_handle(runtime::current_context());
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent_v4000(CUcontext ctx) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  runtime::Context* c = nullptr;
  if (ctx && !(c = runtime::find_context(ctx)))
    return CUDA_ERROR_INVALID_CONTEXT;
  runtime::set_current_context(c);
  return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v4000(CUcontext ctx) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  runtime::Context* c = runtime::find_context(ctx);
  if (!c)
    return CUDA_ERROR_INVALID_CONTEXT;
  runtime::push_current_context(c);
  return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v4000(CUcontext* pctx) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  runtime::Context* c = runtime::pop_current_context();
  if (!c)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx)
    *pctx = runtime::to_handle(c);
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice_v2000(CUdevice_v1* device) {
  runtime::Context* c = nullptr;
  CUresult r = current_context(c);
  if (!c)
    return r;
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  *device = c->device->ordinal();
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice_v13000(CUdevice* device, CUcontext ctx) {
  runtime::Context* c = nullptr;
  CUresult r = context_or_current(ctx, c);
  if (!c)
    return r;
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  *device = c->device->ordinal();
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize_v2000() {
  runtime::Context* c = nullptr;
  CUresult r = current_context(c);
  if (!c)
    return r;
  return runtime::synchronize_context(c);
}

CUresult cuCtxSynchronize_v13000(CUcontext ctx) {
  runtime::Context* c = nullptr;
  CUresult r = context_or_current(ctx, c);
  if (!c)
    return r;
  return runtime::synchronize_context(c);
}

CUresult cuCtxGetFlags_v7000(unsigned int* flags) {
  runtime::Context* c = nullptr;
  CUresult r = current_context(c);
  if (!c)
    return r;
  if (!flags)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(c->mutex);
  *flags = c->flags;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetFlags_v12010(unsigned int flags) {
  runtime::Context* c = nullptr;
  CUresult r = current_context(c);
  if (!c)
    return r;
  if (flags & ~kContextFlags)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(c->mutex);
  c->flags = flags;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetApiVersion_v3020(CUcontext ctx, unsigned int* version) {
  runtime::Context* c = nullptr;
  CUresult r = context_or_current(ctx, c);
  if (!c)
    return r;
  if (!version)
    return CUDA_ERROR_INVALID_VALUE;
  *version = 3020; // the context API version every current runtime expects
  return CUDA_SUCCESS;
}

CUresult cuCtxGetId_v12000(CUcontext ctx, unsigned long long* ctxId) {
  runtime::Context* c = nullptr;
  CUresult r = context_or_current(ctx, c);
  if (!c)
    return r;
  if (!ctxId)
    return CUDA_ERROR_INVALID_VALUE;
  *ctxId = c->id;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetLimit_v3010(size_t* pvalue, CUlimit limit) {
  runtime::Context* c = nullptr;
  CUresult r = current_context(c);
  if (!c)
    return r;
  if (!pvalue || limit < 0 || limit >= CU_LIMIT_MAX)
    return limit >= CU_LIMIT_MAX ? CUDA_ERROR_UNSUPPORTED_LIMIT : CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(c->mutex);
  *pvalue = c->limits[limit];
  return CUDA_SUCCESS;
}

CUresult cuCtxSetLimit_v3010(CUlimit limit, size_t value) {
  runtime::Context* c = nullptr;
  CUresult r = current_context(c);
  if (!c)
    return r;
  if (limit < 0 || limit >= CU_LIMIT_MAX)
    return CUDA_ERROR_UNSUPPORTED_LIMIT;
  if (limit == CU_LIMIT_MAX_L2_FETCH_GRANULARITY && value > 128)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(c->mutex);
  c->limits[limit] = value;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCacheConfig_v3020(CUfunc_cache* pconfig) {
  runtime::Context* c = nullptr;
  CUresult r = current_context(c);
  if (!c)
    return r;
  if (!pconfig)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(c->mutex);
  *pconfig = c->cache_config;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCacheConfig_v3020(CUfunc_cache config) {
  runtime::Context* c = nullptr;
  CUresult r = current_context(c);
  if (!c)
    return r;
  if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(c->mutex);
  c->cache_config = config;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetSharedMemConfig_v4020(CUsharedconfig* pConfig) {
  runtime::Context* c = nullptr;
  CUresult r = current_context(c);
  if (!c)
    return r;
  if (!pConfig)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(c->mutex);
  *pConfig = c->shared_config;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetSharedMemConfig_v4020(CUsharedconfig config) {
  runtime::Context* c = nullptr;
  CUresult r = current_context(c);
  if (!c)
    return r;
  if (config < CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE || config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(c->mutex);
  c->shared_config = config;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetStreamPriorityRange_v5050(int* leastPriority, int* greatestPriority) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  // Same range as NVIDIA's GPUs: 0 (lowest) to -5 (highest).
  if (leastPriority)
    *leastPriority = 0;
  if (greatestPriority)
    *greatestPriority = -5;
  return CUDA_SUCCESS;
}

} // namespace mimic::driver::impl
