// cuBLASLt's epilogues on one column of the result at a time, in the compute type T, while
// the column is in cache. Each step is its own loop over the column, so that the simple
// ones vectorise. Layouts as cuBLASLt documents them: the bias is one value per row of D;
// the auxiliary matrix is column-major with leading dimension aux_ld (elements; bits for
// the ReLU mask, whose bit for row i of column j is bit (i + j * aux_ld) % 8 of byte
// (i + j * aux_ld) / 8, least significant first). GELU is the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); ReLU maps NaN to 0, as NVIDIA's does.
#pragma once

#include "libs/cublaslt/cpu/storage.h"
#include "libs/cublaslt/lt_backend.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace mimic::cublaslt::cpu {

// tanh for GELU. In f32 it goes through expf, which the compiler vectorises (with glibc's
// libmvec, see CMakeLists.txt) where tanhf stays a call per element, 6-8 times slower; the
// absolute error (a few f32 ulps of 1) disappears in GELU's 1 + tanh.
template <typename T> T gelu_tanh(T u) {
  if constexpr (std::is_same_v<T, float>)
    return 1.0f - 2.0f / (std::exp(2.0f * u) + 1.0f);
  else
    return std::tanh(u);
}

template <typename T> T gelu(T x) {
  const T scale = T(0.7978845608028654); // sqrt(2 / pi)
  const T cubic = T(0.044715);
  T u = scale * (x + cubic * x * x * x);
  return T(0.5) * x * (T(1) + gelu_tanh(u));
}

// The derivative of gelu above.
template <typename T> T gelu_gradient(T x) {
  const T scale = T(0.7978845608028654);
  const T cubic = T(0.044715);
  T x2 = x * x;
  T t = gelu_tanh(scale * (x + cubic * x2 * x));
  return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * scale * (T(1) + T(3) * cubic * x2);
}

// Converts `count` values of `type` starting at element `offset` of `base` to T.
template <typename T>
void load_line(const void* base, cudaDataType_t type, int64_t offset, int64_t count, T* out) {
  with_storage(type, [&](auto tag) {
    using S = Storage<decltype(tag)>;
    const auto* in = static_cast<const typename S::Raw*>(base) + offset;
    for (int64_t i = 0; i < count; ++i)
      out[i] = S::template load<T>(in[i]);
  });
}

// Stores `count` values of T at `stride`-apart elements from element `offset` of `base`.
template <typename T>
void store_line(const T* values, int64_t count, void* base, cudaDataType_t type, int64_t offset,
                int64_t stride = 1) {
  with_storage(type, [&](auto tag) {
    using S = Storage<decltype(tag)>;
    auto* out = static_cast<typename S::Raw*>(base) + offset;
    for (int64_t i = 0; i < count; ++i)
      out[i * stride] = S::template store<T>(values[i]);
  });
}

// One batch's epilogue; apply() runs it on column j of the m x n result.
template <typename T> struct ColumnEpilogue {
  EpilogueOps ops;
  const T* bias = nullptr; // m values
  void* aux = nullptr;     // this batch's auxiliary matrix
  cudaDataType_t aux_type = CUDA_R_32F;
  int64_t aux_ld = 0;
  double* bias_gradient = nullptr; // m sums
  T* line = nullptr;               // m values of scratch

  void apply(T* x, int64_t m, int64_t j) const {
    if (ops.bias)
      for (int64_t i = 0; i < m; ++i)
        x[i] += bias[i];
    if (ops.aux_out) {
      if (ops.relu)
        store_mask(x, m, j);
      else
        store_line(x, m, aux, aux_type, j * aux_ld);
    }
    if (ops.relu)
      for (int64_t i = 0; i < m; ++i)
        x[i] = x[i] > T(0) ? x[i] : T(0);
    if (ops.gelu)
      for (int64_t i = 0; i < m; ++i)
        x[i] = gelu(x[i]);
    if (ops.drelu) apply_mask(x, m, j);
    if (ops.dgelu) {
      load_line(aux, aux_type, j * aux_ld, m, line);
      for (int64_t i = 0; i < m; ++i)
        x[i] *= gelu_gradient(line[i]);
    }
    if (ops.bgrad)
      for (int64_t i = 0; i < m; ++i)
        bias_gradient[i] += double(x[i]);
  }

private:
  uint8_t* mask_column(int64_t j) const { return static_cast<uint8_t*>(aux) + j * aux_ld / 8; }

  void store_mask(const T* x, int64_t m, int64_t j) const {
    uint8_t* bytes = mask_column(j);
    for (int64_t b = 0; b * 8 < m; ++b) {
      uint8_t byte = 0;
      for (int64_t t = 0; t < 8 && b * 8 + t < m; ++t)
        byte |= uint8_t(x[b * 8 + t] > T(0)) << t;
      bytes[b] = byte;
    }
  }

  void apply_mask(T* x, int64_t m, int64_t j) const {
    const uint8_t* bytes = mask_column(j);
    for (int64_t i = 0; i < m; ++i)
      if (!((bytes[i / 8] >> (i % 8)) & 1)) x[i] = T(0);
  }
};

} // namespace mimic::cublaslt::cpu
