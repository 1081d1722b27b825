// The HIP runtime binding over a fake HIP runtime (fake_hip.cpp): loading and its errors,
// device discovery and the CUDA properties derived from it, memory, code object loading and
// launches, and the math library probe.
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>

#include "backends/amdgpu/amdgpu_backend.h"
#include "backends/amdgpu/device_log.h"
#include "backends/amdgpu/hip_api.h"
#include "backends/amdgpu/hip_devices.h"
#include "backends/amdgpu/probe.h"
#include "codegen/texture_abi.h"
#include "fake_hip.h"
#include "runtime/program.h"

using namespace mimic;
using namespace mimic::amdgpu;

namespace {

const HipApi& load(const char* path) {
  // Kept for the process: backends refer to their HipApi.
  static auto* loaded = new std::map<std::string, HipApi>;
  auto it = loaded->find(path);
  if (it == loaded->end()) {
    Result<HipApi> api = load_hip_library(path);
    EXPECT_TRUE(api.ok()) << (api.ok() ? "" : api.error().message());
    it = loaded->emplace(path, std::move(*api)).first;
  }
  return it->second;
}

template <typename F> F hook(const HipApi& hip, const char* name) {
  auto f = reinterpret_cast<F>(dlsym(hip.handle, name));
  EXPECT_NE(f, nullptr) << name;
  return f;
}

std::vector<HipDevice> devices_of(const HipApi& hip, const char* list) {
  setenv("FAKE_HIP_DEVICES", list, 1);
  Result<std::vector<HipDevice>> devices = enumerate_hip_devices(hip);
  EXPECT_TRUE(devices.ok()) << (devices.ok() ? "" : devices.error().message());
  return devices.ok() ? *devices : std::vector<HipDevice>{};
}

std::unique_ptr<runtime::Backend> backend_of(const HipApi& hip, const char* list) {
  Result<std::unique_ptr<runtime::Backend>> b = create_amdgpu_backend(hip, devices_of(hip, list));
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().message());
  return b.ok() ? std::move(*b) : nullptr;
}

const char* const kPtx = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry scale(.param .u64 p, .param .u32 n, .param .f32 a) { ret; }
.visible .entry other(.param .u8 c, .param .u64 q) { ret; }
)";

std::shared_ptr<runtime::Program> program() {
  auto p = runtime::load_program_from_ptx(kPtx, "test.ptx");
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message());
  return p.ok() ? *p : nullptr;
}

CodeObject code_object(bool grid_sync = false) {
  CodeObject code;
  code.target = "gfx1100";
  code.elf = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  code.kernels = {{"scale", 16 + 256, 100, 1024, grid_sync}, {"other", 16 + 256, 0, 1024, false}};
  return code;
}

} // namespace

TEST(HipLoader, CandidatesNewestFirstOrTheOverride) {
  unsetenv("MIMIC_HIP_LIBRARY");
  std::vector<std::string> c = hip_library_candidates();
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(c[0], "libamdhip64.so.7");
  EXPECT_EQ(c[1], "libamdhip64.so.6");
  EXPECT_EQ(c[2], "libamdhip64.so.5");
  EXPECT_NE(std::find(c.begin(), c.end(), "/opt/rocm/lib/libamdhip64.so.6"), c.end());
  setenv("MIMIC_HIP_LIBRARY", "/somewhere/libamdhip64.so", 1);
  EXPECT_EQ(hip_library_candidates(), std::vector<std::string>{"/somewhere/libamdhip64.so"});
  unsetenv("MIMIC_HIP_LIBRARY");
}

