// The driver API from several host threads at once: contexts made current per thread,
// allocations, copies on private and shared streams, events across threads, module
// loads. Run under ThreadSanitizer in CI (label `concurrency`).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "libcuda_loader.h"

using namespace mimic::test;

namespace {

struct Api {
  PFN_cuInit_v2000 init = exported<PFN_cuInit_v2000>("cuInit");
  PFN_cuDeviceGet_v2000 device_get = exported<PFN_cuDeviceGet_v2000>("cuDeviceGet");
  PFN_cuDevicePrimaryCtxRetain_v7000 retain = exported<PFN_cuDevicePrimaryCtxRetain_v7000>("cuDevicePrimaryCtxRetain");
  PFN_cuDevicePrimaryCtxRelease_v11000 release =
      exported<PFN_cuDevicePrimaryCtxRelease_v11000>("cuDevicePrimaryCtxRelease_v2");
  PFN_cuCtxSetCurrent_v4000 set_current = exported<PFN_cuCtxSetCurrent_v4000>("cuCtxSetCurrent");
  PFN_cuMemAlloc_v3020 alloc = exported<PFN_cuMemAlloc_v3020>("cuMemAlloc_v2");
  PFN_cuMemFree_v3020 free = exported<PFN_cuMemFree_v3020>("cuMemFree_v2");
  PFN_cuMemcpyHtoD_v3020 htod = exported<PFN_cuMemcpyHtoD_v3020>("cuMemcpyHtoD_v2");
  PFN_cuMemcpyDtoH_v3020 dtoh = exported<PFN_cuMemcpyDtoH_v3020>("cuMemcpyDtoH_v2");
  PFN_cuMemcpyDtoDAsync_v3020 dtod_async = exported<PFN_cuMemcpyDtoDAsync_v3020>("cuMemcpyDtoDAsync_v2");
  PFN_cuMemsetD32Async_v3020 memset_async = exported<PFN_cuMemsetD32Async_v3020>("cuMemsetD32Async");
  PFN_cuStreamCreate_v2000 stream_create = exported<PFN_cuStreamCreate_v2000>("cuStreamCreate");
  PFN_cuStreamDestroy_v4000 stream_destroy = exported<PFN_cuStreamDestroy_v4000>("cuStreamDestroy_v2");
  PFN_cuStreamSynchronize_v2000 stream_sync = exported<PFN_cuStreamSynchronize_v2000>("cuStreamSynchronize");
  PFN_cuStreamWaitEvent_v3020 stream_wait = exported<PFN_cuStreamWaitEvent_v3020>("cuStreamWaitEvent");
  PFN_cuEventCreate_v2000 event_create = exported<PFN_cuEventCreate_v2000>("cuEventCreate");
  PFN_cuEventRecord_v2000 event_record = exported<PFN_cuEventRecord_v2000>("cuEventRecord");
  PFN_cuEventSynchronize_v2000 event_sync = exported<PFN_cuEventSynchronize_v2000>("cuEventSynchronize");
  PFN_cuEventDestroy_v4000 event_destroy = exported<PFN_cuEventDestroy_v4000>("cuEventDestroy_v2");
  PFN_cuModuleLoadData_v2000 module_load = exported<PFN_cuModuleLoadData_v2000>("cuModuleLoadData");
  PFN_cuModuleUnload_v2000 module_unload = exported<PFN_cuModuleUnload_v2000>("cuModuleUnload");
  PFN_cuModuleGetGlobal_v3020 module_global = exported<PFN_cuModuleGetGlobal_v3020>("cuModuleGetGlobal_v2");
  PFN_cuCtxSynchronize_v2000 ctx_sync = exported<PFN_cuCtxSynchronize_v2000>("cuCtxSynchronize");
};

const char* kPtx = ".version 8.0\n.target sm_75\n.address_size 64\n"
                   ".visible .global .align 4 .u32 value = 99;\n"
                   ".visible .entry k(.param .u64 p)\n{\n ret;\n}\n";

} // namespace

