// Level 3 and its extensions for S, D, C, Z against double-precision references: gemm (every
// transpose pair, _64, device pointer mode), gemm3m, symm/hemm, syrk/herk, syr2k/her2k,
// syrkx/herkx, trmm, trsm, geam, dgmm, and the batched and strided batched gemms.
#include "blas_test.h"

cublasHandle_t handle;
Rng rng;
const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};

// A symmetric (or Hermitian) matrix stored in the uplo triangle.
template <typename T>
R sym_at(const std::vector<T>& A, int lda, cublasFillMode_t uplo, bool herm, int i, int j) {
  bool stored = uplo == CUBLAS_FILL_MODE_UPPER ? i <= j : i >= j;
  if (i == j && herm) return R(to_ref(A[i + size_t(j) * lda]).real(), 0);
  return stored ? to_ref(A[i + size_t(j) * lda]) : conj_if(to_ref(A[j + size_t(i) * lda]), herm);
}

template <typename T>
R tri_at(const std::vector<T>& A, int lda, cublasFillMode_t uplo, cublasDiagType_t diag, int i,
         int j) {
  if (i == j && diag == CUBLAS_DIAG_UNIT) return 1;
  bool stored = uplo == CUBLAS_FILL_MODE_UPPER ? i <= j : i >= j;
  return stored ? to_ref(A[i + size_t(j) * lda]) : 0;
}

template <typename T> void test_gemm() {
  const int m = 37, n = 19, k = 23, ld = 41;
  for (auto ta : ops)
    for (auto tb : ops) {
      auto A = rng.values<T>(size_t(ld) * 41), B = rng.values<T>(size_t(ld) * 41),
           C = rng.values<T>(size_t(ld) * n);
      T alpha = rng.value<T>(), beta = rng.value<T>();
      Device<T> dA(A), dB(B), dC(C);
      BLAS_OK(pick<T>(cublasSgemm, cublasDgemm, cublasCgemm, cublasZgemm)(
          handle, ta, tb, m, n, k, &alpha, dA.ptr, ld, dB.ptr, ld, &beta, dC.ptr, ld));
      std::vector<R> want = refs(C);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          R s = 0;
          for (int p = 0; p < k; ++p)
            s += op_at(A, ld, ta, i, p) * op_at(B, ld, tb, p, j);
          want[i + j * ld] = to_ref(alpha) * s + to_ref(beta) * to_ref(C[i + j * ld]);
        }
      check_close(dC.get(), want, tolerance<T>(k), "%sgemm %d%d", type_name<T>(), ta, tb);
    }
}

// The _64 entry point and device pointer mode (scalars read when the work runs).
template <typename T> void test_gemm_64_device_scalars() {
  const int m = 8, n = 9, k = 10;
  auto A = rng.values<T>(m * k), B = rng.values<T>(k * n), C = rng.values<T>(m * n);
  std::vector<T> scalars = {rng.value<T>(), rng.value<T>()};
  Device<T> dA(A), dB(B), dC(C), dS(scalars);
  BLAS_OK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE));
  BLAS_OK(pick<T>(cublasSgemm_64, cublasDgemm_64, cublasCgemm_64, cublasZgemm_64)(
      handle, CUBLAS_OP_N, CUBLAS_OP_N, int64_t(m), int64_t(n), int64_t(k), dS.ptr, dA.ptr,
      int64_t(m), dB.ptr, int64_t(k), dS.ptr + 1, dC.ptr, int64_t(m)));
  BLAS_OK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  std::vector<R> want(m * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      R s = 0;
      for (int p = 0; p < k; ++p)
        s += to_ref(A[i + p * m]) * to_ref(B[p + j * k]);
      want[i + j * m] = to_ref(scalars[0]) * s + to_ref(scalars[1]) * to_ref(C[i + j * m]);
    }
  check_close(dC.get(), want, tolerance<T>(k), "%sgemm_64 device scalars", type_name<T>());
}