TEST(HipLoader, MissingRuntimeListsEveryLibraryTried) {
  Result<HipApi> api =
      load_first_hip_library({"/nonexistent/libamdhip64.so.7", "/nonexistent/libamdhip64.so.5"});
  ASSERT_FALSE(api.ok());
  const std::string& m = api.error().message();
  EXPECT_EQ(m.rfind("HIP runtime not found: tried /nonexistent/libamdhip64.so.7, "
                    "/nonexistent/libamdhip64.so.5",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("\n  /nonexistent/libamdhip64.so.5: "), std::string::npos) << m;
}

TEST(HipLoader, MissingFunctionsAreNamed) {
  Result<HipApi> api = load_hip_library(FAKE_HIP_INCOMPLETE);
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.error().message().find("is not a HIP runtime Mimic can use: it lacks hipMalloc"),
            std::string::npos)
      << api.error().message();
}

TEST(HipLoader, FirstLoadableWinsAndOptionalFunctionsMayBeAbsent) {
  Result<HipApi> api = load_first_hip_library({"/nonexistent/libamdhip64.so.7", FAKE_HIP5});
  ASSERT_TRUE(api.ok()) << api.error().message();
  EXPECT_EQ(api->path, FAKE_HIP5);
  EXPECT_NE(api->hipMalloc, nullptr);
  EXPECT_EQ(api->hipGetDevicePropertiesR0600, nullptr);
  EXPECT_EQ(api->hipModuleLaunchCooperativeKernel, nullptr);
  EXPECT_NE(api->hipGetDeviceProperties, nullptr);
  EXPECT_EQ(std::filesystem::path(api->file).filename(),
            std::filesystem::path(FAKE_HIP5).filename());
}

TEST(HipLoader, VersionText) {
  EXPECT_EQ(hip_version_text(60443482), "6.4.43482");
  EXPECT_EQ(hip_version_text(50223153), "5.2.23153");
  EXPECT_EQ(hip_version_text(0), "unknown");
}

TEST(HipDevices, PropertiesOfAnRdna3Gpu) {
  std::vector<HipDevice> d = devices_of(load(FAKE_HIP6), "gfx1100:sramecc-:xnack-");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].name, "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(d[0].arch_name, "gfx1100:sramecc-:xnack-");
  EXPECT_EQ(d[0].gfx, "gfx1100");
  EXPECT_TRUE(d[0].supported);
  const runtime::DeviceProperties& p = d[0].properties;
  EXPECT_EQ(p.name, "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(p.backend, "amdgpu");
  EXPECT_EQ(p.total_memory, uint64_t(24) << 30);
  EXPECT_EQ(p.multiprocessor_count, 96);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_EQ(p.max_threads_per_block, 1024);
  // CUDA's programming model limits, where HIP allows more.
  EXPECT_EQ(p.max_block_dim[2], 64);
  EXPECT_EQ(p.max_grid_dim[0], 2147483647);
  EXPECT_EQ(p.max_grid_dim[1], 65535);
  EXPECT_EQ(p.shared_memory_per_block, 65536);
  EXPECT_EQ(p.shared_memory_per_block_optin, 65536);
  EXPECT_EQ(p.reserved_shared_memory_per_block, 0);
  EXPECT_EQ(p.shared_memory_per_multiprocessor, 65536);
  EXPECT_EQ(p.max_threads_per_multiprocessor, 2048);
  EXPECT_EQ(p.clock_rate_khz, 2482000);
  EXPECT_EQ(p.memory_clock_rate_khz, 1250000);
  EXPECT_EQ(p.memory_bus_width, 384);
  EXPECT_EQ(p.l2_cache_size, 6291456);
  EXPECT_EQ(p.pci_bus, 3);
  EXPECT_EQ(p.uuid[0], 0xa0);
  EXPECT_EQ(p.uuid[15], 0xaf);
  EXPECT_FALSE(p.integrated);
  EXPECT_TRUE(p.unified_addressing);
  EXPECT_TRUE(p.managed_memory);
  EXPECT_FALSE(p.pageable_memory_access);
  EXPECT_TRUE(p.cooperative_launch);
  // An attribute the runtime does not answer keeps Mimic's default.
  EXPECT_EQ(p.max_blocks_per_multiprocessor,
            runtime::DeviceProperties{}.max_blocks_per_multiprocessor);
}

