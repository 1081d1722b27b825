// Result checks shared by the CUDA runtime API test programs: CHECK stops the program on
// an error, EXPECT counts a failed expectation and carries on. main returns `failures != 0`.
#pragma once

#include <cstdio>

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