template <typename T> void test_gemm3m() {
  const int m = 12, n = 13, k = 14;
  auto A = rng.values<T>(m * k), B = rng.values<T>(n * k), C = rng.values<T>(m * n);
  T alpha = rng.value<T>(), beta = rng.value<T>();
  Device<T> dA(A), dB(B), dC(C);
  if constexpr (std::is_same_v<T, cuComplex>)
    BLAS_OK(cublasCgemm3m(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, dA.ptr, m, dB.ptr, n,
                          &beta, dC.ptr, m));
  else
    BLAS_OK(cublasZgemm3m(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, dA.ptr, m, dB.ptr, n,
                          &beta, dC.ptr, m));
  std::vector<R> want(m * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      R s = 0;
      for (int p = 0; p < k; ++p)
        s += to_ref(A[i + p * m]) * to_ref(B[j + p * n]);
      want[i + j * m] = to_ref(alpha) * s + to_ref(beta) * to_ref(C[i + j * m]);
    }
  check_close(dC.get(), want, tolerance<T>(k), "%sgemm3m", type_name<T>());
}

template <typename T> void test_symm(bool herm) {
  const int m = 11, n = 7, ld = 13;
  for (auto side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
    for (auto uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) {
      int ka = side == CUBLAS_SIDE_LEFT ? m : n;
      auto A = rng.values<T>(ld * ka), B = rng.values<T>(ld * n), C = rng.values<T>(ld * n);
      T alpha = rng.value<T>(), beta = rng.value<T>();
      Device<T> dA(A), dB(B), dC(C);
      if (herm) {
        if constexpr (is_complex_v<T>)
          BLAS_OK(pick<T>(0, 0, cublasChemm, cublasZhemm)(handle, side, uplo, m, n, &alpha, dA.ptr,
                                                          ld, dB.ptr, ld, &beta, dC.ptr, ld));
      } else {
        BLAS_OK(pick<T>(cublasSsymm, cublasDsymm, cublasCsymm, cublasZsymm)(
            handle, side, uplo, m, n, &alpha, dA.ptr, ld, dB.ptr, ld, &beta, dC.ptr, ld));
      }
      std::vector<R> want = refs(C);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          R s = 0;
          if (side == CUBLAS_SIDE_LEFT)
            for (int p = 0; p < m; ++p)
              s += sym_at(A, ld, uplo, herm, i, p) * to_ref(B[p + j * ld]);
          else
            for (int p = 0; p < n; ++p)
              s += to_ref(B[i + p * ld]) * sym_at(A, ld, uplo, herm, p, j);
          want[i + j * ld] = to_ref(alpha) * s + to_ref(beta) * to_ref(C[i + j * ld]);
        }
      check_close(dC.get(), want, tolerance<T>(m), "%s%s side %d uplo %d", type_name<T>(),
                  herm ? "hemm" : "symm", side, uplo);
    }
}