TEST(HipDevices, Hip5LayoutAndNoCooperativeLaunch) {
  std::vector<HipDevice> d = devices_of(load(FAKE_HIP5), "gfx1030");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].gfx, "gfx1030");
  EXPECT_TRUE(d[0].supported);
  EXPECT_FALSE(d[0].properties.cooperative_launch);
  // No hipDeviceGetUuid: a UUID derived from the device, the same every time.
  const uint8_t* u = d[0].properties.uuid;
  EXPECT_TRUE(std::any_of(u, u + 16, [](uint8_t b) { return b != 0; }));
  std::vector<HipDevice> again = devices_of(load(FAKE_HIP5), "gfx1030");
  EXPECT_EQ(std::memcmp(again[0].properties.uuid, u, 16), 0);
}

TEST(HipDevices, UnsupportedGpusSayWhy) {
  const HipApi& hip = load(FAKE_HIP6);
  std::vector<HipDevice> d = devices_of(hip, "gfx906:sramecc+:xnack-,gfx1201");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_FALSE(d[0].supported);
  EXPECT_EQ(d[0].gfx, "gfx906");
  EXPECT_NE(d[0].unsupported_reason.find(
                "gfx906 is not a target Mimic generates code for (supported: gfx1010,"),
            std::string::npos)
      << d[0].unsupported_reason;
  EXPECT_TRUE(d[1].supported);

  // Only supported GPUs become devices; none at all is an error naming each GPU.
  auto b = create_amdgpu_backend(hip, d);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ((*b)->device_count(), 1u);
  EXPECT_EQ((*b)->properties(0).name, "Fake AMD GPU gfx1201");
  auto none = create_amdgpu_backend(hip, devices_of(hip, "gfx906"));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message().rfind(
                "no supported AMD GPU: HIP device 0 (AMD Radeon VII): gfx906 is not", 0),
            0u)
      << none.error().message();
}

TEST(HipDevices, NoGpuIsAnError) {
  setenv("FAKE_HIP_DEVICES", "", 1);
  auto d = enumerate_hip_devices(load(FAKE_HIP6));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message().find(") finds no GPU: hipInit: HIP error 100: "), std::string::npos)
      << d.error().message();
  EXPECT_NE(d.error().message().find("no ROCm-capable device is detected"), std::string::npos)
      << d.error().message();
}

TEST(AmdgpuBackend, AllocateCopyFill) {
  const HipApi& hip = load(FAKE_HIP6);
  auto live = hook<FakeHipLiveAllocations>(hip, "fakeHipLiveAllocations");
  auto backend = backend_of(hip, "gfx1100");
  ASSERT_TRUE(backend);
  EXPECT_EQ(backend->kind(), "amdgpu");
  size_t before = live();
  Result<void*> p = backend->allocate(0, 64);
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % 256, 0u);
  EXPECT_EQ(live(), before + 1);
  uint8_t host[64];
  for (int i = 0; i < 64; ++i)
    host[i] = uint8_t(i);
  ASSERT_TRUE(backend->copy(*p, host, 64).ok());
  ASSERT_TRUE(backend->fill(*p, 0xab, 1, 4).ok());
  ASSERT_TRUE(backend->fill(static_cast<char*>(*p) + 4, 0xbeef, 2, 2).ok());
  ASSERT_TRUE(backend->fill(static_cast<char*>(*p) + 8, 0xdeadbeef, 4, 2).ok());
  EXPECT_FALSE(backend->fill(*p, 0, 8, 1).ok());
  uint8_t back[64] = {};
  ASSERT_TRUE(backend->copy(back, *p, 64).ok());
  const uint8_t expected_head[16] = {0xab, 0xab, 0xab, 0xab, 0xef, 0xbe, 0xef, 0xbe,
                                     0xef, 0xbe, 0xad, 0xde, 0xef, 0xbe, 0xad, 0xde};
  EXPECT_EQ(std::memcmp(back, expected_head, 16), 0);
  EXPECT_EQ(std::memcmp(back + 16, host + 16, 48), 0);
  EXPECT_TRUE(backend->synchronize(0).ok());
  backend->release(0, *p);
  EXPECT_EQ(live(), before);
  Result<void*> huge = backend->allocate(0, size_t(1) << 40);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code(), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(huge.error().message().find(
                "hipMalloc of 1099511627776 bytes on HIP device 0 (AMD Radeon RX 7900 XTX, "
                "gfx1100): HIP error 2: out of memory"),
            std::string::npos)
      << huge.error().message();
}

