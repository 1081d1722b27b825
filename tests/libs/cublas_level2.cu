// Level 2 for S, D, C, Z against double-precision references: gemv, gbmv, ger/geru/gerc,
// symv/hemv, sbmv/hbmv, spmv/hpmv, syr/her, syr2/her2, spr/hpr, spr2/hpr2, and the
// triangular trmv/tbmv/tpmv/trsv/tbsv/tpsv, each storage form turned into a dense matrix.
#include "blas_test.h"

#include <functional>

cublasHandle_t handle;
Rng rng;
const int n = 11, ld = 13, kband = 3;
const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
const cublasFillMode_t uplos[] = {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER};

using Dense = std::function<R(int, int)>;

template <typename T>
using RealOf =
    std::conditional_t<std::is_same_v<T, cuComplex>, float,
                       std::conditional_t<std::is_same_v<T, cuDoubleComplex>, double, T>>;

bool in_triangle(cublasFillMode_t uplo, int i, int j) {
  return uplo == CUBLAS_FILL_MODE_UPPER ? i <= j : i >= j;
}

// Where element (i, j) of the uplo triangle lives in each storage form.
long full_index(int i, int j) {
  return i + long(j) * ld;
}
long band_index(cublasFillMode_t uplo, int i, int j) { // symmetric/triangular band, k = kband
  return uplo == CUBLAS_FILL_MODE_UPPER ? kband + i - j + long(j) * ld : i - j + long(j) * ld;
}
bool in_band(cublasFillMode_t uplo, int i, int j) {
  return in_triangle(uplo, i, j) && std::abs(i - j) <= kband;
}
long packed_index(cublasFillMode_t uplo, int i, int j) {
  return uplo == CUBLAS_FILL_MODE_UPPER ? i + long(j) * (j + 1) / 2
                                        : i + long(j) * (2 * n - j - 1) / 2;
}

// The dense symmetric/Hermitian matrix a storage describes.
template <typename T>
Dense symmetric(const std::vector<T>& A, cublasFillMode_t uplo, bool herm, int form) {
  return [=, &A](int i, int j) -> R {
    bool swap = !in_triangle(uplo, i, j);
    int r = swap ? j : i, c = swap ? i : j;
    if (form == 1 && !in_band(uplo, r, c)) return 0;
    long at = form == 0   ? full_index(r, c)
              : form == 1 ? band_index(uplo, r, c)
                          : packed_index(uplo, r, c);
    R v = to_ref(A[at]);
    if (herm && r == c) v = R(v.real(), 0);
    return swap ? conj_if(v, herm) : v;
  };
}

template <typename T>
Dense triangular(const std::vector<T>& A, cublasFillMode_t uplo, cublasDiagType_t diag, int form) {
  return [=, &A](int i, int j) -> R {
    if (i == j && diag == CUBLAS_DIAG_UNIT) return 1;
    if (!in_triangle(uplo, i, j) || (form == 1 && !in_band(uplo, i, j))) return 0;
    return to_ref(A[form == 0   ? full_index(i, j)
                    : form == 1 ? band_index(uplo, i, j)
                                : packed_index(uplo, i, j)]);
  };
}

Dense transposed(Dense M, cublasOperation_t op) {
  if (op == CUBLAS_OP_N) return M;
  return [=](int i, int j) { return conj_if(M(j, i), op == CUBLAS_OP_C); };
}

// y = alpha M x + beta y over strided vectors.
template <typename T>
std::vector<R> mv_ref(Dense M, int rows, int cols, R alpha, const std::vector<T>& x, int incx,
                      R beta, const std::vector<T>& y, int incy) {
  std::vector<R> want = refs(y);
  for (int i = 0; i < rows; ++i) {
    R s = 0;
    for (int j = 0; j < cols; ++j)
      s += M(i, j) * to_ref(x[strided(j, cols, incx)]);
    R& yi = want[strided(i, rows, incy)];
    yi = alpha * s + beta * yi;
  }
  return want;
}

