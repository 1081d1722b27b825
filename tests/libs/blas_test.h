// Helpers for the cuBLAS test programs: typed random data on the device, references in
// complex<double> (real types are their real part), and a tally of checks. A program
// exits 0 only when every check passed.
#pragma once

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <complex>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

using R = std::complex<double>;

template <typename T>
constexpr bool is_complex_v = std::is_same_v<T, cuComplex> || std::is_same_v<T, cuDoubleComplex>;

template <typename T> R to_ref(const T& v) {
  if constexpr (std::is_same_v<T, cuComplex>)
    return R(v.x, v.y);
  else if constexpr (std::is_same_v<T, cuDoubleComplex>)
    return R(v.x, v.y);
  else if constexpr (std::is_same_v<T, __half>)
    return R(__half2float(v), 0);
  else if constexpr (std::is_same_v<T, R>)
    return v;
  else
    return R(double(v), 0);
}

template <typename T> T from_ref(R v) {
  if constexpr (std::is_same_v<T, cuComplex>)
    return make_cuComplex(float(v.real()), float(v.imag()));
  else if constexpr (std::is_same_v<T, cuDoubleComplex>)
    return make_cuDoubleComplex(v.real(), v.imag());
  else if constexpr (std::is_same_v<T, __half>)
    return __float2half(float(v.real()));
  else
    return T(v.real());
}

template <typename T> const char* type_name() {
  if constexpr (std::is_same_v<T, float>)
    return "S";
  else if constexpr (std::is_same_v<T, double>)
    return "D";
  else if constexpr (std::is_same_v<T, cuComplex>)
    return "C";
  else if constexpr (std::is_same_v<T, cuDoubleComplex>)
    return "Z";
  else
    return "H";
}

// The relative accuracy a result of `terms` summed products should reach.
template <typename T> double tolerance(int terms = 1) {
  double eps = std::is_same_v<T, double> || std::is_same_v<T, cuDoubleComplex> ? 1e-15
               : std::is_same_v<T, __half>                                     ? 2e-3
                                                                               : 2e-7;
  return eps * 8 * (terms + 4);
}

// Picks the S, D, C or Z function by element type.
template <typename T, typename S, typename D, typename C, typename Z>
auto pick(S s, D d, C c, Z z) {
  if constexpr (std::is_same_v<T, float>)
    return s;
  else if constexpr (std::is_same_v<T, double>)
    return d;
  else if constexpr (std::is_same_v<T, cuComplex>)
    return c;
  else
    return z;
}

struct Rng {
  unsigned long long state = 0x9e3779b97f4a7c15ull;
  double uniform() { // [-1, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 11) / double(1ull << 52) - 1.0;
  }
  template <typename T> T value() {
    return from_ref<T>(is_complex_v<T> ? R(uniform(), uniform()) : R(uniform(), 0));
  }
  template <typename T> std::vector<T> values(size_t n) {
    std::vector<T> v(n);
    for (auto& x : v)
      x = value<T>();
    return v;
  }
};

struct Tally {
  int checks = 0, failures = 0;
  void check(bool ok, const char* format, ...) {
    ++checks;
    if (ok) return;
    ++failures;
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

#define CUDA_OK(call)                                                                              \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));       \
      exit(2);                                                                                     \
    }                                                                                              \
  } while (0)

#define BLAS_OK(call) tally.status((call), CUBLAS_STATUS_SUCCESS, #call)

// A device copy of a host vector.
template <typename T> struct Device {
  T* ptr = nullptr;
  size_t count = 0;
  explicit Device(const std::vector<T>& host) : count(host.size()) {
    CUDA_OK(cudaMalloc(&ptr, std::max<size_t>(1, count) * sizeof(T)));
    CUDA_OK(cudaMemcpy(ptr, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  }
  explicit Device(size_t n) : Device(std::vector<T>(n)) {}
  Device(const Device&) = delete;
  ~Device() { cudaFree(ptr); }
  std::vector<T> get() const {
    std::vector<T> host(count);
    CUDA_OK(cudaMemcpy(host.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
};

template <typename T> std::vector<R> refs(const std::vector<T>& v) {
  std::vector<R> r(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    r[i] = to_ref(v[i]);
  return r;
}

// Max |got - want| against tolerance * (1 + max |want|), over the listed indices (all by
// default).
template <typename T>
void check_close(const std::vector<T>& got, const std::vector<R>& want, double tol,
                 const char* format, ...) {
  double err = 0, scale = 0;
  size_t worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double e = std::abs(to_ref(got[i]) - want[i]);
    if (!(e <= err)) {
      err = e;
      worst = i;
    }
    scale = std::max(scale, std::abs(want[i]));
  }
  char what[256];
  va_list args;
  va_start(args, format);
  vsnprintf(what, sizeof what, format, args);
  va_end(args);
  bool ok = err <= tol * (1 + scale);
  tally.check(ok, "%s: error %.3g at %zu (got %g%+gi, want %g%+gi), allowed %.3g", what, err, worst,
              want.empty() ? 0.0 : to_ref(got[worst]).real(),
              want.empty() ? 0.0 : to_ref(got[worst]).imag(),
              want.empty() ? 0.0 : want[worst].real(), want.empty() ? 0.0 : want[worst].imag(),
              tol * (1 + scale));
}

inline R conj_if(R v, bool c) {
  return c ? std::conj(v) : v;
}

// Element (i, j) of op(M), M column-major with leading dimension ld.
template <typename T> R op_at(const std::vector<T>& M, int ld, cublasOperation_t op, int i, int j) {
  return op == CUBLAS_OP_N ? to_ref(M[i + size_t(j) * ld])
                           : conj_if(to_ref(M[j + size_t(i) * ld]), op == CUBLAS_OP_C);
}

// The index of element i of an n-vector with increment inc (BLAS: negative walks back).
inline long strided(long i, long n, long inc) {
  return inc >= 0 ? i * inc : (i - n + 1) * inc;
}

template <typename T> T scalar_value(R v) {
  return from_ref<T>(is_complex_v<T> ? v : R(v.real(), 0));
}
