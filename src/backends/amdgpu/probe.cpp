#include "backends/amdgpu/probe.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "backends/amdgpu/hip_api.h"
#include "backends/amdgpu/hip_devices.h"

#ifdef _WIN32
#include <windows.h>
#endif

namespace mimic::amdgpu {

namespace {

struct MathLibrary {
  const char* name;
  const char* file; // Linux: the unversioned name, matched with any ".N..." suffix
  const char* dll;
};

const MathLibrary kMathLibraries[] = {
    {"rocBLAS", "librocblas.so", "rocblas.dll"}, {"hipBLASLt", "libhipblaslt.so", "hipblaslt.dll"},
    {"MIOpen", "libMIOpen.so", "MIOpen.dll"},    {"rocFFT", "librocfft.so", "rocfft.dll"},
    {"hipFFT", "libhipfft.so", "hipfft.dll"},    {"rocSPARSE", "librocsparse.so", "rocsparse.dll"},
    {"rocRAND", "librocrand.so", "rocrand.dll"},
};

#ifndef _WIN32
std::vector<std::string> library_directories(const std::string& hip_directory) {
  std::vector<std::string> dirs;
  auto add_list = [&](const char* list) {
    std::string s = list ? list : "";
    for (size_t start = 0; start <= s.size();) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) dirs.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  };
  add_list(std::getenv("LD_LIBRARY_PATH"));
  if (!hip_directory.empty()) dirs.push_back(hip_directory);
  if (const char* rocm = std::getenv("ROCM_PATH"); rocm && *rocm)
    dirs.push_back(std::string(rocm) + "/lib");
  for (const char* d : {"/opt/rocm/lib", "/opt/rocm/lib64", "/usr/lib/x86_64-linux-gnu",
                        "/usr/lib64", "/usr/lib", "/usr/local/lib"})
    dirs.push_back(d);
  return dirs;
}

// "librocblas.so", "librocblas.so.4" or "librocblas.so.4.2.0" in `dir`; the shortest
// versioned name (the soname) wins over longer ones, the bare name comes last.
std::string find_in(const std::string& dir, const std::string& file) {
  std::error_code ec;
  std::string best;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(file, 0) != 0 || (name.size() > file.size() && name[file.size()] != '.'))
      continue;
    bool versioned = name.size() > file.size();
    bool best_versioned = best.size() > file.size();
    if (best.empty() || (versioned && !best_versioned) ||
        (versioned == best_versioned && name.size() < best.size()))
      best = name;
  }
  return best.empty() ? std::string() : dir + "/" + best;
}
#endif

} // namespace

std::vector<ProbedLibrary> probe_math_libraries(const std::string& hip_directory) {
  std::vector<ProbedLibrary> out;
#ifdef _WIN32
  (void)hip_directory;
  for (const MathLibrary& lib : kMathLibraries) {
    ProbedLibrary p{lib.name, lib.dll, false, {}};
    char path[MAX_PATH];
    if (DWORD n = SearchPathA(nullptr, lib.dll, nullptr, MAX_PATH, path, nullptr);
        n > 0 && n < MAX_PATH) {
      p.present = true;
      p.path = path;
    }
    out.push_back(p);
  }
#else
  std::vector<std::string> dirs = library_directories(hip_directory);
  for (const MathLibrary& lib : kMathLibraries) {
    ProbedLibrary p{lib.name, lib.file, false, {}};
    for (const std::string& dir : dirs)
      if (std::string found = find_in(dir, lib.file); !found.empty()) {
        p.present = true;
        p.path = found;
        break;
      }
    out.push_back(p);
  }
#endif
  return out;
}

ProbeReport probe() {
  ProbeReport report;
  const Result<HipApi>& hip = hip_runtime();
  std::string hip_directory;
  if (!hip) {
    report.reason = hip.error().message();
  } else {
    report.hip_found = true;
    report.hip_path = hip->file;
    std::filesystem::path p(hip->file);
    if (p.has_parent_path()) hip_directory = p.parent_path().string();
    int version = 0;
    if (hip->hipRuntimeGetVersion(&version) == hipSuccess) report.runtime_version = version;
    if (hip->hipDriverGetVersion(&version) == hipSuccess) report.driver_version = version;
    report.runtime_version_text = hip_version_text(report.runtime_version);
    report.driver_version_text = hip_version_text(report.driver_version);
    Result<std::vector<HipDevice>> devices = enumerate_hip_devices(*hip);
    if (!devices) {
      report.reason = devices.error().message();
    } else {
      bool any = false;
      for (const HipDevice& d : *devices) {
        report.gpus.push_back({d.ordinal, d.name, d.gfx, d.arch_name, d.total_memory,
                               d.properties.multiprocessor_count, d.supported,
                               d.unsupported_reason});
        any = any || d.supported;
      }
      if (!any) {
        report.reason = "no supported AMD GPU:";
        for (const ProbedGpu& g : report.gpus)
          report.reason += " HIP device " + std::to_string(g.hip_ordinal) + " (" + g.name +
                           "): " + g.reason + ";";
        report.reason.pop_back();
      }
    }
  }
  report.math_libraries = probe_math_libraries(hip_directory);
  return report;
}

} // namespace mimic::amdgpu
