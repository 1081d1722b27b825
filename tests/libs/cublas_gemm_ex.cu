// cublasGemmEx, cublasGemmBatchedEx and cublasGemmStridedBatchedEx for every data/compute
// type combination cuBLAS documents (f16, bf16, int8, f32, f64, complex int8/f32/f64),
// cublasSgemmEx, and NOT_SUPPORTED for a combination outside the table.
#include "blas_test.h"

#include <cuda_bf16.h>

cublasHandle_t handle;
Rng rng;

struct Combo {
  cublasComputeType_t compute;
  cudaDataType_t scale, ab, c;
};

const Combo combos[] = {
    {CUBLAS_COMPUTE_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F},
    {CUBLAS_COMPUTE_16F_PEDANTIC, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F},
    {CUBLAS_COMPUTE_32I, CUDA_R_32I, CUDA_R_8I, CUDA_R_32I},
    {CUBLAS_COMPUTE_32I_PEDANTIC, CUDA_R_32I, CUDA_R_8I, CUDA_R_32I},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8I, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_PEDANTIC, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_C_32F, CUDA_C_8I, CUDA_C_32F},
    {CUBLAS_COMPUTE_32F, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F},
    {CUBLAS_COMPUTE_32F_FAST_16F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_FAST_16F, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F},
    {CUBLAS_COMPUTE_32F_FAST_16BF, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_FAST_16BF, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F},
    {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F},
    {CUBLAS_COMPUTE_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F},
    {CUBLAS_COMPUTE_64F, CUDA_C_64F, CUDA_C_64F, CUDA_C_64F},
    {CUBLAS_COMPUTE_64F_PEDANTIC, CUDA_C_64F, CUDA_C_64F, CUDA_C_64F},
};

size_t type_size(cudaDataType_t t) {
  switch (t) {
  case CUDA_R_8I:
    return 1;
  case CUDA_R_16F:
  case CUDA_R_16BF:
  case CUDA_C_8I:
    return 2;
  case CUDA_R_32F:
  case CUDA_R_32I:
    return 4;
  case CUDA_R_64F:
  case CUDA_C_32F:
    return 8;
  default:
    return 16;
  }
}

// Element i of a buffer of type t, and storing a value (rounded as the type does).
R load(const std::vector<unsigned char>& buf, cudaDataType_t t, size_t i) {
  const unsigned char* p = buf.data() + i * type_size(t);
  switch (t) {
  case CUDA_R_8I:
    return double(*reinterpret_cast<const int8_t*>(p));
  case CUDA_C_8I:
    return R(reinterpret_cast<const int8_t*>(p)[0], reinterpret_cast<const int8_t*>(p)[1]);
  case CUDA_R_16F:
    return __half2float(*reinterpret_cast<const __half*>(p));
  case CUDA_R_16BF:
    return __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(p));
  case CUDA_R_32F:
    return *reinterpret_cast<const float*>(p);
  case CUDA_R_32I:
    return double(*reinterpret_cast<const int32_t*>(p));
  case CUDA_R_64F:
    return *reinterpret_cast<const double*>(p);
  case CUDA_C_32F:
    return R(reinterpret_cast<const float*>(p)[0], reinterpret_cast<const float*>(p)[1]);
  default:
    return R(reinterpret_cast<const double*>(p)[0], reinterpret_cast<const double*>(p)[1]);
  }
}

