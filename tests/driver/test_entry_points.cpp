// Exported entry points: the implemented basics through dlsym and cuGetProcAddress, the
// stubs' once-only report, and MIMIC_TRACE. The last two read per-process state, so they
// run driver_api_probe (probe.cpp) in a fresh process.
#include "libcuda_loader.h"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace mimic::test {
namespace {

TEST(EntryPoints, InitAndVersionThroughDlsym) {
  auto init = exported<PFN_cuInit_v2000>("cuInit");
  auto version = exported<PFN_cuDriverGetVersion_v2020>("cuDriverGetVersion");
  ASSERT_TRUE(init && version);
  EXPECT_EQ(init(0), CUDA_SUCCESS);
  EXPECT_EQ(init(1), CUDA_ERROR_INVALID_VALUE);
  int v = 0;
  EXPECT_EQ(version(&v), CUDA_SUCCESS);
  EXPECT_EQ(v, 13000);
  EXPECT_EQ(version(nullptr), CUDA_ERROR_INVALID_VALUE);
}

TEST(EntryPoints, InitAndVersionThroughProcAddress) {
  auto get_proc = exported<PFN_cuGetProcAddress_v12000>("cuGetProcAddress_v2");
  ASSERT_NE(get_proc, nullptr);
  void* init = nullptr;
  void* version = nullptr;
  ASSERT_EQ(get_proc("cuInit", &init, 13000, 0, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(get_proc("cuDriverGetVersion", &version, 13000, 0, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(reinterpret_cast<PFN_cuInit_v2000>(init)(0), CUDA_SUCCESS);
  int v = 0;
  EXPECT_EQ(reinterpret_cast<PFN_cuDriverGetVersion_v2020>(version)(&v), CUDA_SUCCESS);
  EXPECT_EQ(v, 13000);
}

TEST(EntryPoints, UnimplementedReturnsNotSupported) {
  auto stub = exported<PFN_cuDeviceGetLuid_v10000>("cuDeviceGetLuid");
  ASSERT_NE(stub, nullptr);
  char luid[8];
  unsigned mask = 0;
  EXPECT_EQ(stub(luid, &mask, 0), CUDA_ERROR_NOT_SUPPORTED);
}

struct ProbeRun {
  int status = -1; // exit code, or 128 + signal
  std::string out, err;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs driver_api_probe with MIMIC_TRACE set to `trace` (unset when null).
ProbeRun run_probe(const char* mode, const char* trace) {
  std::string dir = testing::TempDir();
  // Per process: ctest may run the tests that use the probe in parallel.
  std::string stem = dir + "/probe." + std::to_string(getpid());
  std::string out_path = stem + ".out", err_path = stem + ".err";
  pid_t pid = fork();
  if (pid == 0) {
    if (trace)
      setenv("MIMIC_TRACE", trace, 1);
    else
      unsetenv("MIMIC_TRACE");
    if (!freopen(out_path.c_str(), "w", stdout) || !freopen(err_path.c_str(), "w", stderr))
      _exit(126);
    execl(MIMIC_DRIVER_PROBE, MIMIC_DRIVER_PROBE, MIMIC_LIBCUDA, mode, (char*)nullptr);
    _exit(127);
  }
  ProbeRun run;
  int wstatus = 0;
  if (pid > 0 && waitpid(pid, &wstatus, 0) == pid)
    run.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  run.out = read_file(out_path);
  run.err = read_file(err_path);
  return run;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(EntryPoints, UnimplementedIsReportedOnce) {
  ProbeRun run = run_probe("stub", nullptr);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(count(run.out, "cuDeviceGetNvSciSyncAttributes 801\n"), 3u) << run.out; // NOT_SUPPORTED
  EXPECT_EQ(count(run.err, "mimic: cuDeviceGetNvSciSyncAttributes is not implemented (returns "
                           "CUDA_ERROR_NOT_SUPPORTED)\n"),
            1u)
      << run.err;
}

void expect_line(const std::string& trace, const std::string& pattern) {
  EXPECT_TRUE(std::regex_search(trace, std::regex("(^|\n)" + pattern + "\n")))
      << "no line matching\n  " << pattern << "\nin the trace:\n"
      << trace;
}

void expect_calls_traced(const std::string& trace) {
  const std::string hex = "0x[0-9a-f]+";
  expect_line(trace, R"(cuInit\(Flags=0\) = CUDA_SUCCESS)");
  expect_line(trace, R"(cuDriverGetVersion\(driverVersion=)" + hex + R"(\) = CUDA_SUCCESS)");
  expect_line(trace, R"(cuGetProcAddress_v2\(symbol="cuMemAlloc", pfn=)" + hex +
                         R"(, cudaVersion=13000, flags=0, symbolStatus=)" + hex +
                         R"(\) = CUDA_SUCCESS)");
  expect_line(trace,
              R"(cuMemAlloc_v2\(dptr=)" + hex + R"(, bytesize=4096\) = CUDA_ERROR_INVALID_CONTEXT)");
  expect_line(trace, R"(cuModuleGetFunction\(hfunc=)" + hex +
                         R"(, hmod=NULL, name="vector_add"\) = CUDA_ERROR_INVALID_HANDLE)");
  expect_line(trace, R"(cuMemsetD8_v2\(dstDevice=0x1234, uc=7, N=10\) = CUDA_ERROR_INVALID_CONTEXT)");
}

TEST(Trace, ToFile) {
  std::string path = testing::TempDir() + "/mimic_trace.txt";
  std::remove(path.c_str());
  ProbeRun run = run_probe("trace", path.c_str());
  ASSERT_EQ(run.status, 0) << run.err;
  std::string trace = read_file(path);
  expect_calls_traced(trace);
  EXPECT_EQ(count(run.err, "cuInit("), 0u) << "a trace file keeps stderr clean";
  // The not-implemented reports go to the trace file too, beside the calls they explain.
  EXPECT_EQ(count(trace, "mimic: cuDeviceGetNvSciSyncAttributes is not implemented"), 1u) << trace;
}

TEST(Trace, ToStderr) {
  ProbeRun run = run_probe("trace", "1");
  ASSERT_EQ(run.status, 0) << run.err;
  expect_calls_traced(run.err);
}

TEST(Trace, OffByDefault) {
  for (const char* value : {(const char*)nullptr, "", "0"}) {
    ProbeRun run = run_probe("trace", value);
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(count(run.err, "cuInit("), 0u) << run.err;
  }
}

} // namespace
} // namespace mimic::test