template <typename T> void test_gemv_gbmv() {
  const int m = 9, kl = 2, ku = 3;
  for (auto trans : ops)
    for (int incx : {1, -2}) {
      auto A = rng.values<T>(ld * n);
      int rows = trans == CUBLAS_OP_N ? m : n, cols = trans == CUBLAS_OP_N ? n : m;
      auto x = rng.values<T>(size_t(cols) * std::abs(incx)), y = rng.values<T>(size_t(rows) * 2);
      T alpha = rng.value<T>(), beta = rng.value<T>();
      Device<T> dA(A), dx(x), dy(y);
      BLAS_OK(pick<T>(cublasSgemv, cublasDgemv, cublasCgemv, cublasZgemv)(
          handle, trans, m, n, &alpha, dA.ptr, ld, dx.ptr, incx, &beta, dy.ptr, 2));
      Dense full = [&](int i, int j) { return to_ref(A[i + j * ld]); };
      check_close(
          dy.get(),
          mv_ref(transposed(full, trans), rows, cols, to_ref(alpha), x, incx, to_ref(beta), y, 2),
          tolerance<T>(n), "%sgemv trans %d incx %d", type_name<T>(), trans, incx);
      Device<T> dy2(y);
      BLAS_OK(pick<T>(cublasSgbmv, cublasDgbmv, cublasCgbmv, cublasZgbmv)(
          handle, trans, m, n, kl, ku, &alpha, dA.ptr, ld, dx.ptr, incx, &beta, dy2.ptr, 2));
      Dense band = [&](int i, int j) -> R {
        return i - j > kl || j - i > ku ? R(0) : to_ref(A[ku + i - j + j * ld]);
      };
      check_close(
          dy2.get(),
          mv_ref(transposed(band, trans), rows, cols, to_ref(alpha), x, incx, to_ref(beta), y, 2),
          tolerance<T>(n), "%sgbmv trans %d incx %d", type_name<T>(), trans, incx);
    }
}

template <typename T> void test_ger() {
  const int m = 9;
  for (int conj = 0; conj < (is_complex_v<T> ? 2 : 1); ++conj) {
    auto A = rng.values<T>(ld * n), x = rng.values<T>(m), y = rng.values<T>(n * 2);
    T alpha = rng.value<T>();
    Device<T> dA(A), dx(x), dy(y);
    if (conj) {
      if constexpr (is_complex_v<T>)
        BLAS_OK(pick<T>(0, 0, cublasCgerc, cublasZgerc)(handle, m, n, &alpha, dx.ptr, 1, dy.ptr, -2,
                                                        dA.ptr, ld));
    } else {
      BLAS_OK(pick<T>(cublasSger, cublasDger, cublasCgeru,
                      cublasZgeru)(handle, m, n, &alpha, dx.ptr, 1, dy.ptr, -2, dA.ptr, ld));
    }
    auto want = refs(A);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        want[i + j * ld] +=
            to_ref(alpha) * to_ref(x[i]) * conj_if(to_ref(y[strided(j, n, -2)]), conj);
    check_close(dA.get(), want, tolerance<T>(2), "%sger%s", type_name<T>(), conj ? "c" : "");
  }
}

// symv/hemv (form 0), sbmv/hbmv (1), spmv/hpmv (2).
template <typename T> void test_symmetric_mv(bool herm) {
  for (int form = 0; form < 3; ++form)
    for (auto uplo : uplos) {
      auto A = rng.values<T>(ld * n), x = rng.values<T>(n * 3), y = rng.values<T>(n);
      T alpha = rng.value<T>(), beta = rng.value<T>();
      Device<T> dA(A), dx(x), dy(y);
      cublasStatus_t s = CUBLAS_STATUS_NOT_SUPPORTED;
      if (herm) {
        if constexpr (is_complex_v<T>) {
          if (form == 0)
            s = pick<T>(0, 0, cublasChemv, cublasZhemv)(handle, uplo, n, &alpha, dA.ptr, ld, dx.ptr,
                                                        3, &beta, dy.ptr, 1);
          if (form == 1)
            s = pick<T>(0, 0, cublasChbmv, cublasZhbmv)(handle, uplo, n, kband, &alpha, dA.ptr, ld,
                                                        dx.ptr, 3, &beta, dy.ptr, 1);
          if (form == 2)
            s = pick<T>(0, 0, cublasChpmv, cublasZhpmv)(handle, uplo, n, &alpha, dA.ptr, dx.ptr, 3,
                                                        &beta, dy.ptr, 1);
        }
      } else if (form == 0) {
        s = pick<T>(cublasSsymv, cublasDsymv, cublasCsymv,
                    cublasZsymv)(handle, uplo, n, &alpha, dA.ptr, ld, dx.ptr, 3, &beta, dy.ptr, 1);
      } else if constexpr (!is_complex_v<T>) {
        if (form == 1)
          s = pick<T>(cublasSsbmv, cublasDsbmv, 0, 0)(handle, uplo, n, kband, &alpha, dA.ptr, ld,
                                                      dx.ptr, 3, &beta, dy.ptr, 1);
        if (form == 2)
          s = pick<T>(cublasSspmv, cublasDspmv, 0, 0)(handle, uplo, n, &alpha, dA.ptr, dx.ptr, 3,
                                                      &beta, dy.ptr, 1);
      } else {
        continue; // no complex symmetric banded or packed forms
      }
      tally.status(s, CUBLAS_STATUS_SUCCESS, "symmetric mv");
      check_close(
          dy.get(),
          mv_ref(symmetric(A, uplo, herm, form), n, n, to_ref(alpha), x, 3, to_ref(beta), y, 1),
          tolerance<T>(n), "%s %s form %d uplo %d", type_name<T>(), herm ? "hemv" : "symv", form,
          uplo);
    }
}