TEST(AmdgpuBackend, HostManagedAndRegisteredMemory) {
  const HipApi& hip = load(FAKE_HIP6);
  auto live = hook<FakeHipLiveAllocations>(hip, "fakeHipLiveAllocations");
  auto backend = backend_of(hip, "gfx1100");
  ASSERT_TRUE(backend);
  size_t before = live();
  Result<void*> host = backend->allocate_host(0, 100);
  ASSERT_TRUE(host.ok()) << host.error().message();
  std::memset(*host, 7, 100); // the host uses it directly
  Result<void*> managed = backend->allocate_managed(0, 100);
  ASSERT_TRUE(managed.ok()) << managed.error().message();
  std::memset(*managed, 8, 100);
  std::vector<char> pageable(4096);
  ASSERT_TRUE(backend->register_host(0, pageable.data(), pageable.size()).ok());
  Status again = backend->register_host(0, pageable.data(), pageable.size());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code(), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(live(), before + 3);
  // Each kind goes back the way it came (the fake refuses hipFree of hipHostMalloc memory).
  backend->release_host(0, *host);
  backend->release(0, *managed);
  backend->unregister_host(0, pageable.data());
  EXPECT_EQ(live(), before);
}

TEST(AmdgpuBackend, LaunchPassesThePackedArguments) {
  const HipApi& hip = load(FAKE_HIP6);
  auto backend = backend_of(hip, "gfx1100");
  auto prog = program();
  ASSERT_TRUE(backend && prog);
  auto compiled = load_code_object(*backend, 0, code_object(), *prog);
  ASSERT_TRUE(compiled.ok()) << compiled.error().message();
  uint8_t args[16];
  for (int i = 0; i < 16; ++i)
    args[i] = uint8_t(100 + i);
  runtime::LaunchShape shape;
  shape.grid[0] = 7;
  shape.grid[2] = 2;
  shape.block[0] = 128;
  shape.block[1] = 2;
  shape.dynamic_shared_bytes = 4096;
  ASSERT_EQ(backend->launch(0, **compiled, 0, shape, args), CUDA_SUCCESS);
  const FakeHipLaunch& l = *hook<FakeHipLastLaunch>(hip, "fakeHipLastLaunch")();
  EXPECT_EQ(l.kernel, "scale");
  EXPECT_FALSE(l.cooperative);
  EXPECT_EQ(l.grid[0], 7u);
  EXPECT_EQ(l.grid[1], 1u);
  EXPECT_EQ(l.grid[2], 2u);
  EXPECT_EQ(l.block[0], 128u);
  EXPECT_EQ(l.block[1], 2u);
  EXPECT_EQ(l.shared_bytes, 4096u);
  EXPECT_EQ(l.args, std::vector<uint8_t>(args, args + 16));

  // Launches HIP would refuse: more threads than compiled for, more LDS than a workgroup has.
  const int launches = l.launches;
  runtime::LaunchShape too_wide = shape;
  too_wide.block[0] = 1024;
  too_wide.block[1] = 2;
  EXPECT_EQ(backend->launch(0, **compiled, 0, too_wide, args), CUDA_ERROR_INVALID_VALUE);
  runtime::LaunchShape too_much_lds = shape;
  too_much_lds.dynamic_shared_bytes = 65536 - 100 + 1; // the kernel has 100 bytes of its own
  EXPECT_EQ(backend->launch(0, **compiled, 0, too_much_lds, args), CUDA_ERROR_INVALID_VALUE);
  too_much_lds.dynamic_shared_bytes = 65536 - 100;
  EXPECT_EQ(backend->launch(0, **compiled, 0, too_much_lds, args), CUDA_SUCCESS);
  EXPECT_EQ(l.launches, launches + 1);

  // A fault in the kernel is the CUDA error of the same meaning.
  hook<FakeHipFailNextLaunch>(hip, "fakeHipFailNextLaunch")(700);
  EXPECT_EQ(backend->launch(0, **compiled, 1, shape, args), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(backend->launch(0, **compiled, 2, shape, args), CUDA_ERROR_INVALID_HANDLE);
}

TEST(AmdgpuBackend, CooperativeLaunchPointsAtEachParameter) {
  const HipApi& hip = load(FAKE_HIP6);
  auto backend = backend_of(hip, "gfx1100");
  auto prog = program();
  ASSERT_TRUE(backend && prog);
  auto compiled = load_code_object(*backend, 0, code_object(true), *prog);
  ASSERT_TRUE(compiled.ok()) << compiled.error().message();
  uint8_t args[16] = {};
  hook<FakeHipSetCooperativeParamCount>(hip, "fakeHipSetCooperativeParamCount")(3);
  runtime::LaunchShape shape;
  ASSERT_EQ(backend->launch(0, **compiled, 0, shape, args), CUDA_SUCCESS);
  const FakeHipLaunch& l = *hook<FakeHipLastLaunch>(hip, "fakeHipLastLaunch")();
  EXPECT_TRUE(l.cooperative);
  EXPECT_TRUE(l.grid_workspace_zero);
  // The fake kernel left counts in the workspace; the next launch gets it zeroed again.
  ASSERT_EQ(backend->launch(0, **compiled, 0, shape, args), CUDA_SUCCESS);
  EXPECT_TRUE(l.grid_workspace_zero);
  ASSERT_EQ(l.param_pointers.size(), 3u);
  EXPECT_EQ(l.param_pointers[0], args + 0);
  EXPECT_EQ(l.param_pointers[1], args + 8);
  EXPECT_EQ(l.param_pointers[2], args + 12);

  // HIP 5 has no cooperative module launch.
  const HipApi& hip5 = load(FAKE_HIP5);
  auto backend5 = backend_of(hip5, "gfx1100");
  auto compiled5 = load_code_object(*backend5, 0, code_object(true), *prog);
  ASSERT_TRUE(compiled5.ok());
  EXPECT_EQ(backend5->launch(0, **compiled5, 0, shape, args), CUDA_ERROR_NOT_SUPPORTED);
}

TEST(AmdgpuBackend, BadCodeObjectsAreErrors) {
  const HipApi& hip = load(FAKE_HIP6);
  auto backend = backend_of(hip, "gfx1100");
  auto prog = program();
  ASSERT_TRUE(backend && prog);
  CodeObject bad = code_object();
  bad.elf = {1, 2, 3, 4};
  auto r = load_code_object(*backend, 0, bad, *prog);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_NE(r.error().message().find("hipModuleLoadData rejected the gfx1100 code object"),
            std::string::npos)
      << r.error().message();
  CodeObject missing = code_object();
  missing.kernels[1].name = "missing_kernel";
  r = load_code_object(*backend, 0, missing, *prog);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), CUDA_ERROR_NOT_FOUND);
  CodeObject short_one = code_object();
  short_one.kernels.pop_back();
  r = load_code_object(*backend, 0, short_one, *prog);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), CUDA_ERROR_INVALID_IMAGE);
}

