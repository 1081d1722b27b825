// bench_kernels: CUDA kernels that real programs use, each run as CUDA (on Mimic, when run
// under `mimic run`), as native C++ with OpenMP and as OpenCL C on PoCL, on the same
// inputs; the outputs are cross-checked against the OpenMP ones and each is timed.
//
//   mimic run -- bench_kernels [--quick] [--reps N] [--only NAME[,NAME...]] [--llc-multiple F]
//
// Timing: one untimed run first, then the median of N runs (fewer, at least one, where
// they pass 10 s; `reps` says how many ran), the platforms' runs interleaved so that the
// machine's slow phases fall on all of them alike. Before it, Mimic's first launch of the
// kernel is timed on a small problem (64 KiB), in a process of its own: that is the
// module's load and JIT compilation, from a cold or a warm JIT cache (first_launch_ms),
// with Mimic's code tiers as MIMIC_QUICK_TIER says; the timed runs are the optimised
// code's (MIMIC_QUICK_TIER=0 in this process).
// A run is the kernel's launches plus the wait for them (cudaDeviceSynchronize, clFinish,
// the end of the parallel region); the data stays on the device between runs. Outputs are
// checked after the first run. OpenMP and PoCL use as many threads as Mimic: MIMIC_THREADS,
// or every hardware thread.
//
// Output, one line each (values in ms unless named _us; n/a where a platform is missing):
//   config threads=T llc_bytes=B working_set_bytes=W reps=N pocl=DEVICE|n/a
//   launch mimic_us=.. native_us=.. ratio=.. first_launch_ms=..
//   kernel=NAME data_mb=.. mimic_ms=.. first_launch_ms=.. openmp_ms=.. pocl_ms=.. reps=M/O/P
//          check=ok|mismatch|error          (on one line; reps: timed runs of Mimic/OpenMP/PoCL)
// Details of a mismatch or an error go to standard error. Exits 0 when every check is ok.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  bool quick = false;
  unsigned reps = 5;
  double llc_multiple = 4;
  std::vector<std::string> only;
};

int usage(FILE* out) {
  fprintf(
      out,
      "usage: bench_kernels [--quick] [--reps N] [--only NAME[,NAME...]] [--llc-multiple F]\n"
      "                     [--list]\n"
      "  Run it under `mimic run` (or on an NVIDIA GPU).\n"
      "  --quick           small sizes\n"
      "  --reps N          timed runs per kernel and platform, median (default 5)\n"
      "  --only NAMES      these kernels (--list), or `launch`\n"
      "  --llc-multiple F  data per memory-bound kernel, times the last-level cache (default 4)\n");
  return out == stdout ? 0 : 2;
}

std::optional<Options> parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--reps") {
      const char* v = value();
      if (!v || atoi(v) < 1) return std::nullopt;
      o.reps = unsigned(atoi(v));
    } else if (a == "--llc-multiple") {
      const char* v = value();
      if (!v || atof(v) <= 0) return std::nullopt;
      o.llc_multiple = atof(v);
    } else if (a == "--only") {
      const char* v = value();
      if (!v) return std::nullopt;
      for (std::string list = v; !list.empty();) {
        size_t comma = list.find(',');
        o.only.push_back(list.substr(0, comma));
        list = comma == std::string::npos ? "" : list.substr(comma + 1);
      }
    } else {
      fprintf(stderr, "bench_kernels: unknown option '%s'\n", a.c_str());
      return std::nullopt;
    }
  }
  return o;
}

bool selected(const Options& o, const std::string& name) {
  return o.only.empty() || std::find(o.only.begin(), o.only.end(), name) != o.only.end();
}

unsigned thread_count() {
  if (const char* env = std::getenv("MIMIC_THREADS"); env && atoi(env) > 0)
    return unsigned(atoi(env));
  return std::max(1u, std::thread::hardware_concurrency());
}

// The last-level cache in bytes: the C library's answer, else the highest cache level in sysfs.
size_t last_level_cache() {
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) return size_t(l3);
  size_t best = 0;
  int best_level = 0;
  for (int index = 0; index < 8; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), size_file(dir + "size");
    int level = 0;
    std::string size;
    if (!(level_file >> level) || !(size_file >> size)) continue;
    size_t bytes = std::strtoull(size.c_str(), nullptr, 10);
    if (!size.empty() && (size.back() == 'K' || size.back() == 'k'))
      bytes <<= 10;
    else if (!size.empty() && size.back() == 'M')
      bytes <<= 20;
    if (level >= best_level) {
      best_level = level;
      best = bytes;
    }
  }
  return best ? best : size_t(32) << 20;
}