// syr/her, syr2/her2 (full, form 0) and spr/hpr, spr2/hpr2 (packed, form 2).
template <typename T> void test_symmetric_update(bool herm, bool rank2) {
  for (int form : {0, 2})
    for (auto uplo : uplos) {
      if (form == 2 && is_complex_v<T> && !herm) continue; // no complex symmetric packed updates
      auto A = rng.values<T>(ld * n), x = rng.values<T>(n), y = rng.values<T>(n * 2);
      T alpha = rng.value<T>();
      RealOf<T> alpha_real = RealOf<T>(rng.uniform());
      Device<T> dA(A), dx(x), dy(y);
      cublasStatus_t s = CUBLAS_STATUS_NOT_SUPPORTED;
      if (herm) {
        if constexpr (is_complex_v<T>) {
          if (form == 0 && !rank2)
            s = pick<T>(0, 0, cublasCher, cublasZher)(handle, uplo, n, &alpha_real, dx.ptr, 1,
                                                      dA.ptr, ld);
          if (form == 0 && rank2)
            s = pick<T>(0, 0, cublasCher2, cublasZher2)(handle, uplo, n, &alpha, dx.ptr, 1, dy.ptr,
                                                        2, dA.ptr, ld);
          if (form == 2 && !rank2)
            s = pick<T>(0, 0, cublasChpr, cublasZhpr)(handle, uplo, n, &alpha_real, dx.ptr, 1,
                                                      dA.ptr);
          if (form == 2 && rank2)
            s = pick<T>(0, 0, cublasChpr2, cublasZhpr2)(handle, uplo, n, &alpha, dx.ptr, 1, dy.ptr,
                                                        2, dA.ptr);
        }
      } else {
        if (form == 0 && !rank2)
          s = pick<T>(cublasSsyr, cublasDsyr, cublasCsyr, cublasZsyr)(handle, uplo, n, &alpha,
                                                                      dx.ptr, 1, dA.ptr, ld);
        if (form == 0 && rank2)
          s = pick<T>(cublasSsyr2, cublasDsyr2, cublasCsyr2,
                      cublasZsyr2)(handle, uplo, n, &alpha, dx.ptr, 1, dy.ptr, 2, dA.ptr, ld);
        if constexpr (!is_complex_v<T>) {
          if (form == 2 && !rank2)
            s = pick<T>(cublasSspr, cublasDspr, 0, 0)(handle, uplo, n, &alpha, dx.ptr, 1, dA.ptr);
          if (form == 2 && rank2)
            s = pick<T>(cublasSspr2, cublasDspr2, 0, 0)(handle, uplo, n, &alpha, dx.ptr, 1, dy.ptr,
                                                        2, dA.ptr);
        }
      }
      tally.status(s, CUBLAS_STATUS_SUCCESS, "symmetric update");
      R a = herm && !rank2 ? R(alpha_real, 0) : to_ref(alpha);
      auto want = refs(A);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          if (!in_triangle(uplo, i, j)) continue;
          R xi = to_ref(x[i]), xj = to_ref(x[j]), yi = to_ref(y[2 * i]), yj = to_ref(y[2 * j]);
          R update = rank2 ? a * xi * conj_if(yj, herm) + conj_if(a, herm) * yi * conj_if(xj, herm)
                           : a * xi * conj_if(xj, herm);
          long at = form == 0 ? full_index(i, j) : packed_index(uplo, i, j);
          want[at] += update;
          if (herm && i == j) want[at] = R(want[at].real(), 0);
        }
      check_close(dA.get(), want, tolerance<T>(4), "%s %s%s form %d uplo %d", type_name<T>(),
                  herm ? "her" : "syr", rank2 ? "2" : "", form, uplo);
    }
}