TEST(Probe, MathLibrariesFoundByFileName) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("mimic-probe-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "librocblas.so.4.2") << "x";
  std::ofstream(dir / "librocblas.so.4") << "x";
  std::ofstream(dir / "libhipfft.so") << "x";
  std::ofstream(dir / "librocfft-device.so.0") << "x"; // another library's name, not rocFFT's
  std::vector<ProbedLibrary> libs = probe_math_libraries(dir.string());
  std::filesystem::remove_all(dir);
  ASSERT_EQ(libs.size(), 7u);
  std::map<std::string, ProbedLibrary> by_name;
  for (const ProbedLibrary& l : libs)
    by_name[l.name] = l;
  EXPECT_TRUE(by_name["rocBLAS"].present);
  EXPECT_EQ(by_name["rocBLAS"].path, (dir / "librocblas.so.4").string());
  EXPECT_TRUE(by_name["hipFFT"].present);
  EXPECT_EQ(by_name["hipFFT"].path, (dir / "libhipfft.so").string());
  for (const char* name : {"hipBLASLt", "MIOpen", "rocFFT", "rocSPARSE", "rocRAND"})
    EXPECT_TRUE(by_name.count(name)) << name;
}

// With the system's HIP runtime, whatever it is (skipped where none is installed): the probe
// answers without crashing and says why there is no usable GPU when there is none.
TEST(Probe, SystemHipRuntime) {
  unsetenv("MIMIC_HIP_LIBRARY");
  ProbeReport r = probe();
  if (!r.hip_found) GTEST_SKIP() << "no HIP runtime installed: " << r.reason;
  std::cout << "HIP runtime " << r.hip_path << " " << r.runtime_version_text << " (driver "
            << r.driver_version_text << ")\n";
  for (const ProbedGpu& g : r.gpus)
    std::cout << "  GPU " << g.hip_ordinal << ": " << g.name << " " << g.gfx << " "
              << (g.total_memory >> 20) << " MiB, " << g.compute_units << " CUs, "
              << (g.supported ? "supported" : g.reason) << "\n";
  std::cout << "  usable: " << (r.usable() ? "yes" : "no: " + r.reason) << "\n";
  for (const ProbedLibrary& l : r.math_libraries)
    std::cout << "  " << l.name << ": " << (l.present ? l.path : "not found") << "\n";
  EXPECT_GT(r.runtime_version, 0);
  EXPECT_EQ(r.usable(), std::any_of(r.gpus.begin(), r.gpus.end(),
                                    [](const ProbedGpu& g) { return g.supported; }));
  if (!r.usable()) EXPECT_FALSE(r.reason.empty());
  EXPECT_EQ(r.math_libraries.size(), 7u);
}

