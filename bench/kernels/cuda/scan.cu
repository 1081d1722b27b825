// Exclusive prefix sum of uint32 (wrapping) in three passes: each block of 256 threads
// scans 1024 elements (4 per thread, warp scan with __shfl_up_sync, then across warps)
// and writes its total; one block scans the totals; each block adds its offset.
#include "cuda_kernels.h"

namespace bench::cuda {

constexpr unsigned kBlock = 256, kItems = 4, kTile = kBlock * kItems;

static __device__ unsigned warp_inclusive_scan(unsigned v) {
  unsigned lane = threadIdx.x % kWarp;
  for (unsigned offset = 1; offset < kWarp; offset *= 2) {
    unsigned up = __shfl_up_sync(kFullMask, v, offset);
    if (lane >= offset) v += up;
  }
  return v;
}

// The exclusive prefix of `v` over the block, and the block's total in *total.
static __device__ unsigned block_exclusive_scan(unsigned v, unsigned* total) {
  __shared__ unsigned warp_totals[32];
  unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  unsigned inclusive = warp_inclusive_scan(v);
  if (lane == kWarp - 1) warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    unsigned w = lane < blockDim.x / kWarp ? warp_totals[lane] : 0;
    warp_totals[lane] = warp_inclusive_scan(w);
  }
  __syncthreads();
  unsigned before = warp == 0 ? 0 : warp_totals[warp - 1];
  *total = warp_totals[blockDim.x / kWarp - 1];
  __syncthreads(); // warp_totals is reused by the next call
  return before + inclusive - v;
}

__global__ void scan_tiles(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                           unsigned* __restrict__ tile_sums, size_t n) {
  size_t base = size_t(blockIdx.x) * kTile + threadIdx.x * kItems;
  unsigned items[kItems];
  unsigned sum = 0;
  for (unsigned k = 0; k < kItems; ++k) {
    items[k] = base + k < n ? in[base + k] : 0;
    sum += items[k];
  }
  unsigned total;
  unsigned prefix = block_exclusive_scan(sum, &total);
  for (unsigned k = 0; k < kItems; ++k) {
    if (base + k < n) out[base + k] = prefix;
    prefix += items[k];
  }
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// One block: scans `count` tile sums in place, in chunks of blockDim.x with a carry.
__global__ void scan_tile_sums(unsigned* sums, size_t count) {
  unsigned carry = 0;
  for (size_t chunk = 0; chunk < count; chunk += blockDim.x) {
    size_t i = chunk + threadIdx.x;
    unsigned v = i < count ? sums[i] : 0;
    unsigned total;
    unsigned prefix = block_exclusive_scan(v, &total);
    if (i < count) sums[i] = carry + prefix;
    carry += total;
  }
}

__global__ void add_tile_offsets(unsigned* __restrict__ out, const unsigned* __restrict__ tile_sums,
                                 size_t n) {
  unsigned offset = tile_sums[blockIdx.x];
  size_t base = size_t(blockIdx.x) * kTile;
  for (unsigned k = threadIdx.x; k < kTile; k += blockDim.x)
    if (base + k < n) out[base + k] += offset;
}

// buffers: in, out, tile sums (scratch, one per 1024 elements)
void run_scan(void* const* buffers, const Params& p) {
  auto* in = static_cast<const unsigned*>(buffers[0]);
  auto* out = static_cast<unsigned*>(buffers[1]);
  auto* sums = static_cast<unsigned*>(buffers[2]);
  unsigned tiles = unsigned((p.n + kTile - 1) / kTile);
  scan_tiles<<<tiles, kBlock>>>(in, out, sums, p.n);
  scan_tile_sums<<<1, 1024>>>(sums, tiles);
  add_tile_offsets<<<tiles, kBlock>>>(out, sums, p.n);
}

} // namespace bench::cuda
