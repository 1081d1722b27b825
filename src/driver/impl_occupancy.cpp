// Occupancy queries. The formula lives in runtime/occupancy.h; here the function's
// resources come from its attributes, and cluster queries from the launch configuration.
#include <algorithm>

#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "driver/impl_launch.h"
#include "support/log.h"

namespace mimic::driver {

runtime::KernelResources kernel_resources(runtime::Function* f) {
  auto handle = reinterpret_cast<CUfunction>(f);
  runtime::KernelResources k;
  int value = 0;
  if (impl::cuFuncGetAttribute_v2020(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, handle) ==
      CUDA_SUCCESS)
    k.max_threads_per_block = value;
  if (impl::cuFuncGetAttribute_v2020(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, handle) == CUDA_SUCCESS)
    k.registers_per_thread = value;
  if (impl::cuFuncGetAttribute_v2020(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, handle) ==
      CUDA_SUCCESS)
    k.static_shared_bytes = size_t(value);
  return k;
}

CUresult occupancy_function(CUfunction handle, runtime::Context*& c, runtime::Function*& f) {
  if (CUresult r = current_context(c); !c) return r; // a query: answers after a sticky error
  auto resolved = runtime::resolve_function(handle, c);
  if (!resolved) {
    // A library that fails to load here (lazily, at its first use) says why, once.
    if (resolved.error().code() && resolved.error().code() != CUDA_ERROR_INVALID_HANDLE)
      warn_once("load:" + resolved.error().message(), resolved.error().message());
    return resolved.error().code() ? CUresult(resolved.error().code()) : CUDA_ERROR_INVALID_HANDLE;
  }
  f = resolved.value();
  return CUDA_SUCCESS;
}

CUresult check_cooperative_grid(runtime::Function* f, const unsigned grid[3],
                                const unsigned block[3], unsigned shared) {
  const auto& p = f->module->context->device->properties();
  if (!p.cooperative_launch) return CUDA_ERROR_NOT_SUPPORTED;
  uint64_t threads = uint64_t(block[0]) * block[1] * block[2];
  uint64_t blocks = uint64_t(grid[0]) * grid[1] * grid[2];
  int per_sm = runtime::max_active_blocks(p, kernel_resources(f), int(threads), shared);
  if (blocks > uint64_t(per_sm) * uint64_t(p.multiprocessor_count))
    return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  return CUDA_SUCCESS;
}

namespace {

// The cluster shape a launch asks for: its CLUSTER_DIMENSION attribute, else the
// function's required cluster size, else one block.
CUresult cluster_size_of(const CUlaunchConfig* config, runtime::Function* f, unsigned& size) {
  size = 1;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& a = config->attrs[i];
    if (a.id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) continue;
    const auto& d = a.value.clusterDim;
    if (d.x == 0 || d.y == 0 || d.z == 0) return CUDA_ERROR_INVALID_VALUE;
    size = d.x * d.y * d.z;
    return CUDA_SUCCESS;
  }
  if (f->required_cluster[0] > 0)
    size = unsigned(f->required_cluster[0]) * std::max(f->required_cluster[1], 1) *
           std::max(f->required_cluster[2], 1);
  return CUDA_SUCCESS;
}

constexpr int kPortableClusterSize = 8;

bool clusters_supported(const runtime::DeviceProperties& p) {
  return p.cc_major >= 9;
}

} // namespace

} // namespace mimic::driver

