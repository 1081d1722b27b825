// cuGetProcAddress: the lookups the CUDA 13.0 runtime makes at start-up, choice by version
// and per-thread flag, and the error cases.
#include "libcuda_loader.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace mimic::test {
namespace {

// Names the runtime asks for that cuda.h/cudaTypedefs.h do not declare: the OpenGL, EGL and
// VDPAU interop entry points live in cudaGL.h, cudaEGL.h and cudaVDPAU.h, which need the
// system's GL/EGL/VDPAU headers and are outside Mimic's driver surface. They answer
// CUDA_ERROR_NOT_FOUND, which the runtime accepts.
const std::set<std::string> kNotInCudaH = {
    "cuGLCtxCreate",
    "cuGLInit",
    "cuGLGetDevices",
    "cuGLRegisterBufferObject",
    "cuGLMapBufferObject",
    "cuGLMapBufferObjectAsync",
    "cuGLUnmapBufferObject",
    "cuGLUnmapBufferObjectAsync",
    "cuGLUnregisterBufferObject",
    "cuGLSetBufferObjectMapFlags",
    "cuGraphicsGLRegisterImage",
    "cuGraphicsGLRegisterBuffer",
    "cuGraphicsEGLRegisterImage",
    "cuEGLStreamConsumerConnect",
    "cuEGLStreamConsumerDisconnect",
    "cuEGLStreamConsumerAcquireFrame",
    "cuEGLStreamConsumerReleaseFrame",
    "cuEGLStreamProducerConnect",
    "cuEGLStreamProducerDisconnect",
    "cuEGLStreamProducerPresentFrame",
    "cuEGLStreamProducerReturnFrame",
    "cuGraphicsResourceGetMappedEglFrame",
    "cuEGLStreamConsumerConnectWithFlags",
    "cuVDPAUGetDevice",
    "cuVDPAUCtxCreate",
    "cuGraphicsVDPAURegisterVideoSurface",
    "cuGraphicsVDPAURegisterOutputSurface",
};

struct Request {
  std::string name;
  int version;
  bool per_thread;
};

// cudart13-proc-address-requests.txt: "name @ v1,v2/ptds" per line ("/ptds": flags 0x2).
std::vector<Request> runtime_requests() {
  std::ifstream in(MIMIC_PROC_REQUESTS);
  EXPECT_TRUE(in) << "cannot read " << MIMIC_PROC_REQUESTS;
  std::vector<Request> requests;
  std::string line;
  while (std::getline(in, line)) {
    size_t at = line.find(" @ ");
    if (at == std::string::npos) continue;
    std::string name = line.substr(0, at);
    std::stringstream versions(line.substr(at + 3));
    std::string item;
    while (std::getline(versions, item, ',')) {
      bool per_thread = item.ends_with("/ptds");
      requests.push_back({name, int(std::stoul(item, nullptr, 0)), per_thread});
    }
  }
  return requests;
}

struct Resolved {
  CUresult result;
  CUdriverProcAddressQueryResult status;
  void* fn;
};

Resolved resolve(const std::string& name, int version, cuuint64_t flags) {
  auto get_proc = exported<PFN_cuGetProcAddress_v12000>("cuGetProcAddress_v2");
  Resolved r{CUDA_ERROR_UNKNOWN, CUdriverProcAddressQueryResult(-1),
             reinterpret_cast<void*>(uintptr_t(1))};
  if (get_proc) r.result = get_proc(name.c_str(), &r.fn, version, flags, &r.status);
  return r;
}

std::string resolved_symbol(const std::string& name, int version, cuuint64_t flags = 0) {
  Resolved r = resolve(name, version, flags);
  EXPECT_EQ(r.result, CUDA_SUCCESS) << name << " @ " << version;
  return symbol_at(r.fn);
}

bool has_per_thread_export(const std::string& name) {
  for (const char* version : {"", "_v2", "_v3", "_v4"})
    for (const char* suffix : {"_ptds", "_ptsz"})
      if (dlsym(libcuda(), (name + version + suffix).c_str())) return true;
  return false;
}

TEST(ProcAddress, ResolvesEveryRuntimeRequest) {
  std::vector<Request> requests = runtime_requests();
  ASSERT_EQ(requests.size(), 440u) << "the runtime makes 440 lookups at start-up";
  std::set<std::string> names;
  for (const Request& q : requests) {
    names.insert(q.name);
    if (q.name == "0") continue; // the empty-name probe, see EmptyAndUnknownNames
    Resolved r = resolve(q.name, q.version,
                         q.per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0);
    std::string what = q.name + " @ " + std::to_string(q.version) + (q.per_thread ? "/ptds" : "");
    if (kNotInCudaH.count(q.name)) {
      EXPECT_EQ(r.result, CUDA_ERROR_NOT_FOUND) << what;
      EXPECT_EQ(r.status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND) << what;
      continue;
    }
    ASSERT_EQ(r.result, CUDA_SUCCESS) << what;
    EXPECT_EQ(r.status, CU_GET_PROC_ADDRESS_SUCCESS) << what;
    std::string symbol = symbol_at(r.fn);
    EXPECT_TRUE(symbol == q.name || symbol.starts_with(q.name + "_"))
        << what << " resolved to " << symbol;
    bool per_thread_symbol = symbol.ends_with("_ptds") || symbol.ends_with("_ptsz");
    EXPECT_EQ(per_thread_symbol, q.per_thread && has_per_thread_export(q.name))
        << what << " resolved to " << symbol;
  }
  EXPECT_EQ(names.size(), 346u);
}

TEST(ProcAddress, VersionSelectsTheSignature) {
  Resolved legacy = resolve("cuCtxGetDevice", 2000, 0);
  Resolved current = resolve("cuCtxGetDevice", 13000, 0);
  ASSERT_EQ(legacy.result, CUDA_SUCCESS);
  ASSERT_EQ(current.result, CUDA_SUCCESS);
  EXPECT_NE(legacy.fn, current.fn);
  EXPECT_EQ(legacy.fn, dlsym(libcuda(), "cuCtxGetDevice"));
  EXPECT_EQ(current.fn, dlsym(libcuda(), "cuCtxGetDevice_v2"));

  EXPECT_EQ(resolved_symbol("cuCtxGetDevice", 12090), "cuCtxGetDevice");
  EXPECT_EQ(resolved_symbol("cuMemAlloc", 2000), "cuMemAlloc");
  EXPECT_EQ(resolved_symbol("cuMemAlloc", 3020), "cuMemAlloc_v2");
  EXPECT_EQ(resolved_symbol("cuMemAlloc", 13000), "cuMemAlloc_v2");
  EXPECT_EQ(resolved_symbol("cuCtxCreate", 11040), "cuCtxCreate_v3");
  EXPECT_EQ(resolved_symbol("cuCtxCreate", 13000), "cuCtxCreate_v4");
  EXPECT_EQ(resolved_symbol("cuEventElapsedTime", 12080), "cuEventElapsedTime_v2");
  EXPECT_EQ(resolved_symbol("cuGetProcAddress", 11030), "cuGetProcAddress");
  EXPECT_EQ(resolved_symbol("cuGetProcAddress", 12000), "cuGetProcAddress_v2");
  EXPECT_EQ(resolved_symbol("cuProfilerStart", 4000), "cuProfilerStart");
}

TEST(ProcAddress, PerThreadFlagSelectsTheVariant) {
  const cuuint64_t ptds = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  EXPECT_EQ(resolved_symbol("cuMemcpyHtoD", 7000, ptds), "cuMemcpyHtoD_v2_ptds");
  EXPECT_EQ(resolved_symbol("cuMemcpyHtoD", 7000, 0), "cuMemcpyHtoD_v2");
  EXPECT_EQ(resolved_symbol("cuMemcpyHtoD", 6050, ptds), "cuMemcpyHtoD_v2")
      << "no per-thread variant before 7.0";
  EXPECT_EQ(resolved_symbol("cuLaunchKernel", 13000, ptds), "cuLaunchKernel_ptsz");
  EXPECT_EQ(resolved_symbol("cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM),
            "cuLaunchKernel");
  EXPECT_EQ(resolved_symbol("cuStreamGetCaptureInfo", 11030, ptds),
            "cuStreamGetCaptureInfo_v2_ptsz");
  EXPECT_EQ(resolved_symbol("cuStreamGetCaptureInfo", 13000, ptds),
            "cuStreamGetCaptureInfo_v3_ptsz");
  EXPECT_EQ(resolved_symbol("cuMemcpy", 13000, ptds), "cuMemcpy_ptds");
  EXPECT_EQ(resolved_symbol("cuInit", 13000, ptds), "cuInit") << "no variant: the plain one";
}

TEST(ProcAddress, EmptyAndUnknownNames) {
  for (const char* name : {"", "cuNoSuchFunction", "cuMemAlloc_v2", "cuMemcpyHtoD_v2_ptds"}) {
    Resolved r = resolve(name, 13000, 0);
    EXPECT_EQ(r.result, CUDA_ERROR_NOT_FOUND) << '"' << name << '"';
    EXPECT_EQ(r.status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND) << '"' << name << '"';
    EXPECT_EQ(r.fn, nullptr) << '"' << name << '"';
  }
  Resolved r = resolve("", 0, 0);
  EXPECT_EQ(r.result, CUDA_ERROR_NOT_FOUND);
}

TEST(ProcAddress, VersionNotSufficient) {
  for (auto [name, version] : {std::pair{"cuCtxGetDevice", 1000},
                               {"cuMemDiscardBatchAsync", 12090},
                               {"cuGetProcAddress", 11020}}) {
    Resolved r = resolve(name, version, 0);
    EXPECT_EQ(r.result, CUDA_ERROR_NOT_FOUND) << name;
    EXPECT_EQ(r.status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT) << name;
    EXPECT_EQ(r.fn, nullptr) << name;
  }
}

TEST(ProcAddress, InvalidArguments) {
  auto get_proc = exported<PFN_cuGetProcAddress_v12000>("cuGetProcAddress_v2");
  ASSERT_NE(get_proc, nullptr);
  CUdriverProcAddressQueryResult status;
  EXPECT_EQ(get_proc("cuInit", nullptr, 13000, 0, &status), CUDA_ERROR_INVALID_VALUE);
  void* fn = nullptr;
  EXPECT_EQ(get_proc("cuInit", &fn, 13000, 0, nullptr), CUDA_SUCCESS) << "symbolStatus is optional";
  EXPECT_EQ(fn, dlsym(libcuda(), "cuInit"));
}

TEST(ProcAddress, LegacyEntryPoint) {
  auto get_proc = exported<PFN_cuGetProcAddress_v11030>("cuGetProcAddress");
  ASSERT_NE(get_proc, nullptr);
  void* fn = nullptr;
  EXPECT_EQ(get_proc("cuMemAlloc", &fn, 11030, 0), CUDA_SUCCESS);
  EXPECT_EQ(symbol_at(fn), "cuMemAlloc_v2");
  EXPECT_EQ(get_proc("cuNoSuchFunction", &fn, 11030, 0), CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(get_proc("cuInit", nullptr, 11030, 0), CUDA_ERROR_INVALID_VALUE);
}

} // namespace
} // namespace mimic::test
