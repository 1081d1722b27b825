// The batched solvers for S, D, C, Z: getrf (with and without pivoting), getrs (each
// transpose), getri, matinv, trsmBatched and gelsBatched, checked through residuals
// against the original matrices in double precision.
#include "blas_test.h"

cublasHandle_t handle;
Rng rng;
const int n = 7, lda = 9, batch = 3, nrhs = 4;

// Pointers to each matrix of a batch stored back to back.
template <typename T> struct Batch {
  Device<T> data;
  std::vector<T*> host_ptrs;
  Device<T*> ptrs;
  Batch(const std::vector<T>& v, size_t stride)
      : data(v), host_ptrs(make(data.ptr, stride)), ptrs(host_ptrs) {}
  static std::vector<T*> make(T* base, size_t stride) {
    std::vector<T*> p;
    for (int b = 0; b < batch; ++b)
      p.push_back(base + b * stride);
    return p;
  }
};

template <typename T> std::vector<T> diagonally_dominant(size_t stride) {
  auto A = rng.values<T>(stride * batch);
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < n; ++i)
      A[b * stride + i + i * lda] = from_ref<T>(to_ref(A[b * stride + i + i * lda]) + R(n, 0));
  return A;
}

// max |A_b X_b - I| (or - B) over the batch, as a check.
template <typename T>
void check_product(const std::vector<T>& A, const std::vector<T>& X, int ldx, int cols,
                   const std::vector<T>* B, cublasOperation_t op, const char* what) {
  std::vector<R> got, want;
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < cols; ++j)
      for (int i = 0; i < n; ++i) {
        R s = 0;
        for (int p = 0; p < n; ++p) {
          R aip = op == CUBLAS_OP_N
                      ? to_ref(A[b * lda * n + i + p * lda])
                      : conj_if(to_ref(A[b * lda * n + p + i * lda]), op == CUBLAS_OP_C);
          s += aip * to_ref(X[b * size_t(ldx) * cols + p + j * ldx]);
        }
        got.push_back(s);
        want.push_back(B ? to_ref((*B)[b * size_t(ldx) * cols + i + j * ldx]) : R(i == j ? 1 : 0));
      }
  std::vector<T> got_t(got.size());
  for (size_t i = 0; i < got.size(); ++i)
    got_t[i] = from_ref<T>(got[i]);
  check_close(got_t, want, tolerance<T>(8 * n), "%s%s", type_name<T>(), what);
}

template <typename T> void test_lu() {
  const size_t stride = size_t(lda) * n;
  for (int pivoting = 0; pivoting < 2; ++pivoting) {
    auto A = diagonally_dominant<T>(stride);
    Batch<T> lu(A, stride);
    Device<int> pivots(std::vector<int>(n * batch)), info(std::vector<int>(batch, -1));
    BLAS_OK(pick<T>(cublasSgetrfBatched, cublasDgetrfBatched, cublasCgetrfBatched,
                    cublasZgetrfBatched)(handle, n, lu.ptrs.ptr, lda,
                                         pivoting ? pivots.ptr : nullptr, info.ptr, batch));
    for (int v : info.get())
      tally.check(v == 0, "%sgetrfBatched info %d", type_name<T>(), v);
    for (auto op : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) {
      auto Bv = rng.values<T>(size_t(lda) * nrhs * batch);
      Batch<T> rhs(Bv, size_t(lda) * nrhs);
      int host_info = -1;
      std::vector<const T*> factors(lu.host_ptrs.begin(), lu.host_ptrs.end());
      Device<const T*> dfactors(factors);
      BLAS_OK(pick<T>(cublasSgetrsBatched, cublasDgetrsBatched, cublasCgetrsBatched,
                      cublasZgetrsBatched)(handle, op, n, nrhs, dfactors.ptr, lda,
                                           pivoting ? pivots.ptr : nullptr, rhs.ptrs.ptr, lda,
                                           &host_info, batch));
      tally.check(host_info == 0, "getrs info %d", host_info);
      check_product(A, rhs.data.get(), lda, nrhs, &Bv, op,
                    pivoting ? "getrsBatched" : "getrsBatched (no pivoting)");
    }
    // getri: the inverse from the factors.
    std::vector<const T*> factors(lu.host_ptrs.begin(), lu.host_ptrs.end());
    Device<const T*> dfactors(factors);
    Batch<T> inv(std::vector<T>(stride * batch), stride);
    BLAS_OK(pick<T>(cublasSgetriBatched, cublasDgetriBatched, cublasCgetriBatched,
                    cublasZgetriBatched)(handle, n, dfactors.ptr, lda,
                                         pivoting ? pivots.ptr : nullptr, inv.ptrs.ptr, lda,
                                         info.ptr, batch));
    check_product<T>(A, inv.data.get(), lda, n, nullptr, CUBLAS_OP_N, "getriBatched");
  }
  // A singular matrix: info names the zero pivot.
  std::vector<T> S(stride * batch);
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < n - 1; ++i)
      S[b * stride + i + i * lda] = from_ref<T>(1);
  Batch<T> s(S, stride);
  Device<int> pivots{std::vector<int>(n * batch)}, info{std::vector<int>(batch)};
  BLAS_OK(pick<T>(cublasSgetrfBatched, cublasDgetrfBatched, cublasCgetrfBatched,
                  cublasZgetrfBatched)(handle, n, s.ptrs.ptr, lda, pivots.ptr, info.ptr, batch));
  for (int v : info.get())
    tally.check(v == n, "%sgetrfBatched singular: info %d, want %d", type_name<T>(), v, n);
}

