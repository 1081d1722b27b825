// cublasLtMatrixTransform on the host: C = alpha op(A) + beta op(B), element by element in
// f64, between f16/bf16/f32/f64 matrices in column- or row-major order.
#include "libs/cublaslt/cpu/cpu_ops.h"
#include "libs/cublaslt/cpu/storage.h"
#include "libs/cublaslt/matmul_check.h"

#include <vector>

namespace mimic::cublaslt::cpu {
namespace {

// Element (row, col) of op(M) for an operand laid out as `arg`.
int64_t index_of(const MatrixArg& arg, bool trans, int64_t row, int64_t col) {
  int64_t r = trans ? col : row, c = trans ? row : col;
  return arg.row_major ? r * arg.ld + c : r + c * arg.ld;
}

const void* batch_data(const MatrixArg& arg, int64_t batch) {
  if (!arg.data) return nullptr;
  return static_cast<const char*>(arg.data) +
         batch * arg.batch_stride * int64_t(type_size(arg.type));
}

} // namespace

void run_transform(const TransformArgs& t) {
  double alpha = t.scalars.alpha, beta = t.scalars.beta;
  if (t.scalars.mode == CUBLASLT_POINTER_MODE_DEVICE) {
    alpha = t.scalars.alpha_ptr ? read_scalar(t.scalars.alpha_ptr, t.scalars.type) : 0;
    beta = t.scalars.beta_ptr ? read_scalar(t.scalars.beta_ptr, t.scalars.type) : 0;
  }
  std::vector<double> column(size_t(t.rows));
  for (int64_t batch = 0; batch < t.batch; ++batch) {
    const void* A = batch_data(t.a, batch);
    const void* B = batch_data(t.b, batch);
    void* C = const_cast<void*>(batch_data(t.c, batch));
    for (int64_t j = 0; j < t.cols; ++j) {
      for (int64_t i = 0; i < t.rows; ++i) {
        double v = 0;
        if (A) v += alpha * load_element<double>(A, t.a.type, index_of(t.a, t.trans_a, i, j));
        if (B) v += beta * load_element<double>(B, t.b.type, index_of(t.b, t.trans_b, i, j));
        column[size_t(i)] = v;
      }
      with_storage(t.c.type, [&](auto tag) {
        using S = Storage<decltype(tag)>;
        auto* out = static_cast<typename S::Raw*>(C);
        for (int64_t i = 0; i < t.rows; ++i)
          out[index_of(t.c, false, i, j)] = S::template store<double>(column[size_t(i)]);
      });
    }
  }
}

} // namespace mimic::cublaslt::cpu