namespace mimic::driver::impl {

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000(int* numBlocks, CUfunction func,
                                                                    int blockSize,
                                                                    size_t dynamicSMemSize,
                                                                    unsigned int flags) {
  runtime::Context* c = nullptr;
  runtime::Function* f = nullptr;
  if (CUresult r = occupancy_function(func, c, f)) return r;
  if (!numBlocks || (flags & ~unsigned(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)))
    return CUDA_ERROR_INVALID_VALUE;
  // The carve-out (caching override) is not modelled: every block may use all of the
  // multiprocessor's shared memory, so the flag changes nothing.
  *numBlocks = runtime::max_active_blocks(c->device->properties(), kernel_resources(f), blockSize,
                                          dynamicSMemSize);
  return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050(int* numBlocks, CUfunction func,
                                                           int blockSize, size_t dynamicSMemSize) {
  return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000(
      numBlocks, func, blockSize, dynamicSMemSize, CU_OCCUPANCY_DEFAULT);
}

CUresult
cuOccupancyMaxPotentialBlockSizeWithFlags_v7000(int* minGridSize, int* blockSize, CUfunction func,
                                                CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                size_t dynamicSMemSize, int blockSizeLimit,
                                                unsigned int flags) {
  runtime::Context* c = nullptr;
  runtime::Function* f = nullptr;
  if (CUresult r = occupancy_function(func, c, f)) return r;
  if (!minGridSize || !blockSize || blockSizeLimit < 0 ||
      (flags & ~unsigned(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)))
    return CUDA_ERROR_INVALID_VALUE;
  auto dynamic_shared = [&](int size) {
    return blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(size) : dynamicSMemSize;
  };
  auto choice = runtime::max_potential_block_size(c->device->properties(), kernel_resources(f),
                                                  blockSizeLimit, dynamic_shared);
  *minGridSize = choice.min_grid_size;
  *blockSize = choice.block_size;
  return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialBlockSize_v6050(int* minGridSize, int* blockSize, CUfunction func,
                                                CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                size_t dynamicSMemSize, int blockSizeLimit) {
  return cuOccupancyMaxPotentialBlockSizeWithFlags_v7000(
      minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize, blockSizeLimit,
      CU_OCCUPANCY_DEFAULT);
}

CUresult cuOccupancyAvailableDynamicSMemPerBlock_v10020(size_t* dynamicSmemSize, CUfunction func,
                                                        int numBlocks, int blockSize) {
  runtime::Context* c = nullptr;
  runtime::Function* f = nullptr;
  if (CUresult r = occupancy_function(func, c, f)) return r;
  if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0) return CUDA_ERROR_INVALID_VALUE;
  *dynamicSmemSize = runtime::available_dynamic_shared(c->device->properties(), kernel_resources(f),
                                                       numBlocks, blockSize);
  return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialClusterSize_v11070(int* clusterSize, CUfunction func,
                                                   const CUlaunchConfig* config) {
  runtime::Context* c = nullptr;
  runtime::Function* f = nullptr;
  if (CUresult r = occupancy_function(func, c, f)) return r;
  if (!clusterSize || !config || (config->numAttrs && !config->attrs))
    return CUDA_ERROR_INVALID_VALUE;
  const auto& p = c->device->properties();
  if (!clusters_supported(p)) {
    *clusterSize = 1;
    return CUDA_SUCCESS;
  }
  unsigned threads = config->blockDimX * config->blockDimY * config->blockDimZ;
  int per_sm =
      runtime::max_active_blocks(p, kernel_resources(f), int(threads), config->sharedMemBytes);
  // A cluster's blocks are co-scheduled on one GPC; Mimic treats the whole device as one.
  int fit = per_sm * p.multiprocessor_count;
  *clusterSize = std::max(0, std::min(kPortableClusterSize, fit));
  return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxActiveClusters_v11070(int* numClusters, CUfunction func,
                                             const CUlaunchConfig* config) {
  runtime::Context* c = nullptr;
  runtime::Function* f = nullptr;
  if (CUresult r = occupancy_function(func, c, f)) return r;
  if (!numClusters || !config || (config->numAttrs && !config->attrs))
    return CUDA_ERROR_INVALID_VALUE;
  unsigned cluster = 1;
  if (CUresult r = cluster_size_of(config, f, cluster)) return r;
  const auto& p = c->device->properties();
  if (cluster > 1 && !clusters_supported(p)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  if (cluster > unsigned(kPortableClusterSize)) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  unsigned threads = config->blockDimX * config->blockDimY * config->blockDimZ;
  int per_sm =
      runtime::max_active_blocks(p, kernel_resources(f), int(threads), config->sharedMemBytes);
  *numClusters = int(uint64_t(per_sm) * uint64_t(p.multiprocessor_count) / cluster);
  return CUDA_SUCCESS;
}

} // namespace mimic::driver::impl
