// mimic doctor [--json] [--quick]
//
// Checks an installation as a user needs it: each check does real work rather than look for
// a file. The driver is loaded in a child process and runs a PTX kernel through the driver
// API; mimic-doctor-probe (an nvcc-built program, beside this executable) runs under
// `mimic run` to start the CUDA runtime on Mimic, run kernels and compute small known
// answers with each drop-in library; the CPU backend, the AMD GPU backend and the JIT cache
// are inspected in this process. Prints a table with a mark per line and, for each problem,
// what to do; `--json` prints the same as JSON. The exit status is 1 when something
// required is broken (the driver, the CUDA runtime path, a library Mimic ships).
#include <dlfcn.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/process.h"
#include "support/config.h"
#include "support/json.h"

#ifdef MIMIC_HAVE_CODEGEN
#include <llvm/Config/llvm-config.h>
#include <llvm/TargetParser/Host.h>

#include "backends/cpu/code_cache.h"
#include "backends/cpu/vector_width.h"
#endif
#ifdef MIMIC_HAVE_AMDGPU
#include "backends/amdgpu/probe.h"
#endif

namespace mimic::cli {

namespace {

namespace fs = std::filesystem;

enum class Mark { Ok, Info, Warn, Fail };

const char* mark_text(Mark m) {
  switch (m) {
  case Mark::Ok: return "ok";
  case Mark::Info: return "--";
  case Mark::Warn: return "warn";
  case Mark::Fail: return "FAIL";
  }
  return "?";
}

struct Line {
  std::string component;
  Mark mark = Mark::Ok;
  std::string detail;
  std::string fix; // what to do, for Warn and Fail
};

struct Report {
  std::vector<Line> lines;
  void add(std::string component, Mark mark, std::string detail, std::string fix = {}) {
    lines.push_back({std::move(component), mark, std::move(detail), std::move(fix)});
  }
  bool broken() const {
    for (const Line& l : lines)
      if (l.mark == Mark::Fail) return true;
    return false;
  }
};

int usage(FILE* out) {
  fprintf(out, "usage: mimic doctor [--json]\n"
               "  Checks Mimic's driver, the CUDA runtime on it, each drop-in library, the backends\n"
               "  (CPU features; AMD GPUs and the HIP runtime) and the JIT cache, and says what to do\n"
               "  about each problem. Exit status 1 when something required is broken.\n");
  return out == stdout ? 0 : 2;
}

// Where Mimic's libraries are: MIMIC_LIBRARY_PATH, else ../lib next to this executable.
fs::path library_dir() {
  if (const char* env = getenv("MIMIC_LIBRARY_PATH"); env && *env) return env;
  return self_path().parent_path().parent_path() / "lib";
}

std::string format(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* f, ...) {
  char buffer[2048];
  va_list args;
  va_start(args, f);
  vsnprintf(buffer, sizeof buffer, f, args);
  va_end(args);
  return buffer;
}

std::string size_text(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return format("%.1f GiB", double(bytes) / double(1ull << 30));
  if (bytes >= (1ull << 20)) return format("%.1f MiB", double(bytes) / double(1ull << 20));
  return format("%.1f KiB", double(bytes) / 1024.0);
}

// ---- the driver, through the driver API in a child process ------------------------------

const char* const kProbePtx = R"(
.version 7.0
.target sm_52
.address_size 64
.visible .entry mimic_doctor_axpb(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)
{
  .reg .pred %p<2>;
  .reg .f32 %f<5>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;
  ld.param.u32 %r2, [n];
  ld.param.f32 %f1, [a];
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r1, %r3, %r4, %r5;
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  ld.global.f32 %f2, [%rd5];
  cvt.rn.f32.u32 %f3, %r1;
  fma.rn.f32 %f4, %f2, %f1, %f3;
  cvta.to.global.u64 %rd6, %rd2;
  add.s64 %rd7, %rd6, %rd4;
  st.global.f32 [%rd7], %f4;
DONE:
  ret;
}
)";

void emit(const char* check, const char* status, const std::string& detail) {
  printf("check %s %s %s\n", check, status, detail.c_str());
  fflush(stdout);
}

// `mimic doctor --driver-check LIBCUDA`: loads the driver and runs kernel on it; one check
// line per step. Runs in a child so that a driver that crashes cannot take the doctor down.
int driver_check(const std::string& path) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    emit("driver", "fail", format("%s does not load: %s", path.c_str(), dlerror()));
    return 1;
  }