void store(std::vector<unsigned char>& buf, cudaDataType_t t, size_t i, R v) {
  unsigned char* p = buf.data() + i * type_size(t);
  switch (t) {
  case CUDA_R_8I:
    *reinterpret_cast<int8_t*>(p) = int8_t(std::lround(v.real()));
    break;
  case CUDA_C_8I:
    p[0] = uint8_t(int8_t(std::lround(v.real()))), p[1] = uint8_t(int8_t(std::lround(v.imag())));
    break;
  case CUDA_R_16F:
    *reinterpret_cast<__half*>(p) = __float2half(float(v.real()));
    break;
  case CUDA_R_16BF:
    *reinterpret_cast<__nv_bfloat16*>(p) = __float2bfloat16(float(v.real()));
    break;
  case CUDA_R_32F:
    *reinterpret_cast<float*>(p) = float(v.real());
    break;
  case CUDA_R_32I:
    *reinterpret_cast<int32_t*>(p) = int32_t(std::lround(v.real()));
    break;
  case CUDA_R_64F:
    *reinterpret_cast<double*>(p) = v.real();
    break;
  case CUDA_C_32F:
    reinterpret_cast<float*>(p)[0] = float(v.real()),
    reinterpret_cast<float*>(p)[1] = float(v.imag());
    break;
  default:
    reinterpret_cast<double*>(p)[0] = v.real(), reinterpret_cast<double*>(p)[1] = v.imag();
  }
}

bool is_int(cudaDataType_t t) {
  return t == CUDA_R_8I || t == CUDA_C_8I || t == CUDA_R_32I;
}
bool is_cplx(cudaDataType_t t) {
  return t == CUDA_C_8I || t == CUDA_C_32F || t == CUDA_C_64F;
}

std::vector<unsigned char> random_buffer(cudaDataType_t t, size_t n) {
  std::vector<unsigned char> buf(n * type_size(t));
  for (size_t i = 0; i < n; ++i) {
    R v = is_int(t) ? R(std::floor(rng.uniform() * 16), std::floor(rng.uniform() * 16))
                    : R(rng.uniform(), rng.uniform());
    store(buf, t, i, is_cplx(t) ? v : R(v.real(), 0));
  }
  return buf;
}

// The accuracy of a result stored as t, computed from k products.
double result_tolerance(cudaDataType_t c, cublasComputeType_t compute, int k) {
  if (c == CUDA_R_32I) return 0;
  if (c == CUDA_R_16BF) return 8e-3;
  if (c == CUDA_R_16F) return 2e-3;
  if (c == CUDA_R_64F || c == CUDA_C_64F) return 1e-14 * (k + 4);
  return 4e-7 * (k + 4);
}

void test_combo(const Combo& t, int variant) {
  const int m = 13, n = 11, k = 17, batch = variant == 0 ? 1 : 3;
  const int lda = k + 2, ldb = k + 1, ldc = m + 3; // A is k x m (op T), B is k x n
  const size_t a_size = size_t(lda) * m, b_size = size_t(ldb) * n, c_size = size_t(ldc) * n;
  auto A = random_buffer(t.ab, a_size * batch), B = random_buffer(t.ab, b_size * batch),
       C = random_buffer(t.c, c_size * batch);
  std::vector<unsigned char> alpha(16), beta(16);
  store(alpha, t.scale, 0, is_int(t.scale) ? R(2) : R(0.75, is_cplx(t.scale) ? -0.5 : 0));
  store(beta, t.scale, 0, is_int(t.scale) ? R(-3) : R(-0.5, is_cplx(t.scale) ? 0.25 : 0));
  R a = load(alpha, t.scale, 0), b = load(beta, t.scale, 0);
  std::vector<R> want(c_size * batch);
  for (int p = 0; p < batch; ++p)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        R s = 0;
        for (int q = 0; q < k; ++q)
          s += load(A, t.ab, p * a_size + q + i * lda) * load(B, t.ab, p * b_size + q + j * ldb);
        size_t at = p * c_size + i + j * ldc;
        want[at] = a * s + b * load(C, t.c, at);
      }
  for (size_t at = 0; at < want.size(); ++at)
    if (at % c_size % ldc >= size_t(m)) want[at] = load(C, t.c, at); // rows past m stay
  Device<unsigned char> dA(A), dB(B), dC(C);
  cublasStatus_t s;
  if (variant == 0) {
    s = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, alpha.data(), dA.ptr, t.ab, lda,
                     dB.ptr, t.ab, ldb, beta.data(), dC.ptr, t.c, ldc, t.compute,
                     CUBLAS_GEMM_DEFAULT);
  } else if (variant == 1) {
    s = cublasGemmStridedBatchedEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, alpha.data(), dA.ptr,
                                   t.ab, lda, (long long)a_size, dB.ptr, t.ab, ldb,
                                   (long long)b_size, beta.data(), dC.ptr, t.c, ldc,
                                   (long long)c_size, batch, t.compute, CUBLAS_GEMM_DEFAULT);
  } else {
    std::vector<const void*> ap, bp;
    std::vector<void*> cp;
    for (int p = 0; p < batch; ++p) {
      ap.push_back(dA.ptr + p * a_size * type_size(t.ab));
      bp.push_back(dB.ptr + p * b_size * type_size(t.ab));
      cp.push_back(dC.ptr + p * c_size * type_size(t.c));
    }
    Device<const void*> da(ap), db(bp);
    Device<void*> dc(cp);
    s = cublasGemmBatchedEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, alpha.data(), da.ptr, t.ab,
                            lda, db.ptr, t.ab, ldb, beta.data(), dc.ptr, t.c, ldc, batch, t.compute,
                            CUBLAS_GEMM_DEFAULT);
    CUDA_OK(cudaDeviceSynchronize());
  }
  const char* names[] = {"GemmEx", "GemmStridedBatchedEx", "GemmBatchedEx"};
  tally.check(s == CUBLAS_STATUS_SUCCESS, "%s compute %d types %d->%d: status %d", names[variant],
              t.compute, t.ab, t.c, s);
  auto out = dC.get();
  std::vector<R> got(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    got[i] = load(out, t.c, i);
  check_close(got, want, result_tolerance(t.c, t.compute, k), "%s compute %d types %d->%d",
              names[variant], t.compute, t.ab, t.c);
}

