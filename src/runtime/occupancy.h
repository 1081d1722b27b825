// Occupancy: how many blocks of a kernel one multiprocessor holds at once, computed from
// the device's limits the way NVIDIA's occupancy calculator (cuda_occupancy.h) does.
//
//   warps per block    W = ceil(threads / warp size)
//   by warps           floor(max threads per SM / warp size / W)
//   by blocks          max blocks per SM
//   by registers       registers per warp R = ceil(registers per thread * warp size, 256);
//                      floor(floor(registers per SM / R) / W), and 0 when W * R exceeds
//                      the registers one block may use
//   by shared memory   S = ceil(static + dynamic + reserved per block, 128);
//                      floor(shared memory per SM / S), and 0 when static + dynamic
//                      exceeds the opt-in per-block limit
//   active blocks      the smallest of the four; 0 when the block is larger than the
//                      kernel or the device allows.
// A CPU has no register file or carve-out to model; its DeviceProperties describe an
// Ampere-class multiprocessor so that programs size their launches as they would there.
#pragma once

#include <algorithm>
#include <cstddef>

#include "runtime/backend.h"

namespace mimic::runtime {

struct KernelResources {
  int max_threads_per_block = 1024; // of the kernel (.maxntid) or the device
  int registers_per_thread = 32;
  size_t static_shared_bytes = 0;
};

constexpr int kRegisterAllocationUnit = 256;
constexpr size_t kSharedAllocationUnit = 128;
constexpr int kMaxRegistersPerThread = 255;

int max_active_blocks(const DeviceProperties& device, const KernelResources& kernel, int block_size,
                      size_t dynamic_shared_bytes);

// The largest dynamic shared memory per block that still lets `blocks` blocks of
// `block_size` threads reside on one multiprocessor; 0 when they never fit.
size_t available_dynamic_shared(const DeviceProperties& device, const KernelResources& kernel,
                                int blocks, int block_size);

struct BlockSizeChoice {
  int min_grid_size = 0; // blocks that fill the device at that occupancy
  int block_size = 0;
};

// The block size (a multiple of the warp size, or the limit) with the most resident
// threads per multiprocessor; `dynamic_shared(block_size)` gives each size's dynamic shared
// memory. `block_size_limit` 0 means no limit beyond the kernel's and the device's.
template <typename DynamicShared>
BlockSizeChoice max_potential_block_size(const DeviceProperties& device,
                                         const KernelResources& kernel, int block_size_limit,
                                         DynamicShared dynamic_shared) {
  int limit = std::min(kernel.max_threads_per_block, device.max_threads_per_block);
  if (block_size_limit > 0) limit = std::min(limit, block_size_limit);
  BlockSizeChoice best;
  int best_threads = 0, best_blocks = 0;
  int granularity = device.warp_size;
  for (int rounded = (limit + granularity - 1) / granularity * granularity; rounded > 0;
       rounded -= granularity) {
    int block_size = std::min(limit, rounded);
    int blocks = max_active_blocks(device, kernel, block_size, dynamic_shared(block_size));
    if (blocks * block_size > best_threads) {
      best_threads = blocks * block_size;
      best.block_size = block_size;
      best_blocks = blocks;
    }
    if (best_threads == device.max_threads_per_multiprocessor) break;
  }
  best.min_grid_size = best_blocks * device.multiprocessor_count;
  return best;
}

} // namespace mimic::runtime
