// Every gemm: the typed ones and the GemmEx family, single, batched and strided. Equal
// float/double/complex types go straight to OpenBLAS; f16, bf16 and int8 inputs are
// widened to f32 blocks (f64 for the exact int8 -> int32 products) and the result narrowed
// back with rounding to nearest even.
#include "libs/common/half.h"
#include "libs/cublas/cpu/cpu_ops.h"

#include <cstdint>
#include <vector>

namespace mimic::cublas::cpu {
namespace {

using libs::bf16_bits_to_float;
using libs::float_to_bf16_bits;
using libs::float_to_half_bits;
using libs::half_bits_to_float;

template <typename Src, typename Dst, typename Convert>
void widen_as(const void* from, long long ld, long long rows, long long cols, Dst* to,
              Convert convert) {
  const Src* src = static_cast<const Src*>(from);
  for (long long j = 0; j < cols; ++j)
    for (long long i = 0; i < rows; ++i)
      to[i + j * rows] = convert(src[i + j * ld]);
}

// A stored matrix of `type` into a contiguous one of Dst (float, double or complex float).
template <typename Dst>
void widen(cudaDataType_t type, const void* from, long long ld, long long rows, long long cols,
           Dst* to) {
  switch (type) {
  case CUDA_R_16F:
    return widen_as<uint16_t>(from, ld, rows, cols, to,
                              [](uint16_t v) { return Dst(half_bits_to_float(v)); });
  case CUDA_R_16BF:
    return widen_as<uint16_t>(from, ld, rows, cols, to,
                              [](uint16_t v) { return Dst(bf16_bits_to_float(v)); });
  case CUDA_R_8I:
    return widen_as<int8_t>(from, ld, rows, cols, to, [](int8_t v) { return Dst(v); });
  case CUDA_R_32I:
    return widen_as<int32_t>(from, ld, rows, cols, to, [](int32_t v) { return Dst(v); });
  case CUDA_R_32F:
    return widen_as<float>(from, ld, rows, cols, to, [](float v) { return Dst(v); });
  case CUDA_C_8I:
    if constexpr (is_complex<Dst>)
      return widen_as<uint16_t>(from, ld, rows, cols, to, [](uint16_t v) {
        return Dst(float(int8_t(v & 0xff)), float(int8_t(v >> 8)));
      });
    break;
  default:
    break;
  }
  throw std::logic_error("cuBLAS CPU backend: cannot widen data type " + std::to_string(int(type)));
}

template <typename Dst, typename Src, typename Convert>
void narrow_as(const Src* from, long long rows, long long cols, void* to, long long ld,
               Convert convert) {
  Dst* dst = static_cast<Dst*>(to);
  for (long long j = 0; j < cols; ++j)
    for (long long i = 0; i < rows; ++i)
      dst[i + j * ld] = convert(from[i + j * rows]);
}

template <typename Src>
void narrow(const Src* from, long long rows, long long cols, cudaDataType_t type, void* to,
            long long ld) {
  switch (type) {
  case CUDA_R_16F:
    return narrow_as<uint16_t>(from, rows, cols, to, ld,
                               [](Src v) { return float_to_half_bits(float(v)); });
  case CUDA_R_16BF:
    return narrow_as<uint16_t>(from, rows, cols, to, ld,
                               [](Src v) { return float_to_bf16_bits(float(v)); });
  case CUDA_R_32I:
    // Exact integers (products of int8 summed in f64); int32 arithmetic wraps.
    return narrow_as<int32_t>(from, rows, cols, to, ld,
                              [](Src v) { return int32_t(uint32_t(int64_t(v))); });
  case CUDA_R_32F:
    return narrow_as<float>(from, rows, cols, to, ld, [](Src v) { return float(v); });
  default:
    throw std::logic_error("cuBLAS CPU backend: cannot narrow to data type " +
                           std::to_string(int(type)));
  }
}

struct Operands {
  const void* A;
  const void* B;
  void* C;
};

Operands batch_operands(const GemmArgs& a, long long i) {
  if (a.pointer_arrays)
    return {batch_matrix<const void>(a.A, i), batch_matrix<const void>(a.B, i),
            batch_matrix<void>(a.C, i)};
  auto at = [i](const void* base, long long stride, cudaDataType_t type) {
    return static_cast<const char*>(base) + i * stride * (long long)data_type_size(type);
  };
  return {at(a.A, a.stride_a, a.a_type), at(a.B, a.stride_b, a.b_type),
          const_cast<char*>(at(a.C, a.stride_c, a.c_type))};
}

// alpha or beta as the type the computation runs in.
template <typename W> W scale_value(const Scalar& s, cudaDataType_t type) {
  switch (type) {
  case CUDA_R_16F:
    return W(half_bits_to_float(s.get<uint16_t>()));
  case CUDA_R_32I:
    return W(s.get<int32_t>());
  case CUDA_R_32F:
    return W(s.get<float>());
  case CUDA_R_64F:
    return W(s.get<double>());
  default:
    return s.get<W>(); // complex: the scale type is W
  }
}

// C = alpha op(A) op(B) + beta C computed in W, the operands widened from their types.
template <typename W> void widened_gemm(const GemmArgs& a, const Operands& p) {
  long long m = a.m, n = a.n, k = a.k;
  long long a_rows = a.transa == CUBLAS_OP_N ? m : k, a_cols = a.transa == CUBLAS_OP_N ? k : m;
  long long b_rows = a.transb == CUBLAS_OP_N ? k : n, b_cols = a.transb == CUBLAS_OP_N ? n : k;
  std::vector<W> A(static_cast<size_t>(a_rows * a_cols)), B(static_cast<size_t>(b_rows * b_cols));
  widen(a.a_type, p.A, a.lda, a_rows, a_cols, A.data());
  widen(a.b_type, p.B, a.ldb, b_rows, b_cols, B.data());
  W alpha = scale_value<W>(a.alpha, a.scale_type), beta = scale_value<W>(a.beta, a.scale_type);
  CBLAS_TRANSPOSE ta = cblas_op(a.transa), tb = cblas_op(a.transb);
  if constexpr (!is_complex<W>) {
    ta = ta == CblasConjTrans ? CblasTrans : ta;
    tb = tb == CblasConjTrans ? CblasTrans : tb;
  }
  if (a.c_type == CUDA_R_32F && std::is_same_v<W, float>) {
    gemm<W>(ta, tb, int(m), int(n), int(k), alpha, A.data(), int(a_rows), B.data(), int(b_rows),
            beta, static_cast<W*>(p.C), int(a.ldc));
    return;
  }
  if constexpr (is_complex<W>) {
    gemm<W>(ta, tb, int(m), int(n), int(k), alpha, A.data(), int(a_rows), B.data(), int(b_rows),
            beta, static_cast<W*>(p.C), int(a.ldc));
  } else {
    std::vector<W> C(static_cast<size_t>(m * n));
    // beta == 0 means C is not read: it may hold NaN.
    if (beta != W{}) widen(a.c_type, p.C, a.ldc, m, n, C.data());
    gemm<W>(ta, tb, int(m), int(n), int(k), alpha, A.data(), int(a_rows), B.data(), int(b_rows),
            beta, C.data(), int(m));
    narrow(C.data(), m, n, a.c_type, p.C, a.ldc);
  }
}

template <typename T> void direct_gemm(const GemmArgs& a, const Operands& p) {
  gemm<T>(cblas_op(a.transa), cblas_op(a.transb), int(a.m), int(a.n), int(a.k), a.alpha.get<T>(),
          static_cast<const T*>(p.A), int(a.lda), static_cast<const T*>(p.B), int(a.ldb),
          a.beta.get<T>(), static_cast<T*>(p.C), int(a.ldc));
}

bool is_direct(const GemmArgs& a) {
  bool same = a.a_type == a.b_type && a.b_type == a.c_type && a.c_type == a.scale_type;
  return same && (a.c_type == CUDA_R_32F || a.c_type == CUDA_R_64F || a.c_type == CUDA_C_32F ||
                  a.c_type == CUDA_C_64F);
}

} // namespace

void run_gemm(const GemmArgs& a) {
  bool direct = is_direct(a);
  for (long long i = 0; i < a.batch; ++i) {
    Operands p = batch_operands(a, i);
    if (direct)
      with_type(a.c_type, [&](auto tag) { direct_gemm<decltype(tag)>(a, p); });
    else if (a.compute == CUBLAS_COMPUTE_32I)
      widened_gemm<double>(a, p);
    else if (a.c_type == CUDA_C_32F)
      widened_gemm<cf>(a, p);
    else
      widened_gemm<float>(a, p);
  }
}

} // namespace mimic::cublas::cpu
