// Helpers for the cuBLASLt test programs: typed matrices kept on the host as the exact
// values stored (so references in double see what the library sees), device copies,
// layouts, one matmul "case" run through the heuristic and cublasLtMatmul, and its
// double-precision reference including every epilogue. A program exits 0 only when every
// check passed.
#pragma once

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

struct Tally {
  int checks = 0, failures = 0;
  void check(bool ok, const char* format, ...) {
    ++checks;
    if (ok) return;
    if (++failures > 40) return; // enough to see the pattern
    va_list args;
    va_start(args, format);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
  }
  void status(cublasStatus_t got, cublasStatus_t want, const char* what) {
    check(got == want, "%s: status %d, expected %d", what, int(got), int(want));
  }
  int finish(const char* program) {
    printf("%s: %d checks, %d failed\n", program, checks, failures);
    return failures ? 1 : 0;
  }
};

inline Tally tally;

#define LT_CHECK(call)                                                                             \
  do {                                                                                             \
    cublasStatus_t s_ = (call);                                                                    \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, int(s_));               \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                         \
              cudaGetErrorString(e_));                                                             \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

struct Rng {
  unsigned long long state = 0x9e3779b97f4a7c15ull;
  double uniform() { // [-1, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 11) / double(1ull << 52) - 1.0;
  }
};
inline Rng rng;

inline size_t type_size(cudaDataType_t t) {
  if (t == CUDA_R_8U || t == CUDA_R_8I) return 1;
  return t == CUDA_R_16F || t == CUDA_R_16BF ? 2 : t == CUDA_R_64F ? 8 : 4;
}

inline const char* type_name(cudaDataType_t t) {
  switch (t) {
  case CUDA_R_16F:
    return "f16";
  case CUDA_R_16BF:
    return "bf16";
  case CUDA_R_64F:
    return "f64";
  default:
    return "f32";
  }
}

// The relative precision of a stored value of type t.
inline double type_eps(cudaDataType_t t) {
  switch (t) {
  case CUDA_R_16F:
    return 1.0 / 1024;
  case CUDA_R_16BF:
    return 1.0 / 128;
  case CUDA_R_64F:
    return 1e-14;
  default:
    return 2e-7;
  }
}

// The spacing of the smallest values of type t (f16's subnormals), an absolute error floor.
inline double type_tiny(cudaDataType_t t) {
  return t == CUDA_R_16F ? 6e-8 : 1e-37;
}

inline void store_value(void* base, cudaDataType_t t, size_t i, double v) {
  switch (t) {
  case CUDA_R_16F:
    static_cast<__half*>(base)[i] = __float2half(float(v));
    break;
  case CUDA_R_16BF:
    static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16(float(v));
    break;
  case CUDA_R_64F:
    static_cast<double*>(base)[i] = v;
    break;
  case CUDA_R_8U:
    static_cast<uint8_t*>(base)[i] = uint8_t(v);
    break;
  default:
    static_cast<float*>(base)[i] = float(v);
  }
}

inline double load_value(const void* base, cudaDataType_t t, size_t i) {
  switch (t) {
  case CUDA_R_16F:
    return __half2float(static_cast<const __half*>(base)[i]);
  case CUDA_R_16BF:
    return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
  case CUDA_R_64F:
    return static_cast<const double*>(base)[i];
  case CUDA_R_8U:
    return static_cast<const uint8_t*>(base)[i];
  default:
    return static_cast<const float*>(base)[i];
  }
}

// A buffer of `count` elements of type t on host and device.
struct Buffer {
  cudaDataType_t type = CUDA_R_32F;
  size_t count = 0;
  std::vector<unsigned char> host;
  void* device = nullptr;

  Buffer() = default;
  Buffer(cudaDataType_t t, size_t n) : type(t), count(n), host(n * type_size(t) + 1) {
    CUDA_CHECK(cudaMalloc(&device, host.size()));
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(type, o.type), std::swap(count, o.count), std::swap(host, o.host);
    std::swap(device, o.device);
    return *this;
  }
  ~Buffer() {
    if (device) cudaFree(device);
  }
  double get(size_t i) const { return load_value(host.data(), type, i); }
  void set(size_t i, double v) { store_value(host.data(), type, i, v); }
  void fill_random(double scale = 1) {
    for (size_t i = 0; i < count; ++i)
      set(i, rng.uniform() * scale);
  }
  void fill(double v) {
    for (size_t i = 0; i < count; ++i)
      set(i, v);
  }
  void upload() {
    CUDA_CHECK(cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice));
  }
  void download() {
    CUDA_CHECK(cudaMemcpy(host.data(), device, host.size(), cudaMemcpyDeviceToHost));
  }
};

// A matrix operand: layout values and the index of element (r, c) of batch b.
struct Matrix {
  cudaDataType_t type = CUDA_R_32F;
  int64_t rows = 0, cols = 0, ld = 0, stride = 0;
  int batch = 1;
  bool row_major = false;
  Buffer buf;

  Matrix() = default;
  Matrix(cudaDataType_t t, int64_t r, int64_t c, bool row, int batches, int64_t ld_extra = 0,
         int64_t stride_extra = 0)
      : type(t), rows(r), cols(c), batch(batches), row_major(row) {
    ld = (row ? c : r) + ld_extra;
    if (ld < 1) ld = 1;
    stride = ld * (row ? r : c) + stride_extra;
    buf = Buffer(t, size_t(stride * (batches - 1) + ld * (row ? r : c)) + 1);
  }
  size_t index(int b, int64_t r, int64_t c) const {
    return size_t(b * stride + (row_major ? r * ld + c : r + c * ld));
  }
  double at(int b, int64_t r, int64_t c) const { return buf.get(index(b, r, c)); }
  cublasLtMatrixLayout_t layout() const {
    cublasLtMatrixLayout_t l;
    LT_CHECK(cublasLtMatrixLayoutCreate(&l, type, uint64_t(rows), uint64_t(cols), ld));
    int32_t order = row_major ? CUBLASLT_ORDER_ROW : CUBLASLT_ORDER_COL;
    LT_CHECK(
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order));
    int32_t count = batch;
    LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                              sizeof count));
    int64_t s = stride;
    LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s,
                                              sizeof s));
    return l;
  }
};

inline double gelu_ref(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

inline double gelu_grad_ref(double x) {
  double s = std::sqrt(2 / M_PI), t = std::tanh(s * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * s * (1 + 3 * 0.044715 * x * x);
}

template <typename T> void set_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, T v) {
  LT_CHECK(cublasLtMatmulDescSetAttribute(d, a, &v, sizeof v));
}
