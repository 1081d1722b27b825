// The backend-neutral runtime core on the CPU backend: devices, contexts, memory registry,
// streams and events.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "runtime/context.h"
#include "runtime/device.h"
#include "runtime/handle.h"
#include "runtime/memory.h"
#include "runtime/stream.h"

using namespace mimic::runtime;

namespace {

Context* primary() {
  Context* c = nullptr;
  EXPECT_EQ(retain_primary(devices().at(0), &c), CUDA_SUCCESS);
  return c;
}

} // namespace

TEST(Runtime, CpuDeviceIsPresentWithConsistentAttributes) {
  ASSERT_FALSE(devices().empty());
  const Device& d = devices()[0];
  EXPECT_EQ(d.properties().backend, "cpu");
  EXPECT_EQ(d.attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE).value(), 32);
  EXPECT_EQ(d.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK).value(), 1024);
  EXPECT_GE(d.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).value(), 1);
  EXPECT_EQ(d.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).value(), d.properties().cc_major);
  EXPECT_EQ(d.attribute(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING).value(), 1);
  EXPECT_FALSE(d.attribute(9999));
  // Every attribute the toolkit enumerates below MAX is answered.
  for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a)
    EXPECT_TRUE(d.attribute(a)) << "attribute " << a;
}

TEST(Runtime, PrimaryContextIsStableAndRefcounted) {
  const Device& d = devices()[0];
  Context* a = primary();
  Context* b = primary();
  EXPECT_EQ(a, b);
  EXPECT_TRUE(primary_active(d));
  EXPECT_EQ(release_primary(d), CUDA_SUCCESS);
  EXPECT_EQ(release_primary(d), CUDA_SUCCESS);
  EXPECT_FALSE(primary_active(d));
  EXPECT_EQ(release_primary(d), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(find_context(to_handle(a)), a);
}

TEST(Runtime, ContextStackIsPerThread) {
  const Device& d = devices()[0];
  auto c = create_context(d, 0);
  ASSERT_TRUE(c);
  push_current_context(c.value());
  EXPECT_EQ(current_context(), c.value());
  std::thread([] { EXPECT_EQ(current_context(), nullptr); }).join();
  EXPECT_EQ(pop_current_context(), c.value());
  EXPECT_EQ(destroy_context(c.value()), CUDA_SUCCESS);
  EXPECT_EQ(find_context(to_handle(c.value())), nullptr);
  EXPECT_EQ(destroy_context(c.value()), CUDA_ERROR_INVALID_CONTEXT);
  int junk = 0;
  EXPECT_EQ(find_context(reinterpret_cast<CUcontext>(&junk)), nullptr);
}

TEST(Runtime, MemoryRegistryFindsRangesAndRejectsDoubleFree) {
  Context* c = primary();
  auto p = allocate(c, 1000, MemoryKind::Device);
  ASSERT_TRUE(p);
  char* base = static_cast<char*>(p.value());
  auto a = find_allocation(base + 10, 990);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->size, 1000u);
  EXPECT_FALSE(find_allocation(base + 10, 991));
  EXPECT_FALSE(find_allocation(base + 1000));
  EXPECT_EQ(release(base + 1, {MemoryKind::Device}), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(release(base, {MemoryKind::HostPinned}), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(release(base, {MemoryKind::Device}), CUDA_SUCCESS);
  EXPECT_EQ(release(base, {MemoryKind::Device}), CUDA_ERROR_INVALID_VALUE);
  release_primary(devices()[0]);
}

TEST(Runtime, HostRegistrationRejectsOverlap) {
  Context* c = primary();
  std::vector<char> buf(4096);
  EXPECT_EQ(register_host(c, buf.data(), 1024, 0), CUDA_SUCCESS);
  EXPECT_EQ(register_host(c, buf.data() + 512, 1024, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(unregister_host(buf.data() + 1), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT_EQ(unregister_host(buf.data()), CUDA_SUCCESS);
  release_primary(devices()[0]);
}

TEST(Runtime, StreamRunsWorkInOrderAsynchronously) {
  Context* c = primary();
  auto s = create_stream(c, 0, 0);
  ASSERT_TRUE(s);
  std::vector<int> order;
  std::atomic<bool> release_gate{false};
  submit(s.value(), [&] {
    while (!release_gate)
      std::this_thread::yield();
    order.push_back(1);
    return CUDA_SUCCESS;
  });
  submit(s.value(), [&] {
    order.push_back(2);
    return CUDA_SUCCESS;
  });
  EXPECT_FALSE(s.value()->idle()); // the host thread was not blocked
  release_gate = true;
  EXPECT_EQ(s.value()->synchronize(), CUDA_SUCCESS);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(destroy_stream(s.value()), CUDA_SUCCESS);
  release_primary(devices()[0]);
}

TEST(Runtime, LegacyStreamWaitsForBlockingStreams) {
  Context* c = primary();
  auto blocking = create_stream(c, 0, 0);
  auto non_blocking = create_stream(c, CU_STREAM_NON_BLOCKING, 0);
  std::atomic<int> done{0};
  std::atomic<bool> gate{false};
  submit(blocking.value(), [&] {
    while (!gate)
      std::this_thread::yield();
    done = 1;
    return CUDA_SUCCESS;
  });
  Stream* legacy = resolve_stream(nullptr, c, false);
  std::atomic<int> seen{-1};
  submit(legacy, [&] {
    seen = done.load();
    return CUDA_SUCCESS;
  });
  // Non-blocking streams do not wait for the legacy stream.
  std::atomic<bool> ran{false};
  submit(non_blocking.value(), [&] {
    ran = true;
    return CUDA_SUCCESS;
  });
  non_blocking.value()->synchronize();
  EXPECT_TRUE(ran);
  gate = true;
  legacy->synchronize();
  EXPECT_EQ(seen.load(), 1);
  destroy_stream(blocking.value());
  destroy_stream(non_blocking.value());
  release_primary(devices()[0]);
}

TEST(Runtime, EventsTimeAndOrderAcrossStreams) {
  Context* c = primary();
  auto s1 = create_stream(c, CU_STREAM_NON_BLOCKING, 0);
  auto s2 = create_stream(c, CU_STREAM_NON_BLOCKING, 0);
  auto start = create_event(c, 0);
  auto stop = create_event(c, 0);
  EXPECT_EQ(query_event(start.value()), CUDA_SUCCESS); // never recorded: complete
  std::atomic<bool> gate{false};
  record_event(start.value(), s1.value());
  submit(s1.value(), [&] {
    while (!gate)
      std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return CUDA_SUCCESS;
  });
  record_event(stop.value(), s1.value());
  EXPECT_EQ(query_event(stop.value()), CUDA_ERROR_NOT_READY);
  std::atomic<bool> after{false};
  wait_event(s2.value(), stop.value());
  submit(s2.value(), [&] {
    after = query_event(stop.value()) == CUDA_SUCCESS;
    return CUDA_SUCCESS;
  });
  float ms = -1;
  EXPECT_EQ(elapsed_ms(start.value(), stop.value(), &ms), CUDA_ERROR_NOT_READY);
  gate = true;
  EXPECT_EQ(synchronize_event(stop.value()), CUDA_SUCCESS);
  EXPECT_EQ(elapsed_ms(start.value(), stop.value(), &ms), CUDA_SUCCESS);
  EXPECT_GE(ms, 4.0f);
  s2.value()->synchronize();
  EXPECT_TRUE(after);
  destroy_event(start.value());
  EXPECT_EQ(destroy_event(start.value()), CUDA_ERROR_INVALID_HANDLE);
  release_primary(devices()[0]);
}

TEST(Runtime, StickyErrorStopsLaterWork) {
  Context* c = primary();
  auto s = create_stream(c, 0, 0);
  submit(s.value(), [] { return CUDA_ERROR_ILLEGAL_ADDRESS; });
  EXPECT_EQ(s.value()->synchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  c->sticky_error = CUDA_ERROR_ILLEGAL_ADDRESS;
  bool ran = false;
  submit(s.value(), [&] {
    ran = true;
    return CUDA_SUCCESS;
  });
  EXPECT_EQ(s.value()->synchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_FALSE(ran);
  EXPECT_EQ(synchronize_context(c), CUDA_ERROR_ILLEGAL_ADDRESS);
  destroy_stream(s.value());
  reset_primary(devices()[0]);
  EXPECT_EQ(c->sticky_error.load(), CUDA_SUCCESS);
}

TEST(Runtime, HandleRegistryFindsLiveObjectsOnly) {
  HandleRegistry<int> r;
  std::vector<int> objects(1000);
  EXPECT_EQ(r.find(&objects[0]), nullptr); // empty: no table yet
  for (int& o : objects)
    r.add(&o);
  for (size_t i = 0; i < objects.size(); i += 2)
    EXPECT_TRUE(r.remove(&objects[i]));
  EXPECT_FALSE(r.remove(&objects[0])); // already stale
  for (size_t i = 0; i < objects.size(); ++i)
    EXPECT_EQ(r.find(&objects[i]), i % 2 ? &objects[i] : nullptr) << i;
  // Tombstones are reused and a re-added object is found again.
  r.add(&objects[0]);
  EXPECT_EQ(r.find(&objects[0]), &objects[0]);
  size_t live = 0;
  r.for_each([&](int*) { ++live; });
  EXPECT_EQ(live, objects.size() / 2 + 1);
  // NULL, the tombstone's value and foreign pointers are not objects.
  int foreign = 0;
  EXPECT_EQ(r.find(nullptr), nullptr);
  EXPECT_EQ(r.find(reinterpret_cast<void*>(uintptr_t(1))), nullptr);
  EXPECT_EQ(r.find(&foreign), nullptr);
}

// Lookups take no lock: they run while other threads add and remove objects (the table
// grows and is rebuilt under them), and always see the objects that stay live.
TEST(Runtime, HandleRegistryLookupsRaceWithChanges) {
  HandleRegistry<int> r;
  std::vector<int> stable(64), churn(4096);
  for (int& o : stable)
    r.add(&o);
  std::atomic<bool> stop{false};
  std::atomic<size_t> misses{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t)
    readers.emplace_back([&] {
      while (!stop.load())
        for (int& o : stable)
          if (r.find(&o) != &o)
            ++misses;
    });
  for (int round = 0; round < 8; ++round) {
    for (int& o : churn)
      r.add(&o);
    for (int& o : churn) {
      EXPECT_TRUE(r.remove(&o));
      EXPECT_EQ(r.find(&o), nullptr);
    }
  }
  stop = true;
  for (auto& t : readers)
    t.join();
  EXPECT_EQ(misses.load(), 0u);
}