TEST(Concurrency, ThreadsShareAContextAndItsStreams) {
  Api api;
  ASSERT_EQ(api.init(0), CUDA_SUCCESS);
  CUdevice dev;
  ASSERT_EQ(api.device_get(&dev, 0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(api.retain(&ctx, dev), CUDA_SUCCESS);
  ASSERT_EQ(api.set_current(ctx), CUDA_SUCCESS);
  CUstream shared_stream;
  ASSERT_EQ(api.stream_create(&shared_stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);

  constexpr int kThreads = 6, kRounds = 40;
  constexpr size_t kWords = 4096;
  std::atomic<int> errors{0};
  auto worker = [&](int id) {
    auto ok = [&](CUresult r) {
      if (r != CUDA_SUCCESS)
        ++errors;
      return r == CUDA_SUCCESS;
    };
    ok(api.set_current(ctx));
    CUstream own;
    if (!ok(api.stream_create(&own, 0)))
      return;
    CUevent ev;
    ok(api.event_create(&ev, 0));
    std::vector<uint32_t> host(kWords), back(kWords);
    for (int round = 0; round < kRounds; ++round) {
      CUdeviceptr a = 0, b = 0;
      if (!ok(api.alloc(&a, kWords * 4)) || !ok(api.alloc(&b, kWords * 4)))
        return;
      for (size_t i = 0; i < kWords; ++i)
        host[i] = uint32_t(id * 1000003 + round * 7919 + int(i));
      ok(api.htod(a, host.data(), kWords * 4));
      // Work on the thread's own stream, then on the stream all threads share, ordered
      // through an event.
      ok(api.memset_async(b, 0, kWords, own));
      ok(api.event_record(ev, own));
      ok(api.stream_wait(shared_stream, ev, 0));
      ok(api.dtod_async(b, a, kWords * 4, shared_stream));
      ok(api.event_record(ev, shared_stream));
      ok(api.event_sync(ev));
      ok(api.dtoh(back.data(), b, kWords * 4));
      if (back != host)
        ++errors;
      if (round % 10 == 0) {
        CUmodule m;
        if (ok(api.module_load(&m, kPtx))) {
          CUdeviceptr g;
          size_t size;
          uint32_t v = 0;
          ok(api.module_global(&g, &size, m, "value"));
          ok(api.dtoh(&v, g, 4));
          if (v != 99)
            ++errors;
          ok(api.module_unload(m));
        }
      }
      ok(api.free(a));
      ok(api.free(b));
    }
    ok(api.stream_sync(own));
    ok(api.event_destroy(ev));
    ok(api.stream_destroy(own));
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(worker, t);
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(api.ctx_sync(), CUDA_SUCCESS);
  EXPECT_EQ(api.stream_destroy(shared_stream), CUDA_SUCCESS);
  EXPECT_EQ(api.release(dev), CUDA_SUCCESS);
}

TEST(Concurrency, HandlesDestroyedOnOneThreadAreRejectedOnAnother) {
  Api api;
  ASSERT_EQ(api.init(0), CUDA_SUCCESS);
  CUdevice dev;
  ASSERT_EQ(api.device_get(&dev, 0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(api.retain(&ctx, dev), CUDA_SUCCESS);
  ASSERT_EQ(api.set_current(ctx), CUDA_SUCCESS);
  std::vector<CUstream> streams(64);
  for (auto& s : streams)
    ASSERT_EQ(api.stream_create(&s, 0), CUDA_SUCCESS);
  std::atomic<int> destroyed_twice{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      api.set_current(ctx);
      for (CUstream s : streams) {
        CUresult r = api.stream_destroy(s);
        if (r != CUDA_SUCCESS && r != CUDA_ERROR_INVALID_HANDLE)
          ++destroyed_twice;
        api.stream_sync(s); // stale or live: never a crash
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(destroyed_twice.load(), 0);
  for (CUstream s : streams)
    EXPECT_EQ(api.stream_destroy(s), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(api.release(dev), CUDA_SUCCESS);
}

// Every handle kind destroyed by several threads at once: exactly one destroy succeeds,
// the others see a stale handle, and nothing runs twice.
TEST(Concurrency, RacingDestroysSucceedOnce) {
  ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
  constexpr int kHandles = 16, kThreads = 4;
  std::vector<CUevent> events(kHandles);
  std::vector<CUgraph> graphs(kHandles);
  std::vector<CUgraphExec> execs(kHandles);
  std::vector<CUmodule> modules(kHandles);
  std::vector<CUmemoryPool> pools(kHandles);
  std::vector<CUarray> arrays(kHandles);
  std::vector<CUdeviceptr> memory(kHandles);
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUDA_ARRAY_DESCRIPTOR desc{8, 8, CU_AD_FORMAT_FLOAT, 1};
  for (int i = 0; i < kHandles; ++i) {
    ASSERT_EQ(CU(cuEventCreate)(&events[i], 0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuGraphCreate)(&graphs[i], 0), CUDA_SUCCESS);
    CUgraphNode node;
    ASSERT_EQ(CU(cuGraphAddEmptyNode)(&node, graphs[i], nullptr, 0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuGraphInstantiate)(&execs[i], graphs[i], 0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuModuleLoadData)(&modules[i], kPtx), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuMemPoolCreate)(&pools[i], &props), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuArrayCreate)(&arrays[i], &desc), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuMemAlloc)(&memory[i], 256), CUDA_SUCCESS);
  }
  std::atomic<int> successes{0}, wrong{0};
  auto count = [&](CUresult r, CUresult stale) {
    if (r == CUDA_SUCCESS)
      ++successes;
    else if (r != stale)
      ++wrong;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      CU(cuCtxSetCurrent)(ctx);
      for (int i = 0; i < kHandles; ++i) {
        count(CU(cuEventDestroy)(events[i]), CUDA_ERROR_INVALID_HANDLE);
        count(CU(cuGraphExecDestroy)(execs[i]), CUDA_ERROR_INVALID_HANDLE);
        count(CU(cuGraphDestroy)(graphs[i]), CUDA_ERROR_INVALID_HANDLE);
        count(CU(cuModuleUnload)(modules[i]), CUDA_ERROR_INVALID_HANDLE);
        count(CU(cuMemPoolDestroy)(pools[i]), CUDA_ERROR_INVALID_HANDLE);
        count(CU(cuArrayDestroy)(arrays[i]), CUDA_ERROR_INVALID_HANDLE);
        count(CU(cuMemFree)(memory[i]), CUDA_ERROR_INVALID_VALUE);
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(successes.load(), 7 * kHandles);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(CU(cuDevicePrimaryCtxRelease)(0), CUDA_SUCCESS);
}

// Graphs instantiated and launched from several threads, each on its own stream, while
// other threads load and unload modules.
TEST(Concurrency, GraphLaunchesFromManyThreads) {
  ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
  constexpr int kThreads = 4, kRounds = 20;
  constexpr size_t kWords = 1024;
  std::atomic<int> errors{0};
  auto ok = [&](CUresult r) {
    if (r != CUDA_SUCCESS)
      ++errors;
    return r == CUDA_SUCCESS;
  };
  auto worker = [&](int id) {
    ok(CU(cuCtxSetCurrent)(ctx));
    CUstream s;
    if (!ok(CU(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING)))
      return;
    CUdeviceptr p;
    if (!ok(CU(cuMemAlloc)(&p, kWords * 4)))
      return;
    CUgraph g;
    ok(CU(cuGraphCreate)(&g, 0));
    CUDA_MEMSET_NODE_PARAMS fill{};
    fill.dst = p;
    fill.value = uint32_t(id + 1);
    fill.elementSize = 4;
    fill.width = kWords;
    fill.height = 1;
    CUgraphNode node;
    ok(CU(cuGraphAddMemsetNode)(&node, g, nullptr, 0, &fill, ctx));
    std::vector<uint32_t> back(kWords);
    for (int round = 0; round < kRounds; ++round) {
      CUgraphExec e;
      if (!ok(CU(cuGraphInstantiate)(&e, g, 0)))
        break;
      ok(CU(cuMemsetD32Async)(p, 0, kWords, s));
      ok(CU(cuGraphLaunch)(e, s));
      ok(CU(cuStreamSynchronize)(s));
      ok(CU(cuMemcpyDtoH)(back.data(), p, kWords * 4));
      for (uint32_t v : back)
        if (v != uint32_t(id + 1)) {
          ++errors;
          break;
        }
      ok(CU(cuGraphExecDestroy)(e));
      CUmodule m;
      if (ok(CU(cuModuleLoadData)(&m, kPtx)))
        ok(CU(cuModuleUnload)(m));
    }
    ok(CU(cuGraphDestroy)(g));
    ok(CU(cuMemFree)(p));
    ok(CU(cuStreamDestroy)(s));
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(worker, t);
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(CU(cuDevicePrimaryCtxRelease)(0), CUDA_SUCCESS);
}

// A created context destroyed on one thread while others work in it: their calls fail
// with an error (never a crash) once it is gone, and its handles are stale. Each thread
// works until it has seen the context gone (not for a fixed time: on a loaded machine a
// thread may not run at all for tens of milliseconds).
TEST(Concurrency, ContextDestroyedUnderOtherThreads) {
  ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(CU(cuCtxCreate)(&ctx, nullptr, 0, 0), CUDA_SUCCESS);
  CUcontext popped;
  ASSERT_EQ(CU(cuCtxPopCurrent)(&popped), CUDA_SUCCESS);
  constexpr int kThreads = 3;
  std::atomic<bool> stop{false};
  std::atomic<int> working{0}, crashes_avoided{0}, unexpected{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      if (CU(cuCtxPushCurrent)(ctx) != CUDA_SUCCESS) {
        ++unexpected;
        return;
      }
      bool counted = false;
      while (!stop) {
        CUdeviceptr p = 0;
        CUresult r = CU(cuMemAlloc)(&p, 64);
        if (r == CUDA_SUCCESS) {
          r = CU(cuMemFree)(p); // its memory may have gone with the context
          if (r != CUDA_SUCCESS && r != CUDA_ERROR_INVALID_VALUE && r != CUDA_ERROR_INVALID_CONTEXT)
            ++unexpected;
        } else if (r == CUDA_ERROR_INVALID_CONTEXT) {
          ++crashes_avoided;
          return;
        } else {
          ++unexpected;
        }
        if (!counted) {
          counted = true;
          ++working;
        }
      }
    });
  // Destroyed once every thread works in it; the threads then end as they see it gone
  // (a deadline only keeps a broken build from hanging).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (working < kThreads && unexpected == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(CU(cuCtxDestroy)(ctx), CUDA_SUCCESS);
  while (crashes_avoided + unexpected < kThreads && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  stop = true;
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_EQ(crashes_avoided.load(), kThreads);
  EXPECT_EQ(CU(cuCtxDestroy)(ctx), CUDA_ERROR_INVALID_CONTEXT);
}

// Link states, texture objects and conditional handles made and used from several threads
// at once (their registries, the JIT option outputs, module loads of linked images).
TEST(Concurrency, LinkingAndTextureObjectsFromManyThreads) {
  ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
  std::atomic<int> errors{0};
  auto ok = [&](CUresult r) {
    if (r != CUDA_SUCCESS)
      ++errors;
    return r == CUDA_SUCCESS;
  };
  auto worker = [&] {
    ok(CU(cuCtxSetCurrent)(ctx));
    CUdeviceptr p = 0;
    if (!ok(CU(cuMemAlloc)(&p, 4096)))
      return;
    for (int round = 0; round < 10; ++round) {
      char log[256];
      CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME};
      void* values[] = {log, reinterpret_cast<void*>(uintptr_t(sizeof log)), nullptr};
      CUlinkState link;
      if (!ok(CU(cuLinkCreate)(3, options, values, &link)))
        continue;
      ok(CU(cuLinkAddData)(link, CU_JIT_INPUT_PTX, const_cast<char*>(kPtx), strlen(kPtx) + 1, "k.ptx", 0, nullptr,
                           nullptr));
      void* image;
      size_t size;
      if (ok(CU(cuLinkComplete)(link, &image, &size))) {
        CUmodule m;
        if (ok(CU(cuModuleLoadData)(&m, image)))
          ok(CU(cuModuleUnload)(m));
      }
      ok(CU(cuLinkDestroy)(link));
      CUDA_RESOURCE_DESC r{};
      r.resType = CU_RESOURCE_TYPE_LINEAR;
      r.res.linear = {p, CU_AD_FORMAT_FLOAT, 1, 4096};
      CUDA_TEXTURE_DESC t{};
      CUtexObject tex;
      if (ok(CU(cuTexObjectCreate)(&tex, &r, &t, nullptr))) {
        CUDA_RESOURCE_DESC got;
        ok(CU(cuTexObjectGetResourceDesc)(&got, tex));
        ok(CU(cuTexObjectDestroy)(tex));
      }
    }
    ok(CU(cuMemFree)(p));
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back(worker);
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(CU(cuDevicePrimaryCtxRelease)(0), CUDA_SUCCESS);
}

// A kernel's code changes tier (backends/cpu/tiers.h) while four threads launch it on
// streams of their own: the first launch runs quick code, the background compiler's
// optimised code is linked and swapped in between blocks. Every launch's output is
// checked; the threads go on until the optimised code is in the JIT cache (stored just
// before it is swapped in) and then 20 launches more.
TEST(Concurrency, KernelCodeChangesTierWhileLaunched) {
  char dir[] = "/tmp/mimic-tier-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("MIMIC_CACHE_DIR", dir, 1);
  setenv("MIMIC_QUICK_TIER", "1", 1);
  // out[block * 64 + t] = (63 - t + add) * 2 + block: each thread reads its mirror's value
  // after a barrier (registers live across it: saved by the quick code, computed again by
  // the optimised code).
  const char* ptx = ".version 8.0\n.target sm_75\n.address_size 64\n"
                    ".visible .entry mirror(.param .u64 out, .param .u32 add)\n{\n"
                    " .reg .b32 %r<12>;\n .reg .b64 %rd<4>;\n"
                    " .shared .align 4 .b8 tile[256];\n"
                    " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n ld.param.u32 %r3, [add];\n"
                    " add.u32 %r4, %r1, %r3;\n mov.u32 %r5, tile;\n shl.b32 %r6, %r1, 2;\n"
                    " add.u32 %r7, %r5, %r6;\n st.shared.u32 [%r7], %r4;\n bar.sync 0;\n"
                    " sub.u32 %r8, 63, %r1;\n shl.b32 %r9, %r8, 2;\n add.u32 %r9, %r5, %r9;\n"
                    " ld.shared.u32 %r10, [%r9];\n shl.b32 %r10, %r10, 1;\n add.u32 %r10, %r10, %r2;\n"
                    " shl.b32 %r11, %r2, 6;\n add.u32 %r11, %r11, %r1;\n"
                    " ld.param.u64 %rd1, [out];\n mul.wide.u32 %rd2, %r11, 4;\n add.u64 %rd3, %rd1, %rd2;\n"
                    " st.global.u32 [%rd3], %r10;\n ret;\n}\n";
  ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
  CUcontext ctx;
  ASSERT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, 0), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
  CUmodule module;
  ASSERT_EQ(CU(cuModuleLoadData)(&module, ptx), CUDA_SUCCESS);
  CUfunction mirror;
  ASSERT_EQ(CU(cuModuleGetFunction)(&mirror, module, "mirror"), CUDA_SUCCESS);
  auto optimised_cached = [&] { // the program's entry and the kernel's
    size_t files = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(dir) / "cpu", ec))
      files += e.path().extension() == ".mco";
    return files >= 2;
  };
  constexpr unsigned kBlocks = 256, kThreads = 64;
  std::atomic<int> errors{0}, wrong{0};
  std::atomic<bool> swapped{false};
  auto ok = [&](CUresult r) {
    if (r != CUDA_SUCCESS) ++errors;
    return r == CUDA_SUCCESS;
  };
  auto worker = [&](int id) {
    ok(CU(cuCtxSetCurrent)(ctx));
    CUstream s;
    CUdeviceptr p;
    if (!ok(CU(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING)) || !ok(CU(cuMemAlloc)(&p, kBlocks * kThreads * 4)))
      return;
    std::vector<uint32_t> back(kBlocks * kThreads);
    const auto start = std::chrono::steady_clock::now();
    for (int round = 0, after = 0; after < 20 && std::chrono::steady_clock::now() - start < std::chrono::seconds(60);
         ++round) {
      uint32_t add = uint32_t(id * 1000 + round);
      void* params[] = {&p, &add};
      if (!ok(CU(cuLaunchKernel)(mirror, kBlocks, 1, 1, kThreads, 1, 1, 0, s, params, nullptr)) ||
          !ok(CU(cuStreamSynchronize)(s)) || !ok(CU(cuMemcpyDtoH)(back.data(), p, back.size() * 4)))
        break;
      for (uint32_t b = 0; b < kBlocks; ++b)
        for (uint32_t t = 0; t < kThreads; ++t)
          if (back[b * kThreads + t] != (63 - t + add) * 2 + b) ++wrong;
      if (swapped || optimised_cached()) {
        swapped = true;
        ++after;
      }
    }
    ok(CU(cuMemFree)(p));
    ok(CU(cuStreamDestroy)(s));
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back(worker, t);
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_TRUE(swapped.load()) << "the optimised code never reached the JIT cache in " << dir;
  EXPECT_EQ(CU(cuModuleUnload)(module), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuDevicePrimaryCtxRelease)(0), CUDA_SUCCESS);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