namespace {

// Device memory of the tests is host memory.
bool read_host(void* out, uint64_t address, size_t bytes) {
  std::memcpy(out, reinterpret_cast<const void*>(address), bytes);
  return true;
}

template <typename T> void put(std::vector<uint8_t>& v, size_t at, T value) {
  if (v.size() < at + sizeof value) v.resize(at + sizeof value);
  std::memcpy(v.data() + at, &value, sizeof value);
}

std::vector<uint8_t> printf_record(const char* format, const std::vector<uint8_t>& args) {
  std::vector<uint8_t> r;
  put<uint32_t>(r, 0, 1);
  put<uint32_t>(r, 4, uint32_t((16 + args.size() + 7) / 8 * 8));
  put<uint64_t>(r, 8, reinterpret_cast<uintptr_t>(format));
  r.insert(r.end(), args.begin(), args.end());
  r.resize((r.size() + 7) / 8 * 8);
  return r;
}

std::vector<uint8_t> assert_record(const char* message, const char* file, const char* function) {
  std::vector<uint8_t> r;
  put<uint32_t>(r, 0, 2);
  put<uint32_t>(r, 4, 64);
  put<uint64_t>(r, 8, reinterpret_cast<uintptr_t>(message));
  put<uint64_t>(r, 16, reinterpret_cast<uintptr_t>(file));
  put<uint64_t>(r, 24, reinterpret_cast<uintptr_t>(function));
  const uint32_t line_block_thread[] = {42, 1, 2, 3, 4, 5, 6, 0};
  for (size_t i = 0; i < 8; ++i)
    put<uint32_t>(r, 32 + 4 * i, line_block_thread[i]);
  return r;
}

// A texture or surface instruction that trapped (code_object.h's Trap record).
std::vector<uint8_t> trap_record(uint32_t reason, uint32_t instruction, uint64_t handle) {
  std::vector<uint8_t> r;
  put<uint32_t>(r, 0, 3);
  put<uint32_t>(r, 4, 64);
  put<uint32_t>(r, 8, reason);
  put<uint32_t>(r, 12, instruction);
  put<uint64_t>(r, 16, handle);
  const uint32_t line_0_0_block_thread[] = {17, 0, 0, 1, 2, 3, 4, 5, 6, 0};
  for (size_t i = 0; i < 10; ++i)
    put<uint32_t>(r, 24 + 4 * i, line_0_0_block_thread[i]);
  return r;
}

} // namespace