size_t working_set(const Options& o, size_t llc) {
  if (o.quick) return size_t(4) << 20;
  auto bytes = size_t(double(llc) * o.llc_multiple);
  // Every platform's copy and the reference outputs live at once: stay well inside memory.
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) bytes = std::min(bytes, size_t(pages) * size_t(page) / 12);
  return std::max(bytes, size_t(16) << 20);
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One platform's run of one problem.
struct Measurement {
  bool ran = false;
  unsigned reps = 0;
  std::string error;
  double median_ms = 0;
  std::vector<std::vector<unsigned char>> outputs; // by buffer index; empty where not compared
};

// The timed runs of one kernel on one platform stop early, after at least one, once they
// have taken this long: a kernel that is very slow somewhere does not hold the run up.
constexpr double kTimedBudgetMs = 10000;

bool compared(const Buffer& b) {
  return b.role == Role::Output || b.role == Role::InOut;
}

// The platforms' timed runs of one problem, interleaved (OpenMP's first, then Mimic's, then
// PoCL's, and again): the machine's slow phases, which last seconds, then fall on every
// platform alike instead of on whichever was being timed (measured one platform after the
// other, the same layernorm code took 87-116 ms across runs while OpenMP's took 48-56).
// Every platform holds its copy of the data throughout.
std::vector<Measurement> measure(const std::vector<Platform*>& platforms, const Problem& problem, unsigned reps,
                                 bool settle) {
  // OpenMP's idle workers spin for a while after a parallel region (libomp: 200 ms), and
  // would take cores from the platform timed next: each run that follows another
  // platform's waits for them.
  auto settle_down = [&] {
    if (settle) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  };
  const size_t n = platforms.size();
  std::vector<Measurement> m(n);
  std::vector<std::vector<double>> times(n);
  std::vector<double> spent_ms(n, 0);
  std::vector<bool> loaded(n, false), live(n, false);
  for (size_t p = 0; p < n; ++p) {
    settle_down();
    try {
      loaded[p] = true;
      platforms[p]->load(problem);
      platforms[p]->run(problem);
      m[p].outputs.resize(problem.buffers.size());
      for (size_t i = 0; i < problem.buffers.size(); ++i)
        if (compared(problem.buffers[i])) {
          m[p].outputs[i].resize(problem.buffers[i].bytes);
          platforms[p]->fetch(problem, i, m[p].outputs[i].data());
        }
      live[p] = true;
    } catch (const std::exception& e) {
      m[p].error = e.what();
    }
  }
  for (unsigned r = 0; r < reps; ++r)
    for (size_t p = 0; p < n; ++p) {
      if (!live[p] || (r > 0 && spent_ms[p] >= kTimedBudgetMs)) continue;
      if (n > 1) settle_down();
      try {
        auto start = Clock::now();
        platforms[p]->run(problem);
        times[p].push_back(ms_since(start));
        spent_ms[p] += times[p].back();
      } catch (const std::exception& e) {
        m[p].error = e.what();
        live[p] = false;
      }
    }
  for (size_t p = 0; p < n; ++p) {
    if (live[p]) {
      m[p].median_ms = median(times[p]);
      m[p].reps = unsigned(times[p].size());
      m[p].ran = true;
    }
    if (loaded[p]) try {
        platforms[p]->unload();
      } catch (const std::exception&) {
      }
  }
  return m;
}

// Empty when `m` agrees with the reference, otherwise why not.
std::string cross_check(const Problem& problem, const Measurement& m,
                        const Measurement& reference) {
  std::string differences;
  for (size_t i = 0; i < problem.buffers.size(); ++i)
    if (compared(problem.buffers[i])) {
      std::string d = compare_buffer(problem, i, m.outputs[i], reference.outputs[i]);
      if (!d.empty()) differences += (differences.empty() ? "" : "; ") + d;
    }
  return differences;
}

std::string format_ms(std::optional<double> ms) {
  if (!ms) return "n/a";
  char text[32];
  snprintf(text, sizeof text, "%.3f", *ms);
  return text;
}