template <typename T> void test_matinv() {
  const size_t stride = size_t(lda) * n;
  auto A = diagonally_dominant<T>(stride);
  Batch<T> a(A, stride), inv(std::vector<T>(stride * batch), stride);
  std::vector<const T*> in(a.host_ptrs.begin(), a.host_ptrs.end());
  Device<const T*> din(in);
  Device<int> info(std::vector<int>(batch, -1));
  BLAS_OK(
      pick<T>(cublasSmatinvBatched, cublasDmatinvBatched, cublasCmatinvBatched,
              cublasZmatinvBatched)(handle, n, din.ptr, lda, inv.ptrs.ptr, lda, info.ptr, batch));
  for (int v : info.get())
    tally.check(v == 0, "matinv info %d", v);
  check_product<T>(A, inv.data.get(), lda, n, nullptr, CUBLAS_OP_N, "matinvBatched");
}

template <typename T> void test_trsm_batched() {
  const size_t stride = size_t(lda) * n;
  auto A = diagonally_dominant<T>(stride);
  // Make A upper triangular so the check can use it whole.
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = j + 1; i < n; ++i)
        A[b * stride + i + j * lda] = from_ref<T>(0);
  auto Bv = rng.values<T>(size_t(lda) * nrhs * batch);
  Batch<T> a(A, stride), rhs(Bv, size_t(lda) * nrhs);
  std::vector<const T*> in(a.host_ptrs.begin(), a.host_ptrs.end());
  Device<const T*> din(in);
  T one = from_ref<T>(1);
  BLAS_OK(pick<T>(cublasStrsmBatched, cublasDtrsmBatched, cublasCtrsmBatched, cublasZtrsmBatched)(
      handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, nrhs,
      &one, din.ptr, lda, rhs.ptrs.ptr, lda, batch));
  check_product(A, rhs.data.get(), lda, nrhs, &Bv, CUBLAS_OP_N, "trsmBatched");
}

template <typename T> void test_gels() {
  const int m = 12, cols = 5, ldm = 13;
  auto A = rng.values<T>(size_t(ldm) * cols * batch), C = rng.values<T>(size_t(ldm) * 2 * batch);
  Batch<T> a(A, size_t(ldm) * cols), c(C, size_t(ldm) * 2);
  int info = -1;
  Device<int> dev_info(std::vector<int>(batch, -1));
  BLAS_OK(pick<T>(cublasSgelsBatched, cublasDgelsBatched, cublasCgelsBatched,
                  cublasZgelsBatched)(handle, CUBLAS_OP_N, m, cols, 2, a.ptrs.ptr, ldm, c.ptrs.ptr,
                                      ldm, &info, dev_info.ptr, batch));
  tally.check(info == 0, "gels info %d", info);
  for (int v : dev_info.get())
    tally.check(v == 0, "gels devInfo %d", v);
  // The least-squares solution makes the residual orthogonal to A's columns: A^H (A x - c) = 0.
  auto X = c.data.get();
  std::vector<R> normal;
  for (int b = 0; b < batch; ++b)
    for (int r = 0; r < 2; ++r)
      for (int j = 0; j < cols; ++j) {
        R s = 0;
        for (int i = 0; i < m; ++i) {
          R ax = 0;
          for (int p = 0; p < cols; ++p)
            ax += to_ref(A[b * ldm * cols + i + p * ldm]) * to_ref(X[b * ldm * 2 + p + r * ldm]);
          s += std::conj(to_ref(A[b * ldm * cols + i + j * ldm])) *
               (ax - to_ref(C[b * ldm * 2 + i + r * ldm]));
        }
        normal.push_back(s);
      }
  std::vector<T> got(normal.size());
  for (size_t i = 0; i < got.size(); ++i)
    got[i] = from_ref<T>(normal[i]);
  check_close(got, std::vector<R>(normal.size()), tolerance<T>(16 * m),
              "%sgelsBatched normal equations", type_name<T>());
  // Unsupported: a transposed system, and m < n.
  tally.status(pick<T>(cublasSgelsBatched, cublasDgelsBatched, cublasCgelsBatched,
                       cublasZgelsBatched)(handle, CUBLAS_OP_T, m, cols, 2, a.ptrs.ptr, ldm,
                                           c.ptrs.ptr, ldm, &info, dev_info.ptr, batch),
               CUBLAS_STATUS_INVALID_VALUE, "gelsBatched trans T");
  tally.check(info == -2, "gelsBatched trans T: info %d, want -2", info);
}

template <typename T> void all() {
  test_lu<T>();
  test_matinv<T>();
  test_trsm_batched<T>();
  test_gels<T>();
}

int main() {
  BLAS_OK(cublasCreate(&handle));
  all<float>();
  all<double>();
  all<cuComplex>();
  all<cuDoubleComplex>();
  BLAS_OK(cublasDestroy(handle));
  return tally.finish("cublas_solvers");
}
