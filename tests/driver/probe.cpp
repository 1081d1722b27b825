// A fresh process for the driver tests that depend on state read once per process (the
// MIMIC_TRACE environment, the once-only "not implemented" report): loads libcuda.so.1
// with dlopen as the CUDA runtime does and makes a few calls.
//   driver_api_probe <libcuda.so.1> trace|stub
// Prints the result codes on stdout, one per line; the library writes to stderr.
#include <cudaTypedefs.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace {

void* library;

template <typename Fn> Fn symbol(const char* name) {
  void* p = dlsym(library, name);
  if (!p) {
    std::fprintf(stderr, "probe: %s not exported\n", name);
    std::exit(2);
  }
  return reinterpret_cast<Fn>(p);
}

void print(const char* what, CUresult result) {
  std::printf("%s %d\n", what, int(result));
}

// Calls that show each kind of argument formatting in the trace.
int trace_calls() {
  print("cuInit", symbol<PFN_cuInit_v2000>("cuInit")(0));
  int version = 0;
  print("cuDriverGetVersion", symbol<PFN_cuDriverGetVersion_v2020>("cuDriverGetVersion")(&version));
  auto get_proc = symbol<PFN_cuGetProcAddress_v12000>("cuGetProcAddress_v2");
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status;
  print("cuGetProcAddress_v2", get_proc("cuMemAlloc", &fn, 13000, 0, &status));
  if (!fn) return 1;
  CUdeviceptr dptr = 0;
  print("cuMemAlloc", reinterpret_cast<PFN_cuMemAlloc_v3020>(fn)(&dptr, 4096));
  CUfunction function = nullptr;
  print("cuModuleGetFunction", symbol<PFN_cuModuleGetFunction_v2000>("cuModuleGetFunction")(
                                   &function, nullptr, "vector_add"));
  print("cuMemsetD8_v2", symbol<PFN_cuMemsetD8_v3020>("cuMemsetD8_v2")(0x1234, 7, 10));
  print("cuDeviceGetNvSciSyncAttributes",
        symbol<PFN_cuDeviceGetNvSciSyncAttributes_v10020>("cuDeviceGetNvSciSyncAttributes")(nullptr, 0, 1));
  return 0;
}

// The same stub three times: twice through dlsym, once through cuGetProcAddress. NvSci
// interop (Tegra) is something Mimic will not implement.
int stub_calls() {
  using Fn = PFN_cuDeviceGetNvSciSyncAttributes_v10020;
  auto stub = symbol<Fn>("cuDeviceGetNvSciSyncAttributes");
  print("cuDeviceGetNvSciSyncAttributes", stub(nullptr, 0, 1));
  print("cuDeviceGetNvSciSyncAttributes", stub(nullptr, 0, 2));
  auto get_proc = symbol<PFN_cuGetProcAddress_v12000>("cuGetProcAddress_v2");
  void* fn = nullptr;
  print("cuGetProcAddress_v2", get_proc("cuDeviceGetNvSciSyncAttributes", &fn, 13000, 0, nullptr));
  if (fn != reinterpret_cast<void*>(stub)) return 1;
  print("cuDeviceGetNvSciSyncAttributes", reinterpret_cast<Fn>(fn)(nullptr, 0, 1));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <libcuda.so.1> trace|stub\n", argv[0]);
    return 2;
  }
  library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::fprintf(stderr, "probe: %s\n", dlerror());
    return 2;
  }
  if (std::strcmp(argv[2], "trace") == 0) return trace_calls();
  if (std::strcmp(argv[2], "stub") == 0) return stub_calls();
  std::fprintf(stderr, "probe: unknown mode %s\n", argv[2]);
  return 2;
}
