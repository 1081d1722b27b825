// mimic-doctor-probe: what `mimic doctor` runs under `mimic run` to check Mimic as an
// application sees it: the CUDA runtime (linked statically, as nvcc links it) starts on
// Mimic's driver and runs kernels, and each drop-in library loads from where the dynamic
// loader finds it and computes a small known answer. Built by nvcc like an application.
//
// Prints one line per check: `check NAME STATUS DETAIL...`, STATUS one of ok, fail, absent.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void report(const char* name, const char* status, const std::string& detail) {
  printf("check %s %s %s\n", name, status, detail.c_str());
  fflush(stdout);
}

std::string text(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string text(const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  return buffer;
}

// Small deterministic inputs: values of a few bits, so sums are exact in float.
float input(unsigned i, unsigned salt) { return float(int((i * 2654435761u + salt * 40503u) >> 27) - 16) / 8.0f; }

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// A block reduction through shared memory, barriers and warp shuffles.
__global__ void block_sums(const float* x, float* sums, int n) {
  __shared__ float warp_sums[32];
  float v = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    v += x[i];
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0;
    for (int offset = 16; offset > 0; offset /= 2)
      v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x == 0) sums[blockIdx.x] = v;
  }
}

bool check_runtime() {
  int devices = 0, driver = 0, runtime = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess) {
    report("runtime", "fail", text("cudaGetDeviceCount: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e)));
    return false;
  }
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  report("runtime", "ok",
         text("CUDA runtime %d.%d on driver API %d.%d; %d device(s), device 0: %s (compute %d.%d, %d SMs, %.1f GiB)",
              runtime / 1000, runtime % 1000 / 10, driver / 1000, driver % 1000 / 10, devices, prop.name, prop.major,
              prop.minor, prop.multiProcessorCount, double(prop.totalGlobalMem) / double(1ull << 30)));
  return true;
}

bool check_kernels() {
  const int n = 1 << 20, blocks = 64, threads = 256;
  std::vector<float> x(n), y(n);
  double sum_reference = 0;
  for (int i = 0; i < n; ++i) {
    x[i] = input(i, 1);
    y[i] = input(i, 2);
    sum_reference += x[i];
  }
  float *dx = nullptr, *dy = nullptr, *dsums = nullptr;
  if (cudaMalloc(&dx, n * 4) != cudaSuccess || cudaMalloc(&dy, n * 4) != cudaSuccess ||
      cudaMalloc(&dsums, blocks * 4) != cudaSuccess) {
    report("kernels", "fail", "cudaMalloc of 8 MiB failed");
    return false;
  }
  cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y.data(), n * 4, cudaMemcpyHostToDevice);
  auto t0 = std::chrono::steady_clock::now();
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, dx, dy);
  cudaError_t e = cudaDeviceSynchronize();
  double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (e == cudaSuccess) {
    block_sums<<<blocks, threads>>>(dx, dsums, n);
    e = cudaDeviceSynchronize();
  }
  if (e != cudaSuccess) {
    report("kernels", "fail", text("a kernel launch failed: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e)));
    return false;
  }
  std::vector<float> out(n), sums(blocks);
  cudaMemcpy(out.data(), dy, n * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(sums.data(), dsums, blocks * 4, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += out[i] != 2.0f * x[i] + y[i];
  double sum = 0;
  for (float s : sums)
    sum += s;
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dsums);
  if (wrong || sum != sum_reference) {
    report("kernels", "fail",
           text("wrong results: saxpy %d of %d elements wrong; block reduction %.1f, expected %.1f", wrong, n, sum,
                sum_reference));
    return false;
  }
  report("kernels", "ok",
         text("saxpy over 1M elements and a shared-memory/shuffle reduction: correct; first launch %.1f ms", first_ms));
  return true;
}

// dlopen of the library's soname as an application's loader would find it.
void* open_library(const char* name, const char* soname, std::string& where) {
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) return nullptr;
  where = soname;
  if (void* any = dlsym(handle, name)) {
    Dl_info info;
    if (dladdr(any, &info) && info.dli_fname) where = info.dli_fname;
  }
  return handle;
}

template <typename F> F symbol(void* library, const char* name) { return reinterpret_cast<F>(dlsym(library, name)); }

void check_cublas() {
  std::string where;
  void* lib = open_library("cublasCreate_v2", "libcublas.so.13", where);
  if (!lib) {
    report("cublas", "absent", text("libcublas.so.13 does not load: %s", dlerror()));
    return;
  }
  auto create = symbol<decltype(&cublasCreate_v2)>(lib, "cublasCreate_v2");
  auto destroy = symbol<decltype(&cublasDestroy_v2)>(lib, "cublasDestroy_v2");
  auto sgemm = symbol<decltype(&cublasSgemm_v2)>(lib, "cublasSgemm_v2");
  if (!create || !destroy || !sgemm) {
    report("cublas", "fail", where + ": cublasCreate_v2, cublasDestroy_v2 or cublasSgemm_v2 missing");
    return;
  }
  const int m = 48, n = 40, k = 56;
  std::vector<float> a(m * k), b(k * n), c(m * n, 0.0f);
  for (int i = 0; i < m * k; ++i)
    a[i] = input(i, 3);
  for (int i = 0; i < k * n; ++i)
    b[i] = input(i, 4);
  float *da, *db, *dc;
  cudaMalloc(&da, a.size() * 4);
  cudaMalloc(&db, b.size() * 4);
  cudaMalloc(&dc, c.size() * 4);
  cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
  cudaMemset(dc, 0, c.size() * 4);
  cublasHandle_t handle = nullptr;
  cublasStatus_t s = create(&handle);
  float alpha = 1.0f, beta = 0.0f;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, db, k, &beta, dc, m);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost);
  if (handle) destroy(handle);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  if (s != CUBLAS_STATUS_SUCCESS || e != cudaSuccess) {
    report("cublas", "fail", text("%s: SGEMM returned status %d (CUDA %s)", where.c_str(), int(s), cudaGetErrorName(e)));
    return;
  }
  int wrong = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double ref = 0;
      for (int p = 0; p < k; ++p)
        ref += double(a[i + p * m]) * b[p + j * k];
      wrong += std::fabs(ref - c[i + j * m]) > 1e-4 * (1 + std::fabs(ref));
    }
  report("cublas", wrong ? "fail" : "ok",
         text("%s: SGEMM %dx%dx%d %s", where.c_str(), m, n, k,
              wrong ? text("wrong in %d of %d elements", wrong, m * n).c_str() : "correct"));
}