// syrk/herk (kind 0), syr2k/her2k (1), syrkx/herkx (2).
template <typename T> void test_rank_k(int kind, bool herm) {
  const int n = 10, k = 6, ld = 12;
  using Real =
      std::conditional_t<std::is_same_v<T, cuComplex>, float,
                         std::conditional_t<std::is_same_v<T, cuDoubleComplex>, double, T>>;
  const char* names[2][3] = {{"syrk", "syr2k", "syrkx"}, {"herk", "her2k", "herkx"}};
  for (auto uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
    for (auto trans : {CUBLAS_OP_N, herm ? CUBLAS_OP_C : CUBLAS_OP_T}) {
      auto A = rng.values<T>(ld * 12), B = rng.values<T>(ld * 12), C = rng.values<T>(ld * n);
      T alpha = rng.value<T>();
      Real alpha_real = Real(rng.uniform()), beta_real = Real(rng.uniform());
      T beta = herm ? from_ref<T>(R(beta_real, 0)) : rng.value<T>();
      Device<T> dA(A), dB(B), dC(C);
      cublasStatus_t s = CUBLAS_STATUS_NOT_SUPPORTED;
      if constexpr (is_complex_v<T>) {
        if (herm && kind == 0)
          s = pick<T>(0, 0, cublasCherk, cublasZherk)(handle, uplo, trans, n, k, &alpha_real,
                                                      dA.ptr, ld, &beta_real, dC.ptr, ld);
        if (herm && kind == 1)
          s = pick<T>(0, 0, cublasCher2k, cublasZher2k)(handle, uplo, trans, n, k, &alpha, dA.ptr,
                                                        ld, dB.ptr, ld, &beta_real, dC.ptr, ld);
        if (herm && kind == 2)
          s = pick<T>(0, 0, cublasCherkx, cublasZherkx)(handle, uplo, trans, n, k, &alpha, dA.ptr,
                                                        ld, dB.ptr, ld, &beta_real, dC.ptr, ld);
      }
      if (!herm && kind == 0)
        s = pick<T>(cublasSsyrk, cublasDsyrk, cublasCsyrk,
                    cublasZsyrk)(handle, uplo, trans, n, k, &alpha, dA.ptr, ld, &beta, dC.ptr, ld);
      if (!herm && kind == 1)
        s = pick<T>(cublasSsyr2k, cublasDsyr2k, cublasCsyr2k, cublasZsyr2k)(
            handle, uplo, trans, n, k, &alpha, dA.ptr, ld, dB.ptr, ld, &beta, dC.ptr, ld);
      if (!herm && kind == 2)
        s = pick<T>(cublasSsyrkx, cublasDsyrkx, cublasCsyrkx, cublasZsyrkx)(
            handle, uplo, trans, n, k, &alpha, dA.ptr, ld, dB.ptr, ld, &beta, dC.ptr, ld);
      tally.status(s, CUBLAS_STATUS_SUCCESS, names[herm][kind]);
      R a = herm && kind == 0 ? R(alpha_real, 0) : to_ref(alpha);
      cublasOperation_t second = herm ? CUBLAS_OP_C : CUBLAS_OP_T;
      auto opa = [&](const std::vector<T>& M, int i, int p) {
        return trans == CUBLAS_OP_N ? to_ref(M[i + p * ld]) : op_at(M, ld, trans, i, p);
      };
      auto opb_t = [&](const std::vector<T>& M, int p, int j) { // (op(M)^T or ^H)(p, j)
        return conj_if(opa(M, j, p), second == CUBLAS_OP_C);
      };
      std::vector<R> want = refs(C);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          bool stored = uplo == CUBLAS_FILL_MODE_UPPER ? i <= j : i >= j;
          if (!stored) continue;
          R s2 = 0;
          for (int p = 0; p < k; ++p) {
            if (kind == 0) s2 += a * opa(A, i, p) * opb_t(A, p, j);
            if (kind == 1)
              s2 += a * opa(A, i, p) * opb_t(B, p, j) +
                    conj_if(a, herm) * opa(B, i, p) * opb_t(A, p, j);
            if (kind == 2) s2 += a * opa(A, i, p) * opb_t(B, p, j);
          }
          R c = to_ref(C[i + j * ld]);
          want[i + j * ld] = s2 + to_ref(beta) * c;
          if (herm && i == j) want[i + j * ld] = R(want[i + j * ld].real(), 0);
        }
      check_close(dC.get(), want, tolerance<T>(2 * k), "%s%s uplo %d trans %d", type_name<T>(),
                  names[herm][kind], uplo, trans);
    }
}

