// Element types as stored in memory (f16, bf16, f32, f64) for the CPU backend: loads widen
// to the compute type, stores round to nearest even; and scratch memory that a thread
// keeps between calls, so that a matmul does not fault in fresh pages every time.
#pragma once

#include "libs/common/half.h"

#include <cuda.h>
#include <library_types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace mimic::cublaslt::cpu {

template <typename Raw> struct Storage;

template <> struct Storage<float> {
  using Raw = float;
  template <typename T> static T load(Raw v) { return T(v); }
  template <typename T> static Raw store(T v) { return Raw(v); }
};
template <> struct Storage<double> {
  using Raw = double;
  template <typename T> static T load(Raw v) { return T(v); }
  template <typename T> static Raw store(T v) { return Raw(v); }
};

struct Half {};
struct BFloat16 {};

template <> struct Storage<Half> {
  using Raw = uint16_t;
  template <typename T> static T load(Raw v) { return T(libs::half_bits_to_float(v)); }
  template <typename T> static Raw store(T v) { return libs::float_to_half_bits(float(v)); }
};
template <> struct Storage<BFloat16> {
  using Raw = uint16_t;
  template <typename T> static T load(Raw v) { return T(libs::bf16_bits_to_float(v)); }
  template <typename T> static Raw store(T v) { return libs::float_to_bf16_bits(float(v)); }
};

inline size_t type_size(cudaDataType_t type) {
  switch (type) {
  case CUDA_R_16F:
  case CUDA_R_16BF:
    return 2;
  case CUDA_R_64F:
    return 8;
  default:
    return 4;
  }
}

// Calls f(Tag{}) with the storage tag of `type` (f16, bf16, f32 or f64).
template <typename F> decltype(auto) with_storage(cudaDataType_t type, F&& f) {
  switch (type) {
  case CUDA_R_16F:
    return f(Half{});
  case CUDA_R_16BF:
    return f(BFloat16{});
  case CUDA_R_32F:
    return f(float{});
  case CUDA_R_64F:
    return f(double{});
  default:
    throw std::logic_error("cuBLASLt CPU backend: no storage for data type " +
                           std::to_string(int(type)));
  }
}

// One value of `type` at element `index` of `base`, as T.
template <typename T> T load_element(const void* base, cudaDataType_t type, int64_t index) {
  return with_storage(type, [&](auto tag) {
    using S = Storage<decltype(tag)>;
    return S::template load<T>(static_cast<const typename S::Raw*>(base)[index]);
  });
}

// Memory a thread reuses from call to call; grows, never shrinks.
class Scratch {
public:
  template <typename T> T* get(size_t count) {
    size_t bytes = count * sizeof(T) + 64;
    if (bytes > size_) {
      data_ = std::make_unique_for_overwrite<std::byte[]>(bytes);
      size_ = bytes;
    }
    auto address = reinterpret_cast<uintptr_t>(data_.get());
    return reinterpret_cast<T*>((address + 63) & ~uintptr_t(63));
  }

private:
  std::unique_ptr<std::byte[]> data_;
  size_t size_ = 0;
};

} // namespace mimic::cublaslt::cpu