TEST(DeviceLog, PrintfWithCudasPacking) {
  // %d (4), %lld (8, aligned), %f (double), %s (address), %c, %5.2f, %%.
  static const char text[] = "amd";
  std::vector<uint8_t> args;
  put<int32_t>(args, 0, -7);
  put<int64_t>(args, 8, 1234567890123ll);
  put<double>(args, 16, 2.5);
  put<uint64_t>(args, 24, reinterpret_cast<uintptr_t>(text));
  put<int32_t>(args, 32, 'x');
  put<double>(args, 40, 3.14159);
  EXPECT_EQ(
      format_device_printf("%d %lld %f %s %c %5.2f 100%%\n", args.data(), args.size(), read_host),
      "-7 1234567890123 2.500000 amd x  3.14 100%\n");
  // Too few arguments read as zeros, never past the buffer.
  EXPECT_EQ(format_device_printf("%d %d", args.data(), 4, read_host), "-7 0");
  EXPECT_EQ(format_device_printf("%s", nullptr, 0, read_host), "(null)");
}

TEST(DeviceLog, RecordsInOrderAndAsserts) {
  static const char hello[] = "hello %d\n", message[] = "x < 4", file[] = "k.cu",
                    function[] = "void k()";
  std::vector<uint8_t> log = printf_record(hello, {1, 0, 0, 0});
  std::vector<uint8_t> second = printf_record(hello, {2, 0, 0, 0});
  std::vector<uint8_t> failed = assert_record(message, file, function);
  log.insert(log.end(), second.begin(), second.end());
  log.insert(log.end(), failed.begin(), failed.end());
  DecodedLog d = decode_device_log(log.data(), log.size(), read_host);
  EXPECT_EQ(d.printed, "hello 1\nhello 2\n");
  EXPECT_TRUE(d.asserted);
  EXPECT_EQ(d.asserts,
            "k.cu:42: void k(): block: [1,2,3], thread: [4,5,6] Assertion `x < 4` failed.\n");
  EXPECT_TRUE(d.problem.empty());
  put<uint32_t>(log, 4, 12); // a size that is no multiple of 8
  EXPECT_FALSE(decode_device_log(log.data(), log.size(), read_host).problem.empty());
}

TEST(DeviceLog, TextureTraps) {
  std::vector<uint8_t> log =
      trap_record(codegen::kTexBadHandle, uint32_t(codegen::TextureInstruction::Tex), 0x1234);
  std::vector<uint8_t> outside =
      trap_record(codegen::kTexOutOfRange, uint32_t(codegen::TextureInstruction::Sust), 0x5000);
  log.insert(log.end(), outside.begin(), outside.end());
  DecodedLog d = decode_device_log(log.data(), log.size(), read_host);
  EXPECT_TRUE(d.trapped);
  EXPECT_FALSE(d.asserted);
  EXPECT_EQ(d.outcome(), DecodedLog::Outcome::Trapped);
  EXPECT_EQ(
      d.traps,
      "mimic: tex at PTX line 17: handle 0x1234 is not a texture object (block [1,2,3], thread "
      "[4,5,6] traps; the launch fails with CUDA_ERROR_LAUNCH_FAILED)\n"
      "mimic: sust at PTX line 17: a sust.trap access outside the surface (block [1,2,3], thread "
      "[4,5,6] traps; the launch fails with CUDA_ERROR_LAUNCH_FAILED)\n");
  EXPECT_TRUE(d.problem.empty());
}

