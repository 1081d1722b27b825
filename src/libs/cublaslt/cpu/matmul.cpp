// cublasLtMatmul on the host: OpenBLAS computes alpha op(A) op(B) + beta C in the compute
// type (f32, or f64 for CUBLAS_COMPUTE_64F), straight into D when D has that type and is
// column-major, else into a column-major scratch block; f16/bf16 operands are widened to
// packed blocks first. The epilogue then runs column by column while the column is in
// cache, and a result that is not D itself is stored into D (rounded, reordered) in
// blocks of columns.
#include "libs/cublaslt/cpu/cpu_ops.h"
#include "libs/cublaslt/cpu/epilogue.h"
#include "libs/cublaslt/matmul_check.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

namespace mimic::cublaslt::cpu {
namespace {

template <typename T> constexpr cudaDataType_t type_of = CUDA_R_32F;
template <> constexpr cudaDataType_t type_of<double> = CUDA_R_64F;

void gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* A, int lda,
          const float* B, int ldb, float beta, float* C, int ldc) {
  cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm(bool ta, bool tb, int m, int n, int k, double alpha, const double* A, int lda,
          const double* B, int ldb, double beta, double* C, int ldc) {
  cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, A, lda, B, ldb, beta, C, ldc);
}

// Scratch blocks of the thread that runs the work.
struct Buffers {
  Scratch acc, a, b, bias, line, gradient, block;
};

Buffers& buffers() {
  thread_local Buffers b;
  return b;
}

const void* batch_pointer(const MatrixArg& m, bool pointer_arrays, int64_t batch) {
  if (!m.data) return nullptr;
  if (pointer_arrays) return static_cast<const void* const*>(m.data)[batch];
  return static_cast<const char*>(m.data) + batch * m.batch_stride * int64_t(type_size(m.type));
}

// An operand as BLAS takes it: column-major T with a leading dimension, maybe transposed.
template <typename T> struct BlasOperand {
  const T* data;
  int64_t ld;
  bool trans;

  // Element (row, col) of op(operand).
  T at(int64_t row, int64_t col) const {
    return trans ? data[col + row * ld] : data[row + col * ld];
  }
};

// A row-major matrix is the column-major storage of its transpose; other types than T are
// widened into a packed block of the same memory order.
template <typename T>
BlasOperand<T> blas_operand(const MatrixArg& arg, const void* data, bool op_trans,
                            Scratch& scratch) {
  bool trans = arg.row_major ? !op_trans : op_trans;
  if (arg.type == type_of<T>) return {static_cast<const T*>(data), arg.ld, trans};
  int64_t inner = arg.row_major ? arg.cols : arg.rows;
  int64_t outer = arg.row_major ? arg.rows : arg.cols;
  T* packed = scratch.get<T>(size_t(std::max<int64_t>(inner * outer, 1)));
  for (int64_t o = 0; o < outer; ++o)
    load_line(data, arg.type, o * arg.ld, inner, packed + o * inner);
  return {packed, std::max<int64_t>(inner, 1), trans};
}

// C (any type, either order, ld 0 broadcasting) into the column-major m x n block `acc`.
template <typename T>
void load_matrix(const MatrixArg& arg, const void* data, T* acc, int64_t ldacc, int64_t m,
                 int64_t n) {
  if (!arg.row_major) {
    for (int64_t j = 0; j < n; ++j)
      load_line(data, arg.type, j * arg.ld, m, acc + j * ldacc);
    return;
  }
  with_storage(arg.type, [&](auto tag) {
    using S = Storage<decltype(tag)>;
    const auto* in = static_cast<const typename S::Raw*>(data);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        acc[i + j * ldacc] = S::template load<T>(in[i * arg.ld + j]);
  });
}

struct BatchScalars {
  double alpha = 1, beta = 0;
  const void* alpha_vector = nullptr; // m values of the scale type
  const void* beta_vector = nullptr;
};

BatchScalars batch_scalars(const Scalars& s, int64_t batch) {
  BatchScalars b{s.alpha, s.beta};
  if (s.mode == CUBLASLT_POINTER_MODE_DEVICE) {
    b.alpha = read_scalar(s.alpha_ptr, s.type);
    b.beta = read_scalar(s.beta_ptr, s.type);
  }
  if (s.alpha_vector())
    b.alpha_vector = static_cast<const char*>(s.alpha_ptr) +
                     batch * s.alpha_vector_stride * int64_t(type_size(s.type));
  if (s.beta_vector()) b.beta_vector = s.beta_ptr;
  return b;
}

// acc = alpha[i] acc + beta[i] C for the vector pointer modes (the GEMM ran with alpha 1).
template <typename T>
void scale_rows(const BatchScalars& s, cudaDataType_t scale_type, const MatrixArg& c_arg,
                const void* C, T* acc, int64_t ldacc, int64_t m, int64_t n, Buffers& buf) {
  T* alpha = buf.bias.get<T>(size_t(m) * 3 + 1);
  T* beta = alpha + m;
  T* c_line = beta + m;
  load_line(s.alpha_vector, scale_type, 0, m, alpha);
  for (int64_t i = 0; i < m; ++i)
    beta[i] = s.beta_vector ? load_element<T>(s.beta_vector, scale_type, i) : T(s.beta);
  bool with_c = C && (s.beta_vector || s.beta != 0);
  for (int64_t j = 0; j < n; ++j) {
    T* x = acc + j * ldacc;
    for (int64_t i = 0; i < m; ++i)
      x[i] *= alpha[i];
    if (!with_c) continue;
    if (c_arg.row_major)
      for (int64_t i = 0; i < m; ++i)
        c_line[i] = load_element<T>(C, c_arg.type, i * c_arg.ld + j);
    else
      load_line(C, c_arg.type, j * c_arg.ld, m, c_line);
    for (int64_t i = 0; i < m; ++i)
      x[i] += beta[i] * c_line[i];
  }
}

// Sums over k of op(A) (one per row, BGRADA) or op(B) (one per column, BGRADB).
template <typename T>
void operand_sums(const BlasOperand<T>& op, bool per_row, int64_t count, int64_t k, double* out) {
  std::fill(out, out + count, 0.0);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t i = 0; i < count; ++i)
      out[i] += double(per_row ? op.at(i, kk) : op.at(kk, i));
}

