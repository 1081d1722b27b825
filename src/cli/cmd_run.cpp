// mimic run [--backend auto|cpu|amdgpu] [--trace[=FILE]] -- PROGRAM [ARGS...]
//
// Runs an unmodified CUDA program with Mimic's libraries in place of NVIDIA's. The
// driver is preloaded, so programs whose RPATH names NVIDIA's copies still get Mimic's:
// the dynamic loader returns an already-loaded library for a dlopen of its soname.
// The program replaces this process, so its exit status is the command's. With the AMD GPU
// backend asked for (--backend amdgpu or MIMIC_BACKEND=amdgpu) and no usable AMD GPU, the
// program does not start: the command says why and fails.
#include <dlfcn.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "backends/amdgpu/probe.h"
#include "cli/commands.h"
#include "support/config.h"

namespace mimic::cli {

namespace {

int usage(FILE* out) {
  fprintf(out, "usage: mimic run [--backend auto|cpu|amdgpu] [--trace[=FILE]] -- PROGRAM [ARGS...]\n"
               "  Runs a CUDA program on Mimic. --backend picks the devices (default auto: AMD GPUs\n"
               "  when there are and Mimic was built to generate code for them, then the CPU; also\n"
               "  MIMIC_BACKEND). --trace logs every driver call (to stderr or FILE).\n");
  return out == stdout ? 0 : 2;
}

// The directory holding Mimic's libcuda.so.1: ../lib next to this executable (build tree
// and installs alike), or MIMIC_LIBRARY_PATH.
std::string library_dir() {
  if (const char* env = std::getenv("MIMIC_LIBRARY_PATH"); env && *env)
    return env;
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return {};
  self[n] = 0;
  std::filesystem::path exe(self);
  return (exe.parent_path().parent_path() / "lib").string();
}

void prepend_env(const char* name, const std::string& value, char separator) {
  const char* old = std::getenv(name);
  std::string v = value;
  if (old && *old)
    v += separator + std::string(old);
  setenv(name, v.c_str(), 1);
}

// OpenBLAS (under Mimic's cuBLAS and cuBLASLt) picks its kernels for the CPU when it
// loads; a CPU newer than the OpenBLAS release (0.3.21 on Debian 12 does not know Sapphire
// or Emerald Rapids) gets its oldest kernels, 4-6x slower. When OpenBLAS falls back like
// that on a CPU with AVX-512 or AVX2, the program gets OPENBLAS_CORETYPE=SkylakeX or
// Haswell, unless the user chose a core type already.
void choose_openblas_core() {
  if (std::getenv("OPENBLAS_CORETYPE")) return;
  void* openblas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!openblas) return;
  auto corename = reinterpret_cast<char* (*)()>(dlsym(openblas, "openblas_get_corename"));
  const std::string core = corename ? corename() : "";
  const bool fallback = core == "Prescott" || core == "Core2" || core == "Katmai" || core == "Nehalem" ||
                        core == "Unknown" || core.empty();
  if (!fallback) return;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    setenv("OPENBLAS_CORETYPE", "Haswell", 0);
}

} // namespace

int cmd_run(const Args& args) {
  std::string backend, trace;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--help" || a == "-h")
      return usage(stdout);
    if (a == "--backend" && i + 1 < args.size())
      backend = args[++i];
    else if (a.rfind("--backend=", 0) == 0)
      backend = a.substr(10);
    else if (a == "--trace")
      trace = "1";
    else if (a.rfind("--trace=", 0) == 0)
      trace = a.substr(8);
    else if (!a.empty() && a[0] == '-') {
      fprintf(stderr, "mimic run: unknown option '%s'\n", a.c_str());
      return usage(stderr);
    } else
      break; // the program, without a "--"
  }
  if (i >= args.size())
    return usage(stderr);
  if (!backend.empty() && !config::parse_backend_choice(backend)) {
    fprintf(stderr, "mimic run: unknown backend '%s' (auto, cpu or amdgpu)\n", backend.c_str());
    return 2;
  }
  const char* env_backend = std::getenv("MIMIC_BACKEND");
  if ((backend.empty() ? std::string(env_backend ? env_backend : "") : backend) == "amdgpu") {
    amdgpu::ProbeReport report = amdgpu::probe();
    if (!report.usable()) {
      fprintf(stderr, "mimic run: no AMD GPU available: %s\n", report.reason.c_str());
      return 1;
    }
  }
  std::string dir = library_dir();
  std::string driver = dir + "/libcuda.so.1";
  if (access(driver.c_str(), R_OK) != 0) {
    fprintf(stderr,
            "mimic run: Mimic's driver is not at %s; build it (cmake --build build) or set MIMIC_LIBRARY_PATH "
            "to the directory that holds libcuda.so.1\n",
            driver.c_str());
    return 127;
  }
  prepend_env("LD_LIBRARY_PATH", dir, ':');
  prepend_env("LD_PRELOAD", driver, ':');
  choose_openblas_core();
  if (!backend.empty())
    setenv("MIMIC_BACKEND", backend.c_str(), 1);
  if (!trace.empty())
    setenv("MIMIC_TRACE", trace.c_str(), 1);
  std::vector<char*> argv;
  for (size_t k = i; k < args.size(); ++k)
    argv.push_back(const_cast<char*>(args[k].c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  fprintf(stderr, "mimic run: cannot run '%s': %s\n", argv[0], strerror(errno));
  return errno == ENOENT ? 127 : 126;
}

} // namespace mimic::cli