TEST(AmdgpuBackend, DrainsTheDeviceLogAfterALaunch) {
  const HipApi& hip = load(FAKE_HIP6);
  auto backend = backend_of(hip, "gfx1100");
  auto prog = program();
  ASSERT_TRUE(backend && prog);
  CodeObject code = code_object();
  code.uses_device_log = true;
  auto compiled = load_code_object(*backend, 0, code, *prog);
  ASSERT_TRUE(compiled.ok()) << compiled.error().message();
  auto log_next = hook<FakeHipLogOnNextLaunch>(hip, "fakeHipLogOnNextLaunch");
  static const char format[] = "block %d says %s\n", word[] = "hi";
  std::vector<uint8_t> args;
  put<int32_t>(args, 0, 9);
  put<uint64_t>(args, 8, reinterpret_cast<uintptr_t>(word));
  std::vector<uint8_t> record = printf_record(format, args);
  log_next(record.data(), record.size());
  uint8_t params[16] = {};
  runtime::LaunchShape shape;
  testing::internal::CaptureStdout();
  EXPECT_EQ(backend->launch(0, **compiled, 0, shape, params), CUDA_SUCCESS);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "block 9 says hi\n");
  // Drained: the next launch prints nothing again.
  testing::internal::CaptureStdout();
  EXPECT_EQ(backend->launch(0, **compiled, 0, shape, params), CUDA_SUCCESS);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
  // A failed assert: reported as CUDA does, and the launch fails with CUDA_ERROR_ASSERT.
  static const char message[] = "n > 0", file[] = "t.cu", function[] = "void t(int)";
  record = assert_record(message, file, function);
  log_next(record.data(), record.size());
  testing::internal::CaptureStderr();
  EXPECT_EQ(backend->launch(0, **compiled, 0, shape, params), CUDA_ERROR_ASSERT);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "t.cu:42: void t(int): block: [1,2,3], thread: [4,5,6] Assertion `n > 0` failed.\n");
  // A texture instruction that trapped: said why, and the launch fails as on the CPU.
  record = trap_record(codegen::kTexBadHandle, uint32_t(codegen::TextureInstruction::Suld), 0x40);
  log_next(record.data(), record.size());
  testing::internal::CaptureStderr();
  EXPECT_EQ(backend->launch(0, **compiled, 0, shape, params), CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_NE(testing::internal::GetCapturedStderr().find(
                "suld at PTX line 17: handle 0x40 is not a surface object"),
            std::string::npos);
}

TEST(AmdgpuBackend, DeviceHeapForDeviceMalloc) {
  const HipApi& hip = load(FAKE_HIP6);
  auto backend = backend_of(hip, "gfx1100");
  auto prog = program();
  ASSERT_TRUE(backend && prog);
  CodeObject code = code_object();
  code.uses_device_heap = true;
  auto compiled = load_code_object(*backend, 0, code, *prog);
  ASSERT_TRUE(compiled.ok()) << compiled.error().message();
  // 8 MiB, as CUDA's default heap, after a header saying so with nothing used.
  auto* heap = static_cast<const uint64_t*>(
      hook<FakeHipAllocationOfSize>(hip, "fakeHipAllocationOfSize")(16 + (size_t(8) << 20)));
  ASSERT_NE(heap, nullptr);
  EXPECT_EQ(heap[0], uint64_t(8) << 20);
  EXPECT_EQ(heap[1], 0u);
}
