// Pitched regions, CUDA arrays, memory pools and the occupancy calculator of the runtime.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "runtime/array.h"
#include "runtime/context.h"
#include "runtime/device.h"
#include "runtime/memory.h"
#include "runtime/mempool.h"
#include "runtime/occupancy.h"
#include "runtime/pitched.h"
#include "runtime/stream.h"

using namespace mimic::runtime;

namespace {

Context* primary() {
  Context* c = nullptr;
  EXPECT_EQ(retain_primary(devices().at(0), &c), CUDA_SUCCESS);
  return c;
}

uintptr_t address(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

uint64_t used(MemPool* pool) {
  std::lock_guard lock(pool->mutex);
  return pool->used;
}
uint64_t reserved(MemPool* pool) {
  std::lock_guard lock(pool->mutex);
  return pool->reserved;
}

} // namespace

TEST(Pitched, SpanCoversEveryRowAndRejectsShortPitches) {
  size_t bytes = 0;
  EXPECT_TRUE(region_span({0x1000, 64, 0, false}, {10, 3, 1}, bytes));
  EXPECT_EQ(bytes, 2 * 64 + 10u);
  EXPECT_TRUE(region_span({0x1000, 64, 256, false}, {10, 3, 2}, bytes));
  EXPECT_EQ(bytes, 256 + 2 * 64 + 10u);
  EXPECT_FALSE(region_span({0x1000, 8, 0, false}, {10, 3, 1}, bytes));    // pitch < width
  EXPECT_FALSE(region_span({0x1000, 64, 100, false}, {10, 3, 2}, bytes)); // slice too small
  EXPECT_FALSE(region_span({0x1000, SIZE_MAX / 2, 0, false}, {10, 4, 1}, bytes));
  EXPECT_TRUE(region_span({0x1000, 0, 0, false}, {10, 1, 1}, bytes)); // one row needs no pitch
}

TEST(Pitched, DeviceRegionsMustLieInOneAllocation) {
  Context* c = primary();
  auto p = allocate(c, 1024, MemoryKind::Device);
  ASSERT_TRUE(p);
  uintptr_t base = address(p.value());
  EXPECT_EQ(check_region({base, 128, 0, true}, {100, 8, 1}), CUDA_SUCCESS);
  EXPECT_EQ(check_region({base, 128, 0, true}, {100, 9, 1}), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(check_region({base + 64, 128, 0, true}, {100, 8, 1}), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(check_region({0x10, 128, 0, true}, {100, 2, 1}), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(check_region({0, 128, 0, false}, {100, 2, 1}), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(release(p.value(), {MemoryKind::Device}), CUDA_SUCCESS);
}

TEST(Pitched, CopiesAndFillsRowsOnly) {
  Backend& backend = devices()[0].backend();
  std::vector<uint8_t> src(4 * 16), dst(4 * 32, 0xee);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = uint8_t(i);
  ASSERT_TRUE(copy_pitched(backend, {address(dst.data()), 32, 0, false},
                           {address(src.data()), 16, 0, false}, {10, 4, 1}));
  for (size_t r = 0; r < 4; ++r)
    for (size_t x = 0; x < 32; ++x)
      EXPECT_EQ(dst[r * 32 + x], x < 10 ? uint8_t(r * 16 + x) : 0xee) << r << "," << x;
  ASSERT_TRUE(
      fill_pitched(backend, {address(dst.data()) + 12, 32, 0, false}, 0x01020304, 4, {8, 4, 1}));
  uint32_t word;
  std::memcpy(&word, &dst[3 * 32 + 16], 4);
  EXPECT_EQ(word, 0x01020304u);
  EXPECT_EQ(dst[3 * 32 + 20], 0xee);
}

TEST(Arrays, RowMajorStorageAndValidation) {
  Context* c = primary();
  CUDA_ARRAY3D_DESCRIPTOR d = {};
  d.Width = 5;
  d.Height = 3;
  d.Depth = 2;
  d.Format = CU_AD_FORMAT_FLOAT;
  d.NumChannels = 2;
  auto a = create_array(c, d);
  ASSERT_TRUE(a);
  EXPECT_EQ(a.value()->element_bytes, 8u);
  EXPECT_EQ(a.value()->row_bytes, 40u);
  EXPECT_EQ(a.value()->slice_bytes(), 120u);
  EXPECT_EQ(find_array(to_handle(a.value())), a.value());
  EXPECT_TRUE(find_allocation(a.value()->data, 240));
  d.NumChannels = 3;
  EXPECT_EQ(create_array(c, d).error().code(), CUDA_ERROR_INVALID_VALUE);
  d.NumChannels = 1;
  d.Flags = CUDA_ARRAY3D_LAYERED;
  EXPECT_EQ(create_array(c, d).error().code(), CUDA_ERROR_NOT_SUPPORTED);
  auto other = create_context(devices()[0], 0);
  ASSERT_TRUE(other);
  d.Flags = 0;
  auto orphan = create_array(other.value(), d);
  ASSERT_TRUE(orphan);
  void* orphan_data = orphan.value()->data;
  EXPECT_EQ(destroy_context(other.value()), CUDA_SUCCESS); // takes the array and its memory
  EXPECT_FALSE(find_allocation(orphan_data));
  EXPECT_EQ(find_array(to_handle(orphan.value())), nullptr);
  EXPECT_EQ(destroy_array(orphan.value()), CUDA_ERROR_INVALID_HANDLE);
  Array* stale = a.value();
  EXPECT_EQ(destroy_array(stale), CUDA_SUCCESS);
  EXPECT_EQ(find_array(to_handle(stale)), nullptr);
  EXPECT_EQ(destroy_array(stale), CUDA_ERROR_INVALID_HANDLE);
}

TEST(MemPools, SameStreamReusesAFreedBlockAtOnce) {
  Context* c = primary();
  auto s = create_stream(c, CU_STREAM_NON_BLOCKING, 0);
  ASSERT_TRUE(s);
  CUmemPoolProps props = {};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  auto pool = create_pool(devices()[0], props);
  ASSERT_TRUE(pool);
  MemPool* p = pool.value();
  p->release_threshold = UINT64_MAX;
  auto a = pool_allocate(p, c, 4000, s.value());
  ASSERT_TRUE(a);
  EXPECT_EQ(pool_of(a.value()), p);
  EXPECT_EQ(used(p), 4096u); // whole 512-byte units
  EXPECT_EQ(reserved(p), 4096u);
  EXPECT_EQ(pool_free(a.value(), s.value()), CUDA_SUCCESS);
  EXPECT_EQ(pool_free(a.value(), s.value()), CUDA_ERROR_INVALID_VALUE); // double free
  EXPECT_EQ(used(p), 0u);
  auto b = pool_allocate(p, c, 3000, s.value());
  ASSERT_TRUE(b);
  EXPECT_EQ(b.value(), a.value());
  EXPECT_EQ(reserved(p), 4096u);
  // A much smaller request does not take a big block.
  EXPECT_EQ(pool_free(b.value(), s.value()), CUDA_SUCCESS);
  auto tiny = pool_allocate(p, c, 8, s.value());
  ASSERT_TRUE(tiny);
  EXPECT_NE(tiny.value(), a.value());
  EXPECT_EQ(pool_free(tiny.value(), s.value()), CUDA_SUCCESS);
  EXPECT_EQ(s.value()->synchronize(), CUDA_SUCCESS);
  EXPECT_EQ(used(p), 0u);
  EXPECT_EQ(reserved(p), 4608u);
  {
    std::lock_guard lock(p->mutex);
    EXPECT_EQ(p->used_high, 4096u);
  }
  // Freed at once (cuMemFree): no stream involved.
  auto now = pool_allocate(p, c, 4000, s.value());
  ASSERT_TRUE(now);
  EXPECT_TRUE(pool_owns(now.value()));
  EXPECT_EQ(pool_free_now(now.value()), CUDA_SUCCESS);
  EXPECT_TRUE(pool_owns(now.value())); // free, but still the pool's
  EXPECT_EQ(pool_of(now.value()), nullptr);
  EXPECT_EQ(pool_free_now(now.value()), CUDA_ERROR_INVALID_VALUE);
  trim_pool(p, 0);
  EXPECT_EQ(reserved(p), 0u);
  EXPECT_FALSE(find_allocation(a.value()));
  EXPECT_FALSE(pool_owns(a.value()));
  EXPECT_EQ(destroy_pool(p), CUDA_SUCCESS);
  EXPECT_EQ(find_pool(to_handle(p)), nullptr);
  EXPECT_EQ(destroy_stream(s.value()), CUDA_SUCCESS);
}

TEST(MemPools, OtherStreamsReuseOnlyCompletedFrees) {
  Context* c = primary();
  auto s1 = create_stream(c, CU_STREAM_NON_BLOCKING, 0);
  auto s2 = create_stream(c, CU_STREAM_NON_BLOCKING, 0);
  ASSERT_TRUE(s1 && s2);
  MemPool* p = default_pool(devices()[0]);
  EXPECT_EQ(current_pool(devices()[0]), p);
  EXPECT_EQ(destroy_pool(p), CUDA_ERROR_INVALID_VALUE);
  p->release_threshold = UINT64_MAX;
  // Hold s1 until the test lets it go, so that its free cannot have run.
  std::mutex gate;
  gate.lock();
  submit(s1.value(), [&] {
    std::lock_guard wait(gate);
    return CUDA_SUCCESS;
  });
  auto a = pool_allocate(p, c, 4096, s1.value());
  ASSERT_TRUE(a);
  EXPECT_EQ(pool_free(a.value(), s1.value()), CUDA_SUCCESS);
  auto b = pool_allocate(p, c, 4096, s2.value());
  ASSERT_TRUE(b);
  EXPECT_NE(b.value(), a.value());
  gate.unlock();
  EXPECT_EQ(s1.value()->synchronize(), CUDA_SUCCESS);
  auto d = pool_allocate(p, c, 4096, s2.value());
  ASSERT_TRUE(d);
  EXPECT_EQ(d.value(), a.value());
  EXPECT_EQ(pool_free(b.value(), s2.value()), CUDA_SUCCESS);
  EXPECT_EQ(pool_free(d.value(), s2.value()), CUDA_SUCCESS);
  // Back to the default threshold: freed memory goes back to the device.
  p->release_threshold = 0;
  EXPECT_EQ(s2.value()->synchronize(), CUDA_SUCCESS);
  trim_pool(p, 0);
  EXPECT_EQ(reserved(p), 0u);
  EXPECT_EQ(destroy_stream(s1.value()), CUDA_SUCCESS);
  EXPECT_EQ(destroy_stream(s2.value()), CUDA_SUCCESS);
}

TEST(MemPools, BlocksOfADestroyedContextLeaveTheStatistics) {
  auto c = create_context(devices()[0], 0);
  ASSERT_TRUE(c);
  auto s = create_stream(c.value(), CU_STREAM_NON_BLOCKING, 0);
  ASSERT_TRUE(s);
  CUmemPoolProps props = {};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  MemPool* p = create_pool(devices()[0], props).value();
  auto a = pool_allocate(p, c.value(), 4096, s.value());
  auto b = pool_allocate(p, c.value(), 8192, s.value());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(pool_free_now(b.value()), CUDA_SUCCESS);
  EXPECT_EQ(destroy_context(c.value()), CUDA_SUCCESS); // releases both blocks' memory
  forget_released_blocks(p);
  EXPECT_EQ(used(p), 0u);
  EXPECT_EQ(reserved(p), 0u);
  EXPECT_FALSE(pool_owns(a.value()));
  EXPECT_EQ(destroy_pool(p), CUDA_SUCCESS);
}

TEST(Occupancy, MatchesTheCalculatorOnAnAmpereLikeDevice) {
  DeviceProperties d; // defaults: sm_86-like
  KernelResources k;
  EXPECT_EQ(max_active_blocks(d, k, 256, 0), 6);  // 48 warps / 8
  EXPECT_EQ(max_active_blocks(d, k, 1024, 0), 1); // 48 warps / 32
  EXPECT_EQ(max_active_blocks(d, k, 32, 0), 16);  // block limit
  EXPECT_EQ(max_active_blocks(d, k, 1025, 0), 0); // too large
  k.registers_per_thread = 64;                    // 2048 per warp -> 32 warps
  EXPECT_EQ(max_active_blocks(d, k, 256, 0), 4);
  k.registers_per_thread = 32;
  // 1 KiB reserved per block: 48 KiB + 1 KiB -> 2 blocks in 100 KiB.
  EXPECT_EQ(max_active_blocks(d, k, 128, 48 * 1024), 2);
  EXPECT_EQ(max_active_blocks(d, k, 128, 100 * 1024), 0); // beyond the opt-in limit
  EXPECT_EQ(available_dynamic_shared(d, k, 2, 128), 50u * 1024 - 1024);
  EXPECT_EQ(available_dynamic_shared(d, k, 7, 256), 0u); // 7 blocks never fit by warps
  auto choice = max_potential_block_size(d, k, 0, [](int) { return size_t(0); });
  EXPECT_EQ(choice.block_size * max_active_blocks(d, k, choice.block_size, 0), 1536);
  EXPECT_EQ(choice.min_grid_size,
            max_active_blocks(d, k, choice.block_size, 0) * d.multiprocessor_count);
  auto limited = max_potential_block_size(d, k, 100, [](int) { return size_t(0); });
  EXPECT_LE(limited.block_size, 100);
}