template <typename T>
void store_sums(const double* sums, int64_t count, void* base, cudaDataType_t type, int64_t offset,
                Buffers& buf) {
  T* values = buf.line.get<T>(size_t(count) + 1);
  for (int64_t i = 0; i < count; ++i)
    values[i] = T(sums[i]);
  store_line(values, count, base, type, offset);
}

// Columns j0 .. j0 + width of the column-major result into a row-major D, a block at a time.
template <typename T>
void store_row_major_block(const T* acc, int64_t ldacc, int64_t m, int64_t j0, int64_t width,
                           const MatrixArg& d, void* D) {
  with_storage(d.type, [&](auto tag) {
    using S = Storage<decltype(tag)>;
    auto* out = static_cast<typename S::Raw*>(D);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t jj = 0; jj < width; ++jj)
        out[i * d.ld + j0 + jj] = S::template store<T>(acc[i + (j0 + jj) * ldacc]);
  });
}

template <typename T> void run_batch(const MatmulArgs& a, int64_t batch, Buffers& buf) {
  const void* A = batch_pointer(a.a, a.pointer_arrays, batch);
  const void* B = batch_pointer(a.b, a.pointer_arrays, batch);
  const void* C = batch_pointer(a.c, a.pointer_arrays, batch);
  void* D = const_cast<void*>(batch_pointer(a.d, a.pointer_arrays, batch));
  const int64_t m = a.m, n = a.n, k = a.k;
  BatchScalars s = batch_scalars(a.scalars, batch);
  bool vector = s.alpha_vector != nullptr;

  // The accumulator: D itself when it is column-major T, else a scratch block.
  bool direct = a.d.type == type_of<T> && !a.d.row_major;
  T* acc = direct ? static_cast<T*>(D) : buf.acc.get<T>(size_t(m * n));
  int64_t ldacc = direct ? a.d.ld : m;
  T gemm_beta = 0;
  if (!vector && C && s.beta != 0) {
    if (!(direct && C == D)) load_matrix(a.c, C, acc, ldacc, m, n);
    gemm_beta = T(s.beta);
  }
  BlasOperand<T> opa = blas_operand<T>(a.a, A, a.trans_a, buf.a);
  BlasOperand<T> opb = blas_operand<T>(a.b, B, a.trans_b, buf.b);
  gemm(opa.trans, opb.trans, int(m), int(n), int(k), vector ? T(1) : T(s.alpha), opa.data,
       int(opa.ld), opb.data, int(opb.ld), gemm_beta, acc, int(ldacc));
  if (vector) scale_rows(s, a.scalars.type, a.c, C, acc, ldacc, m, n, buf);

  const EpilogueOps& ops = a.ops;
  char* bias_base = static_cast<char*>(a.bias);
  int64_t bias_offset = batch * a.bias_stride;
  if (ops.bgrad_a || ops.bgrad_b) {
    int64_t count = ops.bgrad_a ? m : n;
    double* sums = buf.gradient.get<double>(size_t(count) + 1);
    operand_sums(ops.bgrad_a ? opa : opb, ops.bgrad_a, count, k, sums);
    store_sums<T>(sums, count, bias_base, a.bias_type, bias_offset, buf);
  }

  ColumnEpilogue<T> epilogue;
  epilogue.ops = ops;
  if (ops.bias) {
    T* bias = buf.bias.get<T>(size_t(m) + 1);
    load_line(a.bias, a.bias_type, bias_offset, m, bias);
    epilogue.bias = bias;
  }
  if (ops.uses_aux()) {
    int64_t element_bits = ops.relu_mask() ? 1 : int64_t(type_size(a.aux_type)) * 8;
    epilogue.aux = static_cast<char*>(a.aux) + batch * a.aux_stride * element_bits / 8;
    epilogue.aux_type = a.aux_type;
    epilogue.aux_ld = a.aux_ld;
    epilogue.line = buf.line.get<T>(size_t(m) + 1);
  }
  if (ops.bgrad) {
    epilogue.bias_gradient = buf.gradient.get<double>(size_t(m) + 1);
    std::fill(epilogue.bias_gradient, epilogue.bias_gradient + m, 0.0);
  }
  bool any_epilogue =
      ops.bias || ops.aux_out || ops.relu || ops.gelu || ops.drelu || ops.dgelu || ops.bgrad;
  if (direct && !any_epilogue) return;
  constexpr int64_t block = 16; // columns per row-major store
  for (int64_t j0 = 0; j0 < n; j0 += block) {
    int64_t width = std::min(block, n - j0);
    for (int64_t j = j0; j < j0 + width; ++j) {
      T* column = acc + j * ldacc;
      if (any_epilogue) epilogue.apply(column, m, j);
      if (!direct && !a.d.row_major) store_line(column, m, D, a.d.type, j * a.d.ld);
    }
    if (a.d.row_major) store_row_major_block(acc, ldacc, m, j0, width, a.d, D);
  }
  if (ops.bgrad) store_sums<T>(epilogue.bias_gradient, m, bias_base, a.bias_type, bias_offset, buf);
}

} // namespace

void run_matmul(const MatmulArgs& args) {
  if (args.emulation_bits) *args.emulation_bits = -1;
  if (args.m == 0 || args.n == 0) return;
  Buffers& buf = buffers();
  for (int64_t b = 0; b < args.batch; ++b) {
    if (args.double_precision)
      run_batch<double>(args, b, buf);
    else
      run_batch<float>(args, b, buf);
  }
}

} // namespace mimic::cublaslt::cpu