int main() {
  BLAS_OK(cublasCreate(&handle));
  for (const Combo& c : combos)
    for (int variant = 0; variant < 3; ++variant)
      test_combo(c, variant);

  // A combination outside cuBLAS's table.
  Device<float> d(64);
  float one = 1;
  tally.status(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, d.ptr, CUDA_R_16F, 2,
                            d.ptr, CUDA_R_32F, 2, &one, d.ptr, CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT),
               CUBLAS_STATUS_NOT_SUPPORTED, "GemmEx f16 x f32");
  tally.status(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, d.ptr, CUDA_R_64F, 2,
                            d.ptr, CUDA_R_64F, 2, &one, d.ptr, CUDA_R_64F, 2, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT),
               CUBLAS_STATUS_NOT_SUPPORTED, "GemmEx f64 with 32F compute");

  // cublasSgemmEx: f16 in, f32 out, f32 scalars.
  {
    const int m = 6, n = 5, k = 7;
    auto A = random_buffer(CUDA_R_16F, m * k), B = random_buffer(CUDA_R_16F, k * n),
         C = random_buffer(CUDA_R_32F, m * n);
    float alpha = 1.5f, beta = 0.5f;
    Device<unsigned char> dA(A), dB(B), dC(C);
    BLAS_OK(cublasSgemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA.ptr, CUDA_R_16F, m,
                          dB.ptr, CUDA_R_16F, k, &beta, dC.ptr, CUDA_R_32F, m));
    std::vector<R> want(m * n), got(m * n);
    auto out = dC.get();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        R s = 0;
        for (int q = 0; q < k; ++q)
          s += load(A, CUDA_R_16F, i + q * m) * load(B, CUDA_R_16F, q + j * k);
        want[i + j * m] = 1.5 * s + 0.5 * load(C, CUDA_R_32F, i + j * m);
        got[i + j * m] = load(out, CUDA_R_32F, i + j * m);
      }
    check_close(got, want, 1e-5, "SgemmEx f16 -> f32");
  }
  BLAS_OK(cublasDestroy(handle));
  return tally.finish("cublas_gemm_ex");
}
