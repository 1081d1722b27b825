#include "runtime/occupancy.h"

#include <algorithm>

namespace mimic::runtime {

namespace {

size_t round_up(size_t value, size_t unit) {
  return (value + unit - 1) / unit * unit;
}

int blocks_by_registers(const DeviceProperties& d, const KernelResources& k, int warps_per_block) {
  if (k.registers_per_thread > kMaxRegistersPerThread) return 0;
  if (k.registers_per_thread <= 0) return d.max_blocks_per_multiprocessor;
  int per_warp =
      int(round_up(size_t(k.registers_per_thread) * d.warp_size, kRegisterAllocationUnit));
  if (int64_t(per_warp) * warps_per_block > d.registers_per_block) return 0;
  return d.registers_per_multiprocessor / per_warp / warps_per_block;
}

int blocks_by_shared(const DeviceProperties& d, const KernelResources& k, size_t dynamic_shared) {
  size_t requested = k.static_shared_bytes + dynamic_shared;
  if (requested > size_t(d.shared_memory_per_block_optin)) return 0;
  size_t per_block =
      round_up(requested + size_t(d.reserved_shared_memory_per_block), kSharedAllocationUnit);
  if (per_block == 0) return d.max_blocks_per_multiprocessor;
  return int(size_t(d.shared_memory_per_multiprocessor) / per_block);
}

} // namespace

int max_active_blocks(const DeviceProperties& d, const KernelResources& k, int block_size,
                      size_t dynamic_shared_bytes) {
  if (block_size <= 0 || block_size > std::min(k.max_threads_per_block, d.max_threads_per_block))
    return 0;
  int warps_per_block = (block_size + d.warp_size - 1) / d.warp_size;
  int by_warps = d.max_threads_per_multiprocessor / d.warp_size / warps_per_block;
  int blocks = std::min(by_warps, d.max_blocks_per_multiprocessor);
  blocks = std::min(blocks, blocks_by_registers(d, k, warps_per_block));
  return std::min(blocks, blocks_by_shared(d, k, dynamic_shared_bytes));
}

size_t available_dynamic_shared(const DeviceProperties& d, const KernelResources& k, int blocks,
                                int block_size) {
  if (blocks <= 0 || max_active_blocks(d, k, block_size, 0) < blocks) return 0;
  size_t per_block = size_t(d.shared_memory_per_multiprocessor) / size_t(blocks) /
                     kSharedAllocationUnit * kSharedAllocationUnit;
  size_t overhead = k.static_shared_bytes + size_t(d.reserved_shared_memory_per_block);
  if (per_block <= overhead) return 0;
  size_t limit = size_t(d.shared_memory_per_block_optin) -
                 std::min(k.static_shared_bytes, size_t(d.shared_memory_per_block_optin));
  return std::min(per_block - overhead, limit);
}

} // namespace mimic::runtime