template <typename T> void test_triangular_mm(bool solve) {
  const int m = 9, n = 8, ld = 10;
  for (auto side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
    for (auto uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
      for (auto trans : ops)
        for (auto diag : {CUBLAS_DIAG_NON_UNIT, CUBLAS_DIAG_UNIT}) {
          int ka = side == CUBLAS_SIDE_LEFT ? m : n;
          auto A = rng.values<T>(ld * ka);
          for (int i = 0; i < ka; ++i)
            A[i + i * ld] = from_ref<T>(to_ref(A[i + i * ld]) + R(4, 0)); // well conditioned
          auto B = rng.values<T>(ld * n), C = rng.values<T>(ld * n);
          T alpha = rng.value<T>();
          Device<T> dA(A), dB(B), dC(C);
          auto opA = [&](int i, int j) {
            return trans == CUBLAS_OP_N
                       ? tri_at(A, ld, uplo, diag, i, j)
                       : conj_if(tri_at(A, ld, uplo, diag, j, i), trans == CUBLAS_OP_C);
          };
          std::vector<R> want = refs(solve ? B : C);
          if (!solve) {
            BLAS_OK(pick<T>(cublasStrmm, cublasDtrmm, cublasCtrmm, cublasZtrmm)(
                handle, side, uplo, trans, diag, m, n, &alpha, dA.ptr, ld, dB.ptr, ld, dC.ptr, ld));
            for (int j = 0; j < n; ++j)
              for (int i = 0; i < m; ++i) {
                R s = 0;
                if (side == CUBLAS_SIDE_LEFT)
                  for (int p = 0; p < m; ++p)
                    s += opA(i, p) * to_ref(B[p + j * ld]);
                else
                  for (int p = 0; p < n; ++p)
                    s += to_ref(B[i + p * ld]) * opA(p, j);
                want[i + j * ld] = to_ref(alpha) * s;
              }
            check_close(dC.get(), want, tolerance<T>(m), "%strmm %d%d%d%d", type_name<T>(), side,
                        uplo, trans, diag);
            continue;
          }
          BLAS_OK(pick<T>(cublasStrsm, cublasDtrsm, cublasCtrsm, cublasZtrsm)(
              handle, side, uplo, trans, diag, m, n, &alpha, dA.ptr, ld, dB.ptr, ld));
          // Check op(A) X = alpha B (or X op(A) = alpha B) with the computed X.
          auto X = dB.get();
          std::vector<R> product(want.size());
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
              R s = 0;
              if (side == CUBLAS_SIDE_LEFT)
                for (int p = 0; p < m; ++p)
                  s += opA(i, p) * to_ref(X[p + j * ld]);
              else
                for (int p = 0; p < n; ++p)
                  s += to_ref(X[i + p * ld]) * opA(p, j);
              product[i + j * ld] = s;
              want[i + j * ld] = to_ref(alpha) * to_ref(B[i + j * ld]);
            }
          for (int j = 0; j < n; ++j)
            for (int i = m; i < ld; ++i)
              product[i + j * ld] = want[i + j * ld] = 0;
          std::vector<T> got(product.size());
          for (size_t i = 0; i < got.size(); ++i)
            got[i] = from_ref<T>(product[i]);
          check_close(got, want, tolerance<T>(4 * m), "%strsm %d%d%d%d", type_name<T>(), side, uplo,
                      trans, diag);
        }
}

template <typename T> void test_geam_dgmm() {
  const int m = 13, n = 9, ld = 15;
  for (auto ta : ops)
    for (auto tb : ops) {
      auto A = rng.values<T>(ld * 15), B = rng.values<T>(ld * 15);
      T alpha = rng.value<T>(), beta = rng.value<T>();
      Device<T> dA(A), dB(B), dC(size_t(ld * n));
      BLAS_OK(pick<T>(cublasSgeam, cublasDgeam, cublasCgeam, cublasZgeam)(
          handle, ta, tb, m, n, &alpha, dA.ptr, ld, &beta, dB.ptr, ld, dC.ptr, ld));
      std::vector<R> want(ld * n);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i)
          want[i + j * ld] =
              to_ref(alpha) * op_at(A, ld, ta, i, j) + to_ref(beta) * op_at(B, ld, tb, i, j);
      check_close(dC.get(), want, tolerance<T>(2), "%sgeam %d%d", type_name<T>(), ta, tb);
    }
  for (auto side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
    for (int incx : {1, 2, -1}) {
      int len = side == CUBLAS_SIDE_LEFT ? m : n;
      auto A = rng.values<T>(ld * n), x = rng.values<T>(size_t(len) * std::abs(incx));
      Device<T> dA(A), dx(x), dC(size_t(ld * n));
      BLAS_OK(pick<T>(cublasSdgmm, cublasDdgmm, cublasCdgmm,
                      cublasZdgmm)(handle, side, m, n, dA.ptr, ld, dx.ptr, incx, dC.ptr, ld));
      std::vector<R> want(ld * n);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i)
          want[i + j * ld] = to_ref(A[i + j * ld]) *
                             to_ref(x[strided(side == CUBLAS_SIDE_LEFT ? i : j, len, incx)]);
      check_close(dC.get(), want, tolerance<T>(1), "%sdgmm side %d incx %d", type_name<T>(), side,
                  incx);
    }
}