std::string format_ms(const Measurement* m) {
  return format_ms(m && m->ran ? std::optional(m->median_ms) : std::nullopt);
}

// The first launch of `kernel` on a small problem, or nothing if it fails (the full
// problem's run reports why). Run by a process of its own (--first-launch).
std::optional<double> first_launch_in_process(Platform& cuda, Kernel kernel) {
  Problem small = make_problem(kernel, Sizes{size_t(64) << 10, Sizes::Scale::tiny});
  std::optional<double> ms;
  try {
    cuda.load(small);
    auto start = Clock::now();
    cuda.run(small);
    ms = ms_since(start);
  } catch (const std::exception&) {
  }
  try {
    cuda.unload();
  } catch (const std::exception&) {
  }
  return ms;
}

// MIMIC_QUICK_TIER as the user set it (main keeps it before it sets its own).
std::optional<std::string> g_user_quick_tier;

// The first launch of `kernel`, timed in a new process (`bench_kernels --first-launch
// NAME`) that sees the user's MIMIC_QUICK_TIER: with Mimic's tiers its first launch runs
// quick code while the optimised code is compiled in the background. This process sets
// MIMIC_QUICK_TIER=0 instead, so that the timed runs are always the optimised code's (JIT
// excluded), never quick code waiting for its replacement.
std::optional<double> first_launch_ms(Kernel kernel) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (strncmp(*e, "MIMIC_QUICK_TIER=", 17) != 0) env_text.emplace_back(*e);
  if (g_user_quick_tier) env_text.push_back("MIMIC_QUICK_TIER=" + *g_user_quick_tier);
  std::vector<char*> envp;
  for (std::string& e : env_text)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe", flag = "--first-launch", name = kKernelNames[size_t(kernel)];
  char* argv[] = {self.data(), flag.data(), name.data(), nullptr};
  int out[2];
  if (pipe(out) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  pid_t child = 0;
  const int spawned = posix_spawn(&child, self.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string text;
  char buffer[256];
  for (ssize_t n; spawned == 0 && (n = read(out[0], buffer, sizeof buffer)) > 0;)
    text.append(buffer, size_t(n));
  close(out[0]);
  int status = 0;
  if (spawned != 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return std::nullopt;
  char* end = nullptr;
  double ms = strtod(text.c_str(), &end);
  if (end == text.c_str()) return std::nullopt;
  return ms;
}

// --first-launch NAME: prints the first launch's milliseconds (or fails).
int first_launch_main(const char* name) {
  auto it = std::find_if(std::begin(kKernelNames), std::end(kKernelNames),
                         [&](const char* k) { return !strcmp(name, k); });
  if (it == std::end(kKernelNames)) return 2;
  try {
    std::unique_ptr<Platform> cuda = make_cuda_platform();
    std::optional<double> ms = first_launch_in_process(*cuda, Kernel(it - std::begin(kKernelNames)));
    if (!ms) return 1;
    printf("%.3f\n", *ms);
    return 0;
  } catch (const std::exception& e) {
    fprintf(stderr, "bench_kernels: %s\n", e.what());
    return 1;
  }
}

// Runs one kernel on every platform; prints its line; returns whether its check is ok.
bool bench_kernel(Kernel kernel, const Sizes& sizes, unsigned reps, Platform& cuda,
                  Platform& openmp, Platform* opencl) {
  const char* name = kKernelNames[size_t(kernel)];
  Problem problem = make_problem(kernel, sizes);
  const bool settle = sizes.scale == Sizes::Scale::full;
  // The platforms measured before may still spin (OpenMP's idle workers: 200 ms), and would
  // take a core from the first launch's process.
  if (settle) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::optional<double> first_ms = first_launch_ms(kernel);
  std::vector<Platform*> platforms{&openmp, &cuda};
  if (opencl) platforms.push_back(opencl);
  std::vector<Measurement> measured = measure(platforms, problem, reps, settle);
  Measurement reference = std::move(measured[0]);
  Measurement mimic = std::move(measured[1]);
  std::optional<Measurement> pocl;
  if (opencl) pocl = std::move(measured[2]);
  std::string check = "ok";
  auto verify = [&](const char* platform, const Measurement& m) {
    if (!m.ran) {
      fprintf(stderr, "bench_kernels: %s on %s: %s\n", name, platform, m.error.c_str());
      check = "error";
      return;
    }
    if (!reference.ran) return;
    std::string d = cross_check(problem, m, reference);
    if (d.empty()) return;
    fprintf(stderr, "bench_kernels: %s on %s differs from OpenMP: %s\n", name, platform, d.c_str());
    if (check == "ok") check = "mismatch";
  };
  verify("OpenMP", reference);
  verify("Mimic", mimic);
  if (pocl) verify("PoCL", *pocl);
  printf("kernel=%s data_mb=%.1f mimic_ms=%s first_launch_ms=%s openmp_ms=%s pocl_ms=%s "
         "reps=%u/%u/%u check=%s\n",
         name, double(problem.data_bytes()) / (1 << 20), format_ms(&mimic).c_str(),
         format_ms(first_ms).c_str(), format_ms(&reference).c_str(),
         format_ms(pocl ? &*pocl : nullptr).c_str(), mimic.reps, reference.reps,
         pocl ? pocl->reps : 0, check.c_str());
  fflush(stdout);
  return check == "ok";
}

int run(const Options& o) {
  const unsigned threads = thread_count();
  const size_t llc = last_level_cache();
  Sizes sizes{working_set(o, llc), o.quick ? Sizes::Scale::quick : Sizes::Scale::full};
  for (const std::string& name : o.only)
    if (name != "launch" &&
        std::find_if(std::begin(kKernelNames), std::end(kKernelNames),
                     [&](const char* k) { return name == k; }) == std::end(kKernelNames)) {
      fprintf(stderr, "bench_kernels: no kernel named '%s' (see --list)\n", name.c_str());
      return 2;
    }
  std::unique_ptr<Platform> cuda, openmp, opencl;
  std::string pocl_device = "n/a";
  try {
    cuda = make_cuda_platform();
    openmp = make_openmp_platform(threads);
  } catch (const std::exception& e) {
    fprintf(stderr, "bench_kernels: %s\n", e.what());
    return 2;
  }
  try {
    opencl = make_opencl_platform(threads, pocl_device);
  } catch (const std::exception& e) {
    fprintf(stderr, "bench_kernels: no PoCL column: %s\n", e.what());
  }
  for (char& c : pocl_device)
    if (c == ' ') c = '_';
  printf("config threads=%u llc_bytes=%zu working_set_bytes=%zu reps=%u pocl=%s\n", threads, llc,
         sizes.working_set, o.reps, pocl_device.c_str());
  fflush(stdout);
  bool ok = true;
  if (selected(o, "launch")) {
    try {
      LaunchTimes t = measure_launch(threads, o.quick ? 200 : 2000);
      printf("launch mimic_us=%.2f native_us=%.2f ratio=%.2f first_launch_ms=%.3f\n", t.mimic_us,
             t.native_us, t.mimic_us / t.native_us, t.first_launch_ms);
    } catch (const std::exception& e) {
      fprintf(stderr, "bench_kernels: launch: %s\n", e.what());
      printf("launch mimic_us=n/a native_us=n/a ratio=n/a first_launch_ms=n/a\n");
      ok = false;
    }
    fflush(stdout);
  }
  for (size_t k = 0; k < kKernelCount; ++k)
    if (selected(o, kKernelNames[k]))
      ok &= bench_kernel(Kernel(k), sizes, o.reps, *cuda, *openmp, opencl.get());
  return ok ? 0 : 1;
}

} // namespace
} // namespace bench

int main(int argc, char** argv) {
  if (argc == 3 && !strcmp(argv[1], "--first-launch")) return bench::first_launch_main(argv[2]);
  // Before any thread exists: the first launches see the user's tiers, the timed runs none.
  // (MIMIC_QUICK_TIER=only, quick code alone, stays: it times the quick tier's code.)
  if (const char* tier = std::getenv("MIMIC_QUICK_TIER")) bench::g_user_quick_tier = tier;
  if (!bench::g_user_quick_tier || *bench::g_user_quick_tier != "only") setenv("MIMIC_QUICK_TIER", "0", 1);
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return bench::usage(stdout);
    if (!strcmp(argv[i], "--list")) {
      for (const char* name : bench::kKernelNames)
        printf("%s\n", name);
      return 0;
    }
  }
  auto options = bench::parse(argc, argv);
  if (!options) return bench::usage(stderr);
  return bench::run(*options);
}
