// mimic bench kernels [--quick] [--reps N] [--only NAME[,NAME...]] [--llc-multiple F]
//
// Runs bench/kernels' harness (bench_kernels, beside this executable; built first if it
// is missing) twice under `mimic run` with a fresh, empty MIMIC_CACHE_DIR: the first run
// finds the JIT cache cold, the second warm. Prints each run's lines as they come
// (prefixed run=cold / run=warm), then a table of the warm run's times with both runs'
// first-launch times, the empty-launch round trip, and last
// `geomean mimic/openmp=X.XX mimic/pocl=Y.YY`.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/bench_ab.h"
#include "cli/commands.h"
#include "cli/process.h"

namespace mimic::cli {

namespace {

namespace fs = std::filesystem;

int usage(FILE* out) {
  fprintf(out,
          "usage: mimic bench <benchmark> [options]\n\n"
          "benchmarks:\n"
          "  kernels   CUDA kernels on Mimic against the same algorithms in OpenMP and on PoCL\n"
          "            options: --quick (small sizes), --reps N (timed runs, median; default 5),\n"
          "                     --only NAME[,NAME...] (kernels, or `launch`),\n"
          "                     --llc-multiple F (data per kernel as a multiple of the\n"
          "                     last-level cache; default 4)\n"
          "  ab        a workload under two configurations in alternating trials: medians, means,\n"
          "            ranges and differences of every metric it prints, CSV/JSON and an SVG plot\n"
          "            (mimic bench ab --help)\n"
          "  ppo       bench/ppo's CUDA PPO training on Mimic against the same PPO in LibTorch on\n"
          "            the CPU (mimic bench ppo --help)\n"
          "  cublas    SGEMM/DGEMM (512..4096) through Mimic's libcublas against OpenBLAS\n"
          "            called directly, and an f32 cuBLASLt matmul with the bias+GELU\n"
          "            epilogue against OpenBLAS plus a native epilogue;\n"
          "            options: --quick (small sizes), --reps N\n");
  return out == stdout ? 0 : 2;
}

// bench_kernels beside this executable; built through the build tree it came from if missing.
std::optional<fs::path> find_harness() {
  fs::path harness = self_path().parent_path() / "bench_kernels";
  if (access(harness.c_str(), X_OK) == 0) return harness;
#ifdef MIMIC_BUILD_DIR
  if (fs::exists(fs::path(MIMIC_BUILD_DIR) / "CMakeCache.txt")) {
    fprintf(stderr,
            "mimic bench: building bench_kernels (cmake --build %s --target bench_kernels)\n",
            MIMIC_BUILD_DIR);
    fflush(stderr);
    int status = wait_for(
        start({MIMIC_CMAKE_COMMAND, "--build", MIMIC_BUILD_DIR, "--target", "bench_kernels"}));
    if (access(harness.c_str(), X_OK) == 0) return harness;
    if (status != 0 && fs::exists(fs::path(MIMIC_BUILD_DIR) / "bench" / "kernels" / "cuda")) {
      fprintf(stderr, "mimic bench: building bench_kernels failed (see above)\n");
      return std::nullopt;
    }
  }
#endif
  fprintf(stderr,
          "mimic bench: %s is not built. It needs nvcc, OpenMP and OpenCL (PoCL): run\n"
          "  tools/install-deps.sh --bench, reconfigure the build and build the target "
          "bench_kernels\n",
          harness.c_str());
  return std::nullopt;
}

struct RunResult {
  int status = 0;
  std::optional<Record> config, launch;
  std::vector<Record> kernels;
};

// Runs the harness under `mimic run` with `cache_dir` as MIMIC_CACHE_DIR, echoing its
// lines prefixed by run=LABEL.
RunResult run_harness(const fs::path& mimic, const fs::path& harness,
                      const std::vector<std::string>& args, const std::string& cache_dir,
                      const char* label) {
  RunResult result;
  std::vector<std::string> argv = {mimic.string(), "run", "--", harness.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildOptions options;
  options.env = {{"MIMIC_CACHE_DIR", cache_dir}};
  result.status = run_lines(
      argv,
      [&](const std::string& line) {
        printf("run=%s %s\n", label, line.c_str());
        fflush(stdout);
        Record r = parse_line(line);
        if (r.count("kernel"))
          result.kernels.push_back(r);
        else if (r[""] == "config")
          result.config = r;
        else if (r[""] == "launch")
          result.launch = r;
      },
      options);
  return result;
}

std::string cell(std::optional<double> v, const char* format = "%.3f") {
  if (!v) return "n/a";
  char text[32];
  snprintf(text, sizeof text, format, *v);
  return text;
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b <= 0) return std::nullopt;
  return *a / *b;
}

std::string geomean(const std::vector<double>& ratios) {
  if (ratios.empty()) return "n/a";
  double logs = 0;
  for (double r : ratios)
    logs += std::log(r);
  return cell(std::exp(logs / double(ratios.size())), "%.2f");
}

const Record* find_kernel(const RunResult& run, const std::string& name) {
  for (const Record& r : run.kernels)
    if (r.at("kernel") == name) return &r;
  return nullptr;
}

// The check of one kernel over both runs: a run that did not report the kernel fails it.
std::string combined_check(const Record* cold, const Record* warm) {
  if (!cold) return "no-cold-run";
  if (!warm) return "no-warm-run";
  for (const Record* r : {cold, warm}) {
    auto it = r->find("check");
    if (it == r->end()) return "?";
    if (it->second != "ok") return it->second;
  }
  return "ok";
}

// The table: the warm run's times (the cold run's where the warm one has none), both runs'
// first launches; then the launch and geomean lines.
bool print_summary(const RunResult& cold, const RunResult& warm) {
  for (const auto& [run, label] : {std::pair{&cold, "cold"}, std::pair{&warm, "warm"}})
    if (run->status != 0)
      fprintf(stderr, "mimic bench: the %s run ended with status %d\n", label, run->status);
  std::vector<std::string> names;
  for (const RunResult* run : {&cold, &warm})
    for (const Record& r : run->kernels)
      if (std::find(names.begin(), names.end(), r.at("kernel")) == names.end())
        names.push_back(r.at("kernel"));
  printf("\n%-13s %9s %11s %11s %11s %13s %11s %14s %14s  %s\n", "kernel", "data MB", "Mimic ms",
         "OpenMP ms", "PoCL ms", "mimic/openmp", "mimic/pocl", "1st cold ms", "1st warm ms",
         "check");
  std::vector<double> vs_openmp, vs_pocl;
  bool ok = cold.status == 0 && warm.status == 0 && !names.empty();
  for (const std::string& name : names) {
    const Record* c = find_kernel(cold, name);
    const Record* w = find_kernel(warm, name);
    const Record& times = w ? *w : *c;
    auto mimic = number(times, "mimic_ms"), openmp = number(times, "openmp_ms"),
         pocl = number(times, "pocl_ms");
    auto r_openmp = ratio(mimic, openmp), r_pocl = ratio(mimic, pocl);
    if (r_openmp) vs_openmp.push_back(*r_openmp);
    if (r_pocl) vs_pocl.push_back(*r_pocl);
    std::string check = combined_check(c, w);
    ok &= check == "ok";
    auto first = [](const Record* r) {
      return cell(r ? number(*r, "first_launch_ms") : std::nullopt, "%.1f");
    };
    printf("%-13s %9s %11s %11s %11s %13s %11s %14s %14s  %s\n", name.c_str(),
           cell(number(times, "data_mb"), "%.1f").c_str(), cell(mimic).c_str(),
           cell(openmp).c_str(), cell(pocl).c_str(), cell(r_openmp, "%.2f").c_str(),
           cell(r_pocl, "%.2f").c_str(), first(c).c_str(), first(w).c_str(), check.c_str());
  }
  if (const auto& launch = warm.launch ? warm.launch : cold.launch) {
    const Record& l = *launch;
    printf("\nlaunch mimic_us=%s native_us=%s ratio=%s (empty kernel launch + synchronize against "
           "a native thread-pool dispatch of the same blocks; goal: ratio <= 3)\n",
           cell(number(l, "mimic_us"), "%.2f").c_str(),
           cell(number(l, "native_us"), "%.2f").c_str(), cell(number(l, "ratio"), "%.2f").c_str());
  }
  printf("geomean mimic/openmp=%s mimic/pocl=%s\n", geomean(vs_openmp).c_str(),
         geomean(vs_pocl).c_str());
  return ok;
}

// bench_cublas (bench/cublas, beside this executable) under `mimic run`; its output is the
// report (cuBLAS GEMMs, then cuBLASLt's bias+GELU matmul), ending with
// `cublas sgemm2048/openblas=X.XX`.
int bench_cublas(const Args& args) {
  fs::path harness = self_path().parent_path() / "bench_cublas";
  if (access(harness.c_str(), X_OK) != 0) {
    fprintf(stderr,
            "mimic bench cublas: %s is not built; it needs nvcc and OpenBLAS "
            "(tools/install-deps.sh), then the build target bench_cublas\n",
            harness.c_str());
    return 127;
  }
  std::vector<std::string> argv = {self_path().string(), "run", "--", harness.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return wait_for(start(argv));
}

int bench_kernels(const Args& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") return usage(stdout);
    bool takes_value = a == "--reps" || a == "--only" || a == "--llc-multiple";
    if (takes_value && i + 1 >= args.size()) {
      fprintf(stderr, "mimic bench kernels: %s needs a value\n", a.c_str());
      return 2;
    }
    if (!takes_value && a != "--quick") {
      fprintf(stderr, "mimic bench kernels: unknown option '%s'\n", a.c_str());
      return usage(stderr);
    }
    i += takes_value;
  }
  auto harness = find_harness();
  if (!harness) return 127;
  std::string cache_template = (fs::temp_directory_path() / "mimic-bench-cache-XXXXXX").string();
  if (!mkdtemp(cache_template.data())) {
    fprintf(stderr, "mimic bench: cannot create a temporary cache directory: %s\n",
            strerror(errno));
    return 1;
  }
  const fs::path mimic = self_path();
  RunResult cold = run_harness(mimic, *harness, args, cache_template, "cold");
  RunResult warm = run_harness(mimic, *harness, args, cache_template, "warm");
  std::error_code ignored;
  fs::remove_all(cache_template, ignored);
  if (warm.config) {
    Record& c = *warm.config;
    printf("\nthreads=%s working_set_bytes=%s reps=%s pocl=%s\n", c["threads"].c_str(),
           c["working_set_bytes"].c_str(), c["reps"].c_str(), c["pocl"].c_str());
  }
  return print_summary(cold, warm) ? 0 : 1;
}

} // namespace

int cmd_bench(const Args& args) {
  if (args.empty()) return usage(stderr);
  const std::string& what = args[0];
  if (what == "--help" || what == "-h") return usage(stdout);
  Args rest(args.begin() + 1, args.end());
  if (what == "kernels") return bench_kernels(rest);
  if (what == "cublas") return bench_cublas(rest);
  if (what == "ab") return bench_ab(rest);
  if (what == "ppo") return bench_ppo(rest);
  fprintf(stderr, "mimic bench: unknown benchmark '%s'\n", what.c_str());
  return usage(stderr);
}

} // namespace mimic::cli