template <typename T> void test_batched() {
  const int m = 6, n = 5, k = 7, batch = 3;
  auto A = rng.values<T>(m * k * batch), B = rng.values<T>(k * n * batch),
       C = rng.values<T>(m * n * batch);
  T alpha = rng.value<T>(), beta = rng.value<T>();
  std::vector<R> want(C.size());
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        R s = 0;
        for (int p = 0; p < k; ++p)
          s += to_ref(A[b * m * k + p + i * k]) * to_ref(B[b * k * n + p + j * k]);
        want[b * m * n + i + j * m] =
            to_ref(alpha) * s + to_ref(beta) * to_ref(C[b * m * n + i + j * m]);
      }
  Device<T> dA(A), dB(B), dC(C), dC2(C);
  // Strided: op(A) = A^T with A stored k x m.
  auto strided_fn = [&](auto f) {
    return f(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, dA.ptr, k, (long long)(m * k),
             dB.ptr, k, (long long)(k * n), &beta, dC.ptr, m, (long long)(m * n), batch);
  };
  if constexpr (std::is_same_v<T, __half>)
    BLAS_OK(strided_fn(cublasHgemmStridedBatched));
  else
    BLAS_OK(strided_fn(pick<T>(cublasSgemmStridedBatched, cublasDgemmStridedBatched,
                               cublasCgemmStridedBatched, cublasZgemmStridedBatched)));
  check_close(dC.get(), want, tolerance<T>(k), "%sgemmStridedBatched", type_name<T>());
  std::vector<const T*> a_ptrs, b_ptrs;
  std::vector<T*> c_ptrs;
  for (int b = 0; b < batch; ++b) {
    a_ptrs.push_back(dA.ptr + b * m * k), b_ptrs.push_back(dB.ptr + b * k * n),
        c_ptrs.push_back(dC2.ptr + b * m * n);
  }
  Device<const T*> da(a_ptrs), db(b_ptrs);
  Device<T*> dc(c_ptrs);
  auto batched_fn = [&](auto f) {
    return f(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da.ptr, k, db.ptr, k, &beta, dc.ptr,
             m, batch);
  };
  if constexpr (std::is_same_v<T, __half>)
    BLAS_OK(batched_fn(cublasHgemmBatched));
  else
    BLAS_OK(batched_fn(
        pick<T>(cublasSgemmBatched, cublasDgemmBatched, cublasCgemmBatched, cublasZgemmBatched)));
  check_close(dC2.get(), want, tolerance<T>(k), "%sgemmBatched", type_name<T>());
}

template <typename T> void all_types() {
  test_gemm<T>();
  test_gemm_64_device_scalars<T>();
  test_symm<T>(false);
  for (int kind = 0; kind < 3; ++kind)
    test_rank_k<T>(kind, false);
  test_triangular_mm<T>(false);
  test_triangular_mm<T>(true);
  test_geam_dgmm<T>();
  test_batched<T>();
  if constexpr (is_complex_v<T>) {
    test_gemm3m<T>();
    test_symm<T>(true);
    for (int kind = 0; kind < 3; ++kind)
      test_rank_k<T>(kind, true);
  }
}

int main() {
  BLAS_OK(cublasCreate(&handle));
  all_types<float>();
  all_types<double>();
  all_types<cuComplex>();
  all_types<cuDoubleComplex>();
  test_batched<__half>();
  {
    // Hgemm: f16 in and out.
    const int m = 5, n = 4, k = 6;
    auto A = rng.values<__half>(m * k), B = rng.values<__half>(k * n),
         C = rng.values<__half>(m * n);
    __half alpha = __float2half(0.75f), beta = __float2half(-0.5f);
    Device<__half> dA(A), dB(B), dC(C);
    BLAS_OK(cublasHgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA.ptr, m, dB.ptr, k,
                        &beta, dC.ptr, m));
    std::vector<R> want(m * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        R s = 0;
        for (int p = 0; p < k; ++p)
          s += to_ref(A[i + p * m]) * to_ref(B[p + j * k]);
        want[i + j * m] = 0.75 * s - 0.5 * to_ref(C[i + j * m]);
      }
    check_close(dC.get(), want, tolerance<__half>(k), "Hgemm");
  }
  BLAS_OK(cublasDestroy(handle));
  return tally.finish("cublas_level3");
}
