#include "backends/amdgpu/hip_api.h"

#include <cstdlib>

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace mimic::amdgpu {

namespace {

#ifdef _WIN32
const char* const kLibraryNames[] = {"amdhip64_7.dll", "amdhip64_6.dll"};

void* open_library(const std::string& path, std::string& why) {
  HMODULE module = LoadLibraryA(path.c_str());
  if (!module) why = "LoadLibrary failed with error " + std::to_string(GetLastError());
  return reinterpret_cast<void*>(module);
}

void* find_symbol(void* library, const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library), name));
}

std::string file_of(void* library, void*) {
  char path[MAX_PATH];
  DWORD n = GetModuleFileNameA(static_cast<HMODULE>(library), path, MAX_PATH);
  return n > 0 && n < MAX_PATH ? std::string(path, n) : std::string();
}
#else
const char* const kLibraryNames[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"};

void* open_library(const std::string& path, std::string& why) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    why = error ? error : "dlopen failed";
  }
  return handle;
}

void* find_symbol(void* library, const char* name) {
  return dlsym(library, name);
}

std::string file_of(void*, void* symbol) {
  Dl_info info;
  if (symbol && dladdr(symbol, &info) && info.dli_fname) return info.dli_fname;
  return {};
}
#endif

} // namespace

std::string HipApi::describe(hipError_t error) const {
  std::string text = "HIP error " + std::to_string(error);
  if (hipGetErrorString) {
    const char* s = hipGetErrorString(error);
    if (s && *s) text += ": " + std::string(s);
  }
  return text;
}

std::vector<std::string> hip_library_candidates() {
  if (const char* env = std::getenv("MIMIC_HIP_LIBRARY"); env && *env) return {env};
  std::vector<std::string> out(std::begin(kLibraryNames), std::end(kLibraryNames));
#ifndef _WIN32
  // ROCm's own directory is not always on the loader's path.
  std::vector<std::string> dirs;
  if (const char* rocm = std::getenv("ROCM_PATH"); rocm && *rocm)
    dirs.push_back(std::string(rocm) + "/lib");
  dirs.push_back("/opt/rocm/lib");
  for (const std::string& dir : dirs)
    for (const char* name : kLibraryNames)
      out.push_back(dir + "/" + name);
#endif
  return out;
}

Result<HipApi> load_hip_library(const std::string& path) {
  std::string why;
  void* handle = open_library(path, why);
  if (!handle) return Error(path + ": " + why);
  HipApi api;
  api.path = path;
  api.handle = handle;
  std::string missing;
#define HIP_FUNCTION(name, result, params)                                                         \
  api.name = reinterpret_cast<decltype(api.name)>(find_symbol(handle, #name));                     \
  if (!api.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
#define HIP_OPTIONAL(name, result, params)                                                         \
  api.name = reinterpret_cast<decltype(api.name)>(find_symbol(handle, #name));
#include "backends/amdgpu/hip_api.def"
#undef HIP_FUNCTION
#undef HIP_OPTIONAL
  // The library stays loaded: HIP does not support being unloaded and reloaded.
  if (!missing.empty())
    return Error(path + " is not a HIP runtime Mimic can use: it lacks " + missing);
  api.file = file_of(handle, reinterpret_cast<void*>(api.hipInit));
  if (api.file.empty()) api.file = path;
  return api;
}

Result<HipApi> load_first_hip_library(const std::vector<std::string>& candidates) {
  std::string tried;
  for (const std::string& candidate : candidates) {
    Result<HipApi> api = load_hip_library(candidate);
    if (api) return api;
    tried += "\n  " + api.error().message();
  }
  std::string names;
  for (const std::string& candidate : candidates)
    names += std::string(names.empty() ? "" : ", ") + candidate;
  return Error("HIP runtime not found: tried " + names + tried);
}

const Result<HipApi>& hip_runtime() {
  // Never destroyed: backends use it until the process ends, exit handlers included.
  static const Result<HipApi>* loaded =
      new Result<HipApi>(load_first_hip_library(hip_library_candidates()));
  return *loaded;
}

std::string hip_version_text(int version) {
  if (version <= 0) return "unknown";
  return std::to_string(version / 10000000) + "." + std::to_string(version / 100000 % 100) + "." +
         std::to_string(version % 100000);
}

} // namespace mimic::amdgpu
