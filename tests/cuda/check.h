// Result checks shared by the CUDA test programs: CHECK stops the program on an error,
// EXPECT counts a failed expectation and carries on; the expect_* helpers compare arrays
// with a host-computed reference and print the first differences. main ends with
// `return report("name")`, which is 0 only when nothing failed.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>

static int failures = 0;

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_));     \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

#define EXPECT(cond)                                                                               \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                          \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

// The launch itself and everything the kernels launched so far did.
#define CHECK_LAUNCH()                                                                             \
  do {                                                                                             \
    CHECK(cudaGetLastError());                                                                     \
    CHECK(cudaDeviceSynchronize());                                                                \
  } while (0)

template <typename T> static void print_value(T v) {
  if constexpr (std::is_floating_point_v<T>)
    fprintf(stderr, "%.9g", double(v));
  else if constexpr (std::is_signed_v<T>)
    fprintf(stderr, "%lld", (long long)v);
  else
    fprintf(stderr, "%llu (0x%llx)", (unsigned long long)v, (unsigned long long)v);
}

// got[i] within tol of want[i] (absolute, or relative to |want[i]| when rel is set);
// NaN matches NaN. tol 0 asks for equal values.
template <typename T, typename U>
static int expect_near(const char* what, const T* got, const U* want, size_t n, double tol = 0,
                       bool rel = false) {
  int bad = 0;
  for (size_t i = 0; i < n; ++i) {
    double g = double(got[i]), w = double(want[i]);
    double bound = rel ? tol * std::fabs(w) : tol;
    if (g == w || std::fabs(g - w) <= bound || (std::isnan(g) && std::isnan(w))) continue;
    if (bad++ < 5) {
      fprintf(stderr, "%s[%zu] = %.9g, expected %.9g\n", what, i, g, w);
    }
  }
  if (bad) {
    fprintf(stderr, "%s: %d of %zu differ\n", what, bad, n);
    ++failures;
  }
  return bad;
}

// Exact comparison, for integers of any width (and bit patterns).
template <typename T>
static int expect_equal(const char* what, const T* got, const T* want, size_t n) {
  int bad = 0;
  for (size_t i = 0; i < n; ++i) {
    if (got[i] == want[i]) continue;
    if (bad++ < 5) {
      fprintf(stderr, "%s[%zu] = ", what, i);
      print_value(got[i]);
      fprintf(stderr, ", expected ");
      print_value(want[i]);
      fprintf(stderr, "\n");
    }
  }
  if (bad) {
    fprintf(stderr, "%s: %d of %zu differ\n", what, bad, n);
    ++failures;
  }
  return bad;
}

template <typename T> static int expect_value(const char* what, T got, T want) {
  return expect_equal(what, &got, &want, 1);
}

// Prints the verdict; the program's exit status.
static int report(const char* name) {
  if (failures)
    printf("%s: FAILED (%d)\n", name, failures);
  else
    printf("%s: ok\n", name);
  return failures != 0;
}