// trmv/trsv (form 0), tbmv/tbsv (1), tpmv/tpsv (2).
template <typename T> void test_triangular(bool solve) {
  for (int form = 0; form < 3; ++form)
    for (auto uplo : uplos)
      for (auto trans : ops)
        for (auto diag : {CUBLAS_DIAG_NON_UNIT, CUBLAS_DIAG_UNIT}) {
          auto A = rng.values<T>(ld * n);
          // Strong diagonals keep the solves well conditioned.
          for (int i = 0; i < n; ++i) {
            long at = form == 0   ? full_index(i, i)
                      : form == 1 ? band_index(uplo, i, i)
                                  : packed_index(uplo, i, i);
            A[at] = from_ref<T>(to_ref(A[at]) + R(4, 0));
          }
          auto x = rng.values<T>(n * 2);
          Device<T> dA(A), dx(x);
          auto f = [&](auto trmv, auto tbmv, auto tpmv) {
            if (form == 0) return trmv(handle, uplo, trans, diag, n, dA.ptr, ld, dx.ptr, -2);
            if (form == 1) return tbmv(handle, uplo, trans, diag, n, kband, dA.ptr, ld, dx.ptr, -2);
            return tpmv(handle, uplo, trans, diag, n, dA.ptr, dx.ptr, -2);
          };
          if (solve)
            BLAS_OK(f(pick<T>(cublasStrsv, cublasDtrsv, cublasCtrsv, cublasZtrsv),
                      pick<T>(cublasStbsv, cublasDtbsv, cublasCtbsv, cublasZtbsv),
                      pick<T>(cublasStpsv, cublasDtpsv, cublasCtpsv, cublasZtpsv)));
          else
            BLAS_OK(f(pick<T>(cublasStrmv, cublasDtrmv, cublasCtrmv, cublasZtrmv),
                      pick<T>(cublasStbmv, cublasDtbmv, cublasCtbmv, cublasZtbmv),
                      pick<T>(cublasStpmv, cublasDtpmv, cublasCtpmv, cublasZtpmv)));
          Dense M = transposed(triangular(A, uplo, diag, form), trans);
          auto got = dx.get();
          std::vector<T> zeros(x.size());
          // trmv: got = M x. trsv: M got = x, checked as M got against x.
          auto product = mv_ref(M, n, n, 1, solve ? got : x, -2, 0, zeros, -2);
          std::vector<R> want = refs(solve ? x : got);
          for (size_t i = 1; i < x.size(); i += 2)
            product[i] = want[i] = 0; // the gaps of the stride
          std::vector<T> lhs(product.size());
          for (size_t i = 0; i < lhs.size(); ++i)
            lhs[i] = from_ref<T>(product[i]);
          check_close(lhs, want, tolerance<T>(4 * n), "%s%s form %d uplo %d trans %d diag %d",
                      type_name<T>(), solve ? "trsv" : "trmv", form, uplo, trans, diag);
        }
}

template <typename T> void all() {
  test_gemv_gbmv<T>();
  test_ger<T>();
  test_symmetric_mv<T>(false);
  test_symmetric_update<T>(false, false);
  test_symmetric_update<T>(false, true);
  test_triangular<T>(false);
  test_triangular<T>(true);
  if constexpr (is_complex_v<T>) {
    test_symmetric_mv<T>(true);
    test_symmetric_update<T>(true, false);
    test_symmetric_update<T>(true, true);
  }
}

int main() {
  BLAS_OK(cublasCreate(&handle));
  all<float>();
  all<double>();
  all<cuComplex>();
  all<cuDoubleComplex>();
  BLAS_OK(cublasDestroy(handle));
  return tally.finish("cublas_level2");
}