#define MIMIC_DRIVER_FN(name, symbol) auto name = reinterpret_cast<decltype(&::name)>(dlsym(lib, symbol))
  MIMIC_DRIVER_FN(cuInit, "cuInit");
  MIMIC_DRIVER_FN(cuDriverGetVersion, "cuDriverGetVersion");
  MIMIC_DRIVER_FN(cuDeviceGetCount, "cuDeviceGetCount");
  MIMIC_DRIVER_FN(cuDeviceGet, "cuDeviceGet");
  MIMIC_DRIVER_FN(cuDeviceGetName, "cuDeviceGetName");
  MIMIC_DRIVER_FN(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  MIMIC_DRIVER_FN(cuCtxSetCurrent, "cuCtxSetCurrent");
  MIMIC_DRIVER_FN(cuModuleLoadData, "cuModuleLoadData");
  MIMIC_DRIVER_FN(cuModuleGetFunction, "cuModuleGetFunction");
  MIMIC_DRIVER_FN(cuMemAlloc_v2, "cuMemAlloc_v2");
  MIMIC_DRIVER_FN(cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2");
  MIMIC_DRIVER_FN(cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2");
  MIMIC_DRIVER_FN(cuLaunchKernel, "cuLaunchKernel");
  MIMIC_DRIVER_FN(cuCtxSynchronize, "cuCtxSynchronize");
  MIMIC_DRIVER_FN(cuGetErrorName, "cuGetErrorName");
#undef MIMIC_DRIVER_FN
  if (!cuInit || !cuDriverGetVersion || !cuDeviceGetCount || !cuDeviceGet || !cuDeviceGetName ||
      !cuDevicePrimaryCtxRetain || !cuCtxSetCurrent || !cuModuleLoadData || !cuModuleGetFunction || !cuMemAlloc_v2 ||
      !cuMemcpyHtoD_v2 || !cuMemcpyDtoH_v2 || !cuLaunchKernel || !cuCtxSynchronize || !cuGetErrorName) {
    emit("driver", "fail", path + " lacks driver API functions (is it Mimic's libcuda.so.1?)");
    return 1;
  }
  auto name_of = [&](CUresult r) {
    const char* n = nullptr;
    cuGetErrorName(r, &n);
    return std::string(n ? n : "unknown error") + format(" (%d)", int(r));
  };
  CUresult r = cuInit(0);
  int version = 0, count = 0;
  if (r == CUDA_SUCCESS) r = cuDriverGetVersion(&version);
  if (r == CUDA_SUCCESS) r = cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    emit("driver", "fail",
         format("%s: cuInit/cuDeviceGetCount: %s, %d devices", path.c_str(), name_of(r).c_str(), count));
    return 1;
  }
  std::string devices;
  for (int i = 0; i < count; ++i) {
    CUdevice d;
    char name[256] = {};
    if (cuDeviceGet(&d, i) == CUDA_SUCCESS && cuDeviceGetName(name, sizeof name, d) == CUDA_SUCCESS)
      devices += format("%s%d: %s", i ? "; " : "", i, name);
  }
  emit("driver", "ok",
       format("%s, driver API %d.%d, %d device(s): %s", path.c_str(), version / 1000, version % 1000 / 10, count,
              devices.c_str()));
  CUdevice device;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  r = cuDeviceGet(&device, 0);
  if (r == CUDA_SUCCESS) r = cuDevicePrimaryCtxRetain(&context, device);
  if (r == CUDA_SUCCESS) r = cuCtxSetCurrent(context);
  if (r == CUDA_SUCCESS) r = cuModuleLoadData(&module, kProbePtx);
  if (r == CUDA_SUCCESS) r = cuModuleGetFunction(&function, module, "mimic_doctor_axpb");
  const unsigned n = 100000;
  std::vector<float> x(n), y(n);
  for (unsigned i = 0; i < n; ++i)
    x[i] = float(i % 97) * 0.5f;
  CUdeviceptr dx = 0, dy = 0;
  if (r == CUDA_SUCCESS) r = cuMemAlloc_v2(&dx, n * 4);
  if (r == CUDA_SUCCESS) r = cuMemAlloc_v2(&dy, n * 4);
  if (r == CUDA_SUCCESS) r = cuMemcpyHtoD_v2(dx, x.data(), n * 4);
  float a = 3.0f;
  unsigned count_arg = n;
  void* args[] = {&count_arg, &a, &dx, &dy};
  if (r == CUDA_SUCCESS) r = cuLaunchKernel(function, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr);
  if (r == CUDA_SUCCESS) r = cuCtxSynchronize();
  if (r == CUDA_SUCCESS) r = cuMemcpyDtoH_v2(y.data(), dy, n * 4);
  if (r != CUDA_SUCCESS) {
    emit("driver-kernel", "fail", format("loading or launching a PTX kernel: %s", name_of(r).c_str()));
    return 1;
  }
  unsigned wrong = 0;
  for (unsigned i = 0; i < n; ++i)
    wrong += y[i] != 3.0f * x[i] + float(i);
  if (wrong) {
    emit("driver-kernel", "fail", format("a PTX kernel ran but %u of %u results are wrong", wrong, n));
    return 1;
  }
  emit("driver-kernel", "ok", "PTX loaded, JIT-compiled and run over 100,000 elements: correct");
  return 0;
}

// A `check NAME STATUS DETAIL` line of the driver check or the probe.
struct Check {
  std::string name, status, detail;
};

std::vector<Check> run_checks(const std::vector<std::string>& argv, unsigned timeout, int& status,
                              std::string& other_output) {
  std::vector<Check> checks;
  ChildOptions options;
  options.capture_stderr = true;
  options.timeout_seconds = timeout;
  status = run_lines(
      argv,
      [&](const std::string& line) {
        if (line.rfind("check ", 0) != 0) {
          if (other_output.size() < 4000) other_output += line + "\n";
          return;
        }
        Check c;
        size_t a = line.find(' ', 6);
        size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
        if (b == std::string::npos) return;
        c.name = line.substr(6, a - 6);
        c.status = line.substr(a + 1, b - a - 1);
        c.detail = line.substr(b + 1);
        checks.push_back(c);
      },
      options);
  return checks;
}

const Check* find_check(const std::vector<Check>& checks, const std::string& name) {
  for (const Check& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

std::string ended_text(int status) {
  if (status > 128) return format("was killed by signal %d%s", status - 128, status - 128 == 9 ? " (timeout)" : "");
  return format("exited with status %d", status);
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n')
    t.pop_back();
  size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

void check_driver(Report& report, const fs::path& libdir) {
  fs::path driver = libdir / "libcuda.so.1";
  if (!fs::exists(driver)) {
    report.add("driver", Mark::Fail, driver.string() + " is missing",
               "build Mimic (cmake --build build) or set MIMIC_LIBRARY_PATH to the folder holding libcuda.so.1");
    return;
  }
  int status = 0;
  std::string other;
  auto checks = run_checks({self_path().string(), "doctor", "--driver-check", driver.string()}, 120, status, other);
  for (const char* name : {"driver", "driver-kernel"}) {
    const Check* c = find_check(checks, name);
    std::string component = name == std::string("driver") ? "driver" : "PTX kernel (driver API)";
    if (!c) {
      if (std::string(name) == "driver-kernel" && find_check(checks, "driver") &&
          find_check(checks, "driver")->status != "ok")
        return; // the driver line says why
      report.add(component, Mark::Fail,
                 format("the driver check %s before this step%s%s", ended_text(status).c_str(),
                        other.empty() ? "" : ": ", last_line(other).c_str()),
                 "run a CUDA program under `mimic run --trace` to see where it stops, and report it with that output");
      return;
    }
    report.add(component, c->status == "ok" ? Mark::Ok : Mark::Fail, c->detail,
               c->status == "ok" ? "" : "rebuild Mimic; if it persists, report this line");
  }
}

// ---- the CUDA runtime and the libraries, through mimic-doctor-probe ----------------------

struct LibraryInfo {
  const char* check;
  const char* component;
  const char* soname;
  bool provided; // Mimic ships it
};

const LibraryInfo kLibraries[] = {
    {"cublas", "cuBLAS", "libcublas.so.13", true},
    {"cublaslt", "cuBLASLt", "libcublasLt.so.13", true},
    {"cusparse", "cuSPARSE", "libcusparse.so.12", false},
    {"cufft", "cuFFT", "libcufft.so.12", false},
    {"curand", "cuRAND", "libcurand.so.10", false},
    {"cudnn", "cuDNN", "libcudnn.so.9", false},
};

bool inside(const fs::path& file, const fs::path& dir) {
  std::error_code e;
  fs::path f = fs::weakly_canonical(file, e), d = fs::weakly_canonical(dir, e);
  auto [end, _] = std::mismatch(d.begin(), d.end(), f.begin(), f.end());
  return end == d.end();
}

void check_probe(Report& report, const fs::path& libdir) {
  fs::path probe = self_path().parent_path() / "mimic-doctor-probe";
  if (access(probe.c_str(), X_OK) != 0) {
    report.add("CUDA runtime", Mark::Warn, probe.string() + " is not built, so the runtime and libraries go unchecked",
               "build Mimic where nvcc is installed (the build makes the probe with it)");
    for (const LibraryInfo& lib : kLibraries)
      if (lib.provided)
        report.add(lib.component, fs::exists(libdir / lib.soname) ? Mark::Info : Mark::Fail,
                   (libdir / lib.soname).string() + (fs::exists(libdir / lib.soname) ? " present (not run)" : " missing"),
                   fs::exists(libdir / lib.soname) ? "" : "build Mimic's libraries (cmake --build build)");
    return;
  }
  int status = 0;
  std::string other;
  auto checks = run_checks({self_path().string(), "run", "--", probe.string()}, 300, status, other);
  std::string trouble =
      format("mimic-doctor-probe %s%s%s", ended_text(status).c_str(), other.empty() ? "" : ": ", last_line(other).c_str());
  const char* report_it = "run `mimic run --trace -- mimic-doctor-probe` and report its output";
  for (const char* name : {"runtime", "kernels"}) {
    const Check* c = find_check(checks, name);
    std::string component = name == std::string("runtime") ? "CUDA runtime" : "kernels (CUDA runtime)";
    if (!c) {
      report.add(component, Mark::Fail, trouble, report_it);
      return;
    }
    report.add(component, c->status == "ok" ? Mark::Ok : Mark::Fail, c->detail, c->status == "ok" ? "" : report_it);
    if (c->status != "ok") return;
  }
  for (const LibraryInfo& lib : kLibraries) {
    const Check* c = find_check(checks, lib.check);
    if (lib.provided) {
      if (!c) {
        report.add(lib.component, Mark::Fail, trouble, report_it);
        continue;
      }
      if (c->status == "absent") {
        report.add(lib.component, Mark::Fail, c->detail,
                   format("build Mimic's libraries (cmake --build build); %s belongs in %s", lib.soname, libdir.c_str()));
        continue;
      }
      std::string path = c->detail.substr(0, c->detail.find(':'));
      bool ours = inside(path, libdir);
      if (c->status == "ok" && !ours) {
        report.add(lib.component, Mark::Fail, c->detail + " (not Mimic's copy)",
                   format("the loader found another %s first; put %s first on LD_LIBRARY_PATH or run with `mimic run`",
                          lib.soname, libdir.c_str()));
        continue;
      }
      report.add(lib.component, c->status == "ok" ? Mark::Ok : Mark::Fail, c->detail,
                 c->status == "ok" ? "" : report_it);
      continue;
    }
    if (!c || c->status == "absent") {
      report.add(lib.component, Mark::Info, "not provided by Mimic yet; programs that link it cannot start");
      continue;
    }
    report.add(lib.component, Mark::Warn,
               format("not provided by Mimic yet; the loader finds %s (NVIDIA's?), whose kernels run on Mimic "
                      "only where they carry PTX",
                      c->detail.c_str()),
               format("`mimic info --compile %s` says which of its kernels translate", c->detail.c_str()));
  }
}

// ---- backends and cache ---------------------------------------------------------------

void check_cpu(Report& report) {
  unsigned cores = std::thread::hardware_concurrency();
  std::string threads = format("%u worker threads", config::worker_threads());
  if (getenv("MIMIC_THREADS")) threads += " (MIMIC_THREADS)";
#ifdef MIMIC_HAVE_CODEGEN
  auto features = llvm::sys::getHostCPUFeatures();
  std::string vector = "SSE2";
  for (const char* f : {"sse4.2", "avx", "avx2", "avx512f"})
    if (features.lookup(f)) vector = f;
  bool fma = features.lookup("fma");
  // The width kernels are compiled for (vector_width.h): 0 is LLVM's choice for the CPU.
  std::string width = cpu::preferred_vector_bits() ? format("%u-bit vectors", cpu::preferred_vector_bits())
                                                  : "LLVM's vector width for it";
  if (const char* env = getenv("MIMIC_VECTOR_BITS"); env && *env) width += " (MIMIC_VECTOR_BITS)";
  report.add("CPU backend", Mark::Ok,
             format("x86-64 %s, widest vectors %s%s, kernels use %s, %u hardware threads, %s",
                    llvm::sys::getHostCPUName().str().c_str(), vector.c_str(), fma ? " + FMA" : "", width.c_str(),
                    cores, threads.c_str()));
  if (!features.lookup("avx2"))
    report.add("CPU vectors", Mark::Warn, "no AVX2: kernels run, but several times slower than on AVX2 machines",
               "nothing to fix; a CPU with AVX2 or AVX-512 runs Mimic's kernels much faster");
#else
  report.add("CPU backend", Mark::Fail,
             format("this build has no code generator (no LLVM 22 when it was configured); %u hardware threads", cores),
             "install llvm-22-dev (tools/install-deps.sh) and reconfigure the build");
#endif
}

#ifdef MIMIC_HAVE_AMDGPU
std::string gib(uint64_t bytes) { return format("%.1f GiB", double(bytes) / double(1ull << 30)); }

// The HIP runtime, each AMD GPU and AMD's math libraries (backends/amdgpu/probe.h). None of
// it is required: without an AMD GPU the CPU backend runs everything.
void add_amdgpu_lines(Report& report) {
  amdgpu::ProbeReport p = amdgpu::probe();
  if (!p.hip_found) {
    report.add("AMD GPU backend", Mark::Info,
               p.reason + "; programs run on the CPU backend (to use a Radeon GPU, install AMD's HIP runtime: "
                          "ROCm 6 or 7 on Linux, the HIP SDK on Windows)");
    return;
  }
  std::string versions = p.runtime_version_text.empty() ? std::string()
                                                         : ", runtime " + p.runtime_version_text;
  if (!p.driver_version_text.empty()) versions += ", driver " + p.driver_version_text;
  report.add("HIP runtime", Mark::Ok, p.hip_path + versions);
  if (p.gpus.empty()) {
    report.add("AMD GPUs", Mark::Warn, p.reason.empty() ? "the HIP runtime reports no GPU" : p.reason,
               "check that the amdgpu kernel driver is loaded and that this user may open /dev/kfd and "
               "/dev/dri/render* (groups render, video); programs run on the CPU backend meanwhile");
  }
  for (const amdgpu::ProbedGpu& g : p.gpus) {
    std::string what = format("%s (%s, %d CUs, %s)", g.name.c_str(), g.gfx.empty() ? "gfx unknown" : g.gfx.c_str(),
                              g.compute_units, gib(g.total_memory).c_str());
    std::string component = format("AMD GPU %d", g.hip_ordinal);
    if (g.supported)
      report.add(component, Mark::Ok, what + ": Mimic generates code for it");
    else
      report.add(component, Mark::Warn, what + ": not used: " + g.reason,
                 "Mimic targets RDNA GPUs (gfx1010-gfx1012, gfx1030-gfx1036, gfx1100-gfx1103, gfx1150-gfx1153, gfx1200, "
                 "gfx1201); other GPUs are left to the CPU backend");
  }
  std::string present, missing;
  for (const amdgpu::ProbedLibrary& l : p.math_libraries)
    (l.present ? present : missing) += (l.present ? (present.empty() ? "" : ", ") : (missing.empty() ? "" : ", ")) +
                                       l.name + (l.present ? " (" + l.path + ")" : "");
  report.add("AMD math libraries", Mark::Info,
             (present.empty() ? std::string("none found") : "found " + present) +
                 (missing.empty() ? "" : "; not found: " + missing) +
                 " (Mimic's libraries compute on their own; these are not needed)");
}
#endif

void check_amdgpu(Report& report) {
#ifdef MIMIC_HAVE_AMDGPU
  add_amdgpu_lines(report);
#else
  report.add("AMD GPU backend", Mark::Info, "not part of this build of Mimic; the CPU backend runs every program");
#endif
}

void check_cache(Report& report) {
#ifdef MIMIC_HAVE_CODEGEN
  cpu::CacheSummary s = cpu::cache_summary();
  if (s.directory.empty()) {
    report.add("JIT cache", Mark::Warn, "off: every process compiles its kernels again",
               "unset MIMIC_CACHE=0, or set MIMIC_CACHE_DIR (or HOME) to a writable folder");
    return;
  }
  std::error_code e;
  fs::create_directories(s.directory, e);
  fs::path probe = s.directory / format(".doctor-%d", int(getpid()));
  bool writable = false;
  if (FILE* f = fopen(probe.c_str(), "w")) {
    writable = fputs("x", f) >= 0;
    writable &= fclose(f) == 0;
    fs::remove(probe, e);
  }
  struct statvfs fs_stat {};
  std::string space;
  if (statvfs(s.directory.c_str(), &fs_stat) == 0)
    space = ", " + size_text(uint64_t(fs_stat.f_bavail) * fs_stat.f_frsize) + " free";
  std::string detail = format("%s: %zu entries, %s%s", s.directory.c_str(), s.entries, size_text(s.bytes).c_str(),
                              space.c_str());
  if (!writable) {
    report.add("JIT cache", Mark::Warn, detail + "; not writable, so compiled kernels are not kept",
               "make the folder writable or point MIMIC_CACHE_DIR at one that is");
    return;
  }
  if (s.unreadable) {
    report.add("JIT cache", Mark::Warn, detail + format("; %zu files that are not valid entries", s.unreadable),
               "`mimic cache clear` removes them (they are ignored meanwhile)");
    return;
  }
  report.add("JIT cache", Mark::Ok, detail + ", writable");
#else
  report.add("JIT cache", Mark::Info, "no code generator in this build");
#endif
}

std::string versions() {
  std::string v = "Mimic " MIMIC_VERSION;
#ifdef MIMIC_HAVE_CODEGEN
  v += ", LLVM " LLVM_VERSION_STRING;
#endif
  v += format(", built with CUDA %d.%d headers", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
  return v;
}

void print_table(const Report& report, const fs::path& libdir) {
  printf("%s\nlibraries: %s\n\n", versions().c_str(), libdir.c_str());
  size_t width = 10;
  for (const Line& l : report.lines)
    width = std::max(width, l.component.size());
  for (const Line& l : report.lines) {
    printf("  %-4s  %-*s  %s\n", mark_text(l.mark), int(width), l.component.c_str(), l.detail.c_str());
    if (!l.fix.empty() && (l.mark == Mark::Warn || l.mark == Mark::Fail))
      printf("  %-4s  %-*s  fix: %s\n", "", int(width), "", l.fix.c_str());
  }
  size_t fails = 0, warns = 0;
  for (const Line& l : report.lines) {
    fails += l.mark == Mark::Fail;
    warns += l.mark == Mark::Warn;
  }
  printf("\n%s: %zu problem%s, %zu warning%s\n", fails ? "broken" : "ready", fails, fails == 1 ? "" : "s", warns,
         warns == 1 ? "" : "s");
}

void print_json(const Report& report, const fs::path& libdir) {
  JsonWriter j;
  j.begin_object();
  j.key("versions").value(versions());
  j.key("library_dir").value(libdir.string());
  j.key("ok").value(!report.broken());
  j.key("checks").begin_array();
  for (const Line& l : report.lines) {
    j.begin_object();
    j.key("component").value(l.component);
    j.key("status").value(l.mark == Mark::Ok     ? "ok"
                          : l.mark == Mark::Info ? "info"
                          : l.mark == Mark::Warn ? "warning"
                                                 : "broken");
    j.key("detail").value(l.detail);
    if (!l.fix.empty()) j.key("fix").value(l.fix);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  printf("%s\n", j.str().c_str());
}

} // namespace

int cmd_doctor(const Args& args) {
  bool json = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") return usage(stdout);
    if (args[i] == "--driver-check" && i + 1 < args.size()) return driver_check(args[i + 1]);
    if (args[i] == "--json") {
      json = true;
      continue;
    }
    fprintf(stderr, "mimic doctor: unknown option '%s'\n", args[i].c_str());
    return usage(stderr);
  }
  fs::path libdir = library_dir();
  Report report;
  check_driver(report, libdir);
  check_probe(report, libdir);
  check_cpu(report);
  check_amdgpu(report);
  check_cache(report);
  if (json)
    print_json(report, libdir);
  else
    print_table(report, libdir);
  return report.broken() ? 1 : 0;
}

} // namespace mimic::cli
