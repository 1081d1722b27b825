// cuLaunchKernelEx and cuLaunchCooperativeKernel: the launch configuration and its
// attributes are checked here, cooperative grids against the resident-block limit, and
// the launch itself takes cuLaunchKernel's path (validation of the shape, shared memory
// and parameters, stream capture, running).
#include "driver/impl_launch.h"
#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "runtime/stream.h"

namespace mimic::driver::impl {

namespace {

constexpr unsigned kPortableClusterSize = 8;

struct LaunchRequest {
  CUfunction function = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared = 0;
  CUstream stream = nullptr;
  void** params = nullptr;
  void** extra = nullptr;
  bool per_thread = false;
  bool cooperative = false;
  unsigned cluster[3] = {0, 0, 0}; // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION (0: none given)
  CUevent completion_event = nullptr;
};

// A block and grid shape the device and the function accept; anything else is left to
// cuLaunchKernel's checks, which report it.
bool shape_ok(const runtime::Function& f, const unsigned grid[3], const unsigned block[3]) {
  const auto& p = f.module->context->device->properties();
  for (int i = 0; i < 3; ++i)
    if (grid[i] == 0 || block[i] == 0 || block[i] > unsigned(p.max_block_dim[i]) ||
        grid[i] > unsigned(p.max_grid_dim[i]))
      return false;
  uint64_t threads = uint64_t(block[0]) * block[1] * block[2];
  int limit =
      f.info->max_threads_per_block ? f.info->max_threads_per_block : p.max_threads_per_block;
  return threads <= uint64_t(limit);
}

CUresult check_cluster(const CUlaunchAttributeValue& v, LaunchRequest& r,
                       const runtime::Context* c) {
  const auto& d = v.clusterDim;
  if (d.x == 0 || d.y == 0 || d.z == 0) return CUDA_ERROR_INVALID_VALUE;
  if (r.grid[0] % d.x || r.grid[1] % d.y || r.grid[2] % d.z) return CUDA_ERROR_INVALID_VALUE;
  uint64_t size = uint64_t(d.x) * d.y * d.z;
  r.cluster[0] = d.x;
  r.cluster[1] = d.y;
  r.cluster[2] = d.z;
  if (size == 1) return CUDA_SUCCESS;
  // Thread block clusters arrived with compute capability 9.0.
  if (c->device->properties().cc_major < 9 || size > kPortableClusterSize)
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  return CUDA_SUCCESS;
}

CUresult check_event(CUevent e) {
  return runtime::find_event(e) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

// One CUlaunchAttribute of a kernel launch. Hints the CPU has no use for (priority, cache
// policy, memory synchronisation domains, programmatic serialisation) are checked and
// otherwise ignored.
CUresult apply_attribute(const CUlaunchAttribute& a, LaunchRequest& r, const runtime::Context* c) {
  const CUlaunchAttributeValue& v = a.value;
  switch (a.id) {
  case CU_LAUNCH_ATTRIBUTE_IGNORE:
  case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
  case CU_LAUNCH_ATTRIBUTE_PRIORITY:
  case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    return CUDA_SUCCESS;
  case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: {
    const CUaccessPolicyWindow& w = v.accessPolicyWindow;
    bool ok = w.hitRatio >= 0.0f && w.hitRatio <= 1.0f &&
              unsigned(w.hitProp) <= CU_ACCESS_PROPERTY_PERSISTING &&
              unsigned(w.missProp) <= CU_ACCESS_PROPERTY_PERSISTING;
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  }
  case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    r.cooperative = v.cooperative != 0;
    return CUDA_SUCCESS;
  case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
    return check_cluster(v, r, c);
  case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION: {
    const auto& d = v.preferredClusterDim;
    return d.x && d.y && d.z ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  }
  case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    return unsigned(v.clusterSchedulingPolicyPreference) <=
                   CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_VALUE;
  case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
    return unsigned(v.memSyncDomain) <= CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE ? CUDA_SUCCESS
                                                                         : CUDA_ERROR_INVALID_VALUE;
  case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
    return check_event(v.programmaticEvent.event);
  case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
    r.completion_event = v.launchCompletionEvent.event;
    return check_event(v.launchCompletionEvent.event);
  case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    return v.sharedMemCarveout <= 100 || v.sharedMemCarveout == ~0u ? CUDA_SUCCESS
                                                                    : CUDA_ERROR_INVALID_VALUE;
  case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
    return v.nvlinkUtilCentricScheduling <= 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:       // streams only
  case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE: // graph nodes only
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult launch(const LaunchRequest& r) {
  runtime::Context* c = nullptr;
  runtime::Function* f = nullptr;
  if (CUresult e = occupancy_function(r.function, c, f)) return e;
  if (r.cluster[0])
    if (CUresult e = check_cluster_support(*f, r.cluster)) return e;
  if (r.cooperative && shape_ok(*f, r.grid, r.block))
    if (CUresult e = check_cooperative_grid(f, r.grid, r.block, r.shared)) return e;
  auto run = r.per_thread ? cuLaunchKernel_v7000_ptsz : cuLaunchKernel_v4000;
  CUresult result = run(r.function, r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1],
                        r.block[2], r.shared, r.stream, r.params, r.extra);
  if (result != CUDA_SUCCESS || !r.completion_event) return result;
  runtime::Stream* s = runtime::resolve_stream(r.stream, c, r.per_thread);
  runtime::Event* e = runtime::find_event(r.completion_event);
  if (s && e) runtime::record_event(e, s);
  return CUDA_SUCCESS;
}

CUresult launch_ex(const CUlaunchConfig* config, CUfunction f, void** params, void** extra,
                   bool per_thread) {
  runtime::Context* c = nullptr;
  if (CUresult e = current_context(c)) return e;
  if (!config || (config->numAttrs && !config->attrs)) return CUDA_ERROR_INVALID_VALUE;
  LaunchRequest r;
  r.function = f;
  r.grid[0] = config->gridDimX;
  r.grid[1] = config->gridDimY;
  r.grid[2] = config->gridDimZ;
  r.block[0] = config->blockDimX;
  r.block[1] = config->blockDimY;
  r.block[2] = config->blockDimZ;
  r.shared = config->sharedMemBytes;
  r.stream = config->hStream;
  r.params = params;
  r.extra = extra;
  r.per_thread = per_thread;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (CUresult e = apply_attribute(config->attrs[i], r, c)) return e;
  return launch(r);
}

CUresult launch_cooperative(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shared, CUstream s, void** params,
                            bool per_thread) {
  LaunchRequest r;
  r.function = f;
  r.grid[0] = gx;
  r.grid[1] = gy;
  r.grid[2] = gz;
  r.block[0] = bx;
  r.block[1] = by;
  r.block[2] = bz;
  r.shared = shared;
  r.stream = s;
  r.params = params;
  r.per_thread = per_thread;
  r.cooperative = true;
  return launch(r);
}

} // namespace

CUresult cuLaunchKernelEx_v11060(const CUlaunchConfig* config, CUfunction f, void** kernelParams,
                                 void** extra) {
  return launch_ex(config, f, kernelParams, extra, false);
}

CUresult cuLaunchKernelEx_v11060_ptsz(const CUlaunchConfig* config, CUfunction f,
                                      void** kernelParams, void** extra) {
  return launch_ex(config, f, kernelParams, extra, true);
}

CUresult cuLaunchCooperativeKernel_v9000(CUfunction f, unsigned int gx, unsigned int gy,
                                         unsigned int gz, unsigned int bx, unsigned int by,
                                         unsigned int bz, unsigned int shared, CUstream s,
                                         void** params) {
  return launch_cooperative(f, gx, gy, gz, bx, by, bz, shared, s, params, false);
}

CUresult cuLaunchCooperativeKernel_v9000_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                              unsigned int gz, unsigned int bx, unsigned int by,
                                              unsigned int bz, unsigned int shared, CUstream s,
                                              void** params) {
  return launch_cooperative(f, gx, gy, gz, bx, by, bz, shared, s, params, true);
}

} // namespace mimic::driver::impl