void check_cublaslt() {
  std::string where;
  void* lib = open_library("cublasLtCreate", "libcublasLt.so.13", where);
  if (!lib) {
    report("cublaslt", "absent", text("libcublasLt.so.13 does not load: %s", dlerror()));
    return;
  }
  auto create = symbol<decltype(&cublasLtCreate)>(lib, "cublasLtCreate");
  auto destroy = symbol<decltype(&cublasLtDestroy)>(lib, "cublasLtDestroy");
  auto desc_create = symbol<decltype(&cublasLtMatmulDescCreate)>(lib, "cublasLtMatmulDescCreate");
  auto desc_destroy = symbol<decltype(&cublasLtMatmulDescDestroy)>(lib, "cublasLtMatmulDescDestroy");
  auto desc_set = symbol<decltype(&cublasLtMatmulDescSetAttribute)>(lib, "cublasLtMatmulDescSetAttribute");
  auto layout_create = symbol<decltype(&cublasLtMatrixLayoutCreate)>(lib, "cublasLtMatrixLayoutCreate");
  auto layout_destroy = symbol<decltype(&cublasLtMatrixLayoutDestroy)>(lib, "cublasLtMatrixLayoutDestroy");
  auto matmul = symbol<decltype(&cublasLtMatmul)>(lib, "cublasLtMatmul");
  if (!create || !destroy || !desc_create || !desc_destroy || !desc_set || !layout_create || !layout_destroy ||
      !matmul) {
    report("cublaslt", "fail", where + ": a cublasLt handle, descriptor, layout or matmul function is missing");
    return;
  }
  // D = relu(A * B + bias), column-major, f32.
  const int m = 32, n = 24, k = 40;
  std::vector<float> a(m * k), b(k * n), bias(m), d(m * n);
  for (int i = 0; i < m * k; ++i)
    a[i] = input(i, 5);
  for (int i = 0; i < k * n; ++i)
    b[i] = input(i, 6);
  for (int i = 0; i < m; ++i)
    bias[i] = input(i, 7);
  float *da, *db, *dbias, *dd;
  cudaMalloc(&da, a.size() * 4);
  cudaMalloc(&db, b.size() * 4);
  cudaMalloc(&dbias, bias.size() * 4);
  cudaMalloc(&dd, d.size() * 4);
  cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dbias, bias.data(), bias.size() * 4, cudaMemcpyHostToDevice);
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasStatus_t s = create(&handle);
  if (s == CUBLAS_STATUS_SUCCESS) s = desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
  const float* bias_pointer = dbias;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = desc_set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = desc_set(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_pointer, sizeof bias_pointer);
  if (s == CUBLAS_STATUS_SUCCESS) s = layout_create(&la, CUDA_R_32F, m, k, m);
  if (s == CUBLAS_STATUS_SUCCESS) s = layout_create(&lb, CUDA_R_32F, k, n, k);
  if (s == CUBLAS_STATUS_SUCCESS) s = layout_create(&ld, CUDA_R_32F, m, n, m);
  float alpha = 1.0f, beta = 0.0f;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = matmul(handle, desc, &alpha, da, la, db, lb, &beta, dd, ld, dd, ld, nullptr, nullptr, 0, 0);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(d.data(), dd, d.size() * 4, cudaMemcpyDeviceToHost);
  if (la) layout_destroy(la);
  if (lb) layout_destroy(lb);
  if (ld) layout_destroy(ld);
  if (desc) desc_destroy(desc);
  if (handle) destroy(handle);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dbias);
  cudaFree(dd);
  if (s != CUBLAS_STATUS_SUCCESS || e != cudaSuccess) {
    report("cublaslt", "fail",
           text("%s: matmul with the RELU_BIAS epilogue returned status %d (CUDA %s)", where.c_str(), int(s),
                cudaGetErrorName(e)));
    return;
  }
  int wrong = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double ref = bias[i];
      for (int p = 0; p < k; ++p)
        ref += double(a[i + p * m]) * b[p + j * k];
      ref = ref > 0 ? ref : 0;
      wrong += std::fabs(ref - d[i + j * m]) > 1e-4 * (1 + std::fabs(ref));
    }
  report("cublaslt", wrong ? "fail" : "ok",
         text("%s: f32 matmul %dx%dx%d with bias+ReLU epilogue %s", where.c_str(), m, n, k,
              wrong ? text("wrong in %d of %d elements", wrong, m * n).c_str() : "correct"));
}

// Libraries Mimic does not provide yet: whether the loader finds one anyway (NVIDIA's own
// copy will not run without an NVIDIA GPU).
void check_presence(const char* check, const char* soname, const char* symbol_name) {
  std::string where;
  void* lib = open_library(symbol_name, soname, where);
  if (!lib) {
    report(check, "absent", text("%s is not found", soname));
    return;
  }
  report(check, "found", where);
}

} // namespace

int main() {
  bool runtime_ok = check_runtime();
  if (runtime_ok && check_kernels()) {
    check_cublas();
    check_cublaslt();
  }
  check_presence("cusparse", "libcusparse.so.12", "cusparseCreate");
  check_presence("cufft", "libcufft.so.12", "cufftPlan1d");
  check_presence("curand", "libcurand.so.10", "curandCreateGenerator");
  check_presence("cudnn", "libcudnn.so.9", "cudnnCreate");
  return 0;
}
