// The batched LU family (getrf, getrs, getri, matinv) and gels on OpenBLAS's LAPACK.
#include "libs/cublas/cpu/cpu_ops.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace mimic::cublas::cpu {
namespace {

template <typename T> void getrf(int n, T* A, int lda, int* pivots, int* info) {
  MIMIC_CBLAS(T, sgetrf_(&n, &n, A, &lda, pivots, info), dgetrf_(&n, &n, A, &lda, pivots, info),
              cgetrf_(&n, &n, A, &lda, pivots, info), zgetrf_(&n, &n, A, &lda, pivots, info));
}

// LU without row interchanges (getrfBatched with a NULL pivot array). info is the first
// zero pivot (1-based); the factorisation goes on past it, as LAPACK's does.
template <typename T> void getrf_unpivoted(int n, T* A, int lda, int* info) {
  *info = 0;
  for (int k = 0; k < n; ++k) {
    T pivot = A[k + k * lda];
    if (pivot == T{}) {
      if (!*info) *info = k + 1;
      continue;
    }
    for (int i = k + 1; i < n; ++i)
      A[i + k * lda] /= pivot;
    for (int j = k + 1; j < n; ++j)
      for (int i = k + 1; i < n; ++i)
        A[i + j * lda] -= A[i + k * lda] * A[k + j * lda];
  }
}

template <typename T> void getri(int n, T* A, int lda, const int* pivots, int* info) {
  int lwork = std::max(1, n * 64);
  std::vector<T> work(static_cast<size_t>(lwork));
  MIMIC_CBLAS(T, sgetri_(&n, A, &lda, pivots, work.data(), &lwork, info),
              dgetri_(&n, A, &lda, pivots, work.data(), &lwork, info),
              cgetri_(&n, A, &lda, pivots, work.data(), &lwork, info),
              zgetri_(&n, A, &lda, pivots, work.data(), &lwork, info));
}

template <typename T> void swap_rows(T* B, int ldb, int nrhs, int r1, int r2) {
  if (r1 != r2)
    for (int j = 0; j < nrhs; ++j)
      std::swap(B[r1 + j * ldb], B[r2 + j * ldb]);
}

// Solves op(A) X = B with A = P L U from getrf.
template <typename T>
void getrs(cublasOperation_t trans, int n, int nrhs, const T* LU, int lda, const int* pivots, T* B,
           int ldb) {
  const T one{1};
  if (trans == CUBLAS_OP_N) {
    for (int i = 0; pivots && i < n; ++i)
      swap_rows(B, ldb, nrhs, i, pivots[i] - 1);
    trsm<T>(CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, nrhs, one, LU, lda, B, ldb);
    trsm<T>(CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, nrhs, one, LU, lda, B, ldb);
    return;
  }
  CBLAS_TRANSPOSE t = cblas_op(trans);
  trsm<T>(CblasLeft, CblasUpper, t, CblasNonUnit, n, nrhs, one, LU, lda, B, ldb);
  trsm<T>(CblasLeft, CblasLower, t, CblasUnit, n, nrhs, one, LU, lda, B, ldb);
  for (int i = n - 1; pivots && i >= 0; --i)
    swap_rows(B, ldb, nrhs, i, pivots[i] - 1);
}

template <typename T> void copy_square(const T* from, int from_ld, T* to, int to_ld, int n) {
  for (int j = 0; j < n; ++j)
    std::copy(from + size_t(j) * from_ld, from + size_t(j) * from_ld + n, to + size_t(j) * to_ld);
}

template <typename T> void lu_batched(const LuBatchedArgs& a) {
  int n = int(a.n), lda = int(a.lda), ldb = int(a.ldb);
  std::vector<int> identity(static_cast<size_t>(n));
  std::iota(identity.begin(), identity.end(), 1);
  for (long long i = 0; i < a.batch; ++i) {
    int* pivots = a.pivots ? a.pivots + i * n : nullptr;
    switch (a.op) {
    case LuOp::Getrf:
      if (pivots)
        getrf(n, batch_matrix<T>(a.A, i), lda, pivots, &a.info[i]);
      else
        getrf_unpivoted(n, batch_matrix<T>(a.A, i), lda, &a.info[i]);
      break;
    case LuOp::Getrs:
      getrs(a.trans, n, int(a.nrhs), batch_matrix<const T>(a.A, i), lda, pivots,
            batch_matrix<T>(a.B, i), ldb);
      break;
    case LuOp::Getri: {
      T* inverse = batch_matrix<T>(a.B, i);
      copy_square(batch_matrix<const T>(a.A, i), lda, inverse, ldb, n);
      getri(n, inverse, ldb, pivots ? pivots : identity.data(), &a.info[i]);
      break;
    }
    case LuOp::Matinv: {
      T* inverse = batch_matrix<T>(a.B, i);
      copy_square(batch_matrix<const T>(a.A, i), lda, inverse, ldb, n);
      std::vector<int> own_pivots(static_cast<size_t>(std::max(n, 1)));
      getrf(n, inverse, ldb, own_pivots.data(), &a.info[i]);
      if (a.info[i] == 0) getri(n, inverse, ldb, own_pivots.data(), &a.info[i]);
      break;
    }
    }
  }
}

template <typename T> void gels(int m, int n, int nrhs, T* A, int lda, T* C, int ldc, int* info) {
  const char trans = 'N';
  T query{};
  int lwork = -1;
  MIMIC_CBLAS(T, sgels_(&trans, &m, &n, &nrhs, A, &lda, C, &ldc, &query, &lwork, info, 1),
              dgels_(&trans, &m, &n, &nrhs, A, &lda, C, &ldc, &query, &lwork, info, 1),
              cgels_(&trans, &m, &n, &nrhs, A, &lda, C, &ldc, &query, &lwork, info, 1),
              zgels_(&trans, &m, &n, &nrhs, A, &lda, C, &ldc, &query, &lwork, info, 1));
  lwork = std::max(1, int(std::real(query)));
  std::vector<T> work(static_cast<size_t>(lwork));
  MIMIC_CBLAS(T, sgels_(&trans, &m, &n, &nrhs, A, &lda, C, &ldc, work.data(), &lwork, info, 1),
              dgels_(&trans, &m, &n, &nrhs, A, &lda, C, &ldc, work.data(), &lwork, info, 1),
              cgels_(&trans, &m, &n, &nrhs, A, &lda, C, &ldc, work.data(), &lwork, info, 1),
              zgels_(&trans, &m, &n, &nrhs, A, &lda, C, &ldc, work.data(), &lwork, info, 1));
}

} // namespace

void run_lu_batched(const LuBatchedArgs& a) {
  with_type(a.type, [&](auto tag) { lu_batched<decltype(tag)>(a); });
}

void run_gels_batched(const GelsBatchedArgs& a) {
  with_type(a.type, [&](auto tag) {
    using T = decltype(tag);
    for (long long i = 0; i < a.batch; ++i) {
      int info = 0;
      gels<T>(int(a.m), int(a.n), int(a.nrhs), batch_matrix<T>(a.A, i), int(a.lda),
              batch_matrix<T>(a.C, i), int(a.ldc), &info);
      if (a.info) a.info[i] = info;
    }
  });
}

} // namespace mimic::cublas::cpu
