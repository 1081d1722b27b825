// What a cuBLAS backend computes. The API layer (api_*.h) checks handles and arguments and
// describes each call as one of these operations; a backend runs it in the order of the
// handle's stream. The CPU backend (cpu/) computes on the host with OpenBLAS; a GPU
// backend (rocBLAS through HIP, issue 8) implements the same interface.
#pragma once

#include "libs/common/stream_order.h"

#include <cublas_api.h>

#include <cstdint>
#include <cstring>
#include <memory>

namespace mimic::cublas {

// alpha, beta and friends. In host pointer mode the value is copied when the call is
// made; in device pointer mode only the address is kept, and the value is read when the
// work runs (a kernel before it may write it).
struct Scalar {
  const void* device = nullptr;
  alignas(16) unsigned char value[16] = {};

  static Scalar from(const void* pointer, size_t size, bool device_mode) {
    Scalar s;
    if (device_mode)
      s.device = pointer;
    else if (pointer)
      std::memcpy(s.value, pointer, size);
    return s;
  }
  template <typename T> T get() const {
    T v;
    std::memcpy(&v, device ? device : value, sizeof(T));
    return v;
  }
};

// Bytes per element of the data types cuBLAS computes with; 0 for others.
inline size_t data_type_size(cudaDataType_t type) {
  switch (type) {
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
  case CUDA_C_64F:
    return 16;
  default:
    return 0;
  }
}

enum class Level1Op { Amax, Amin, Asum, Axpy, Copy, Dotu, Dotc, Nrm2, Rot, Rotm, Scal, Swap };

struct Level1Args {
  Level1Op op;
  cudaDataType_t type;        // of x and y
  cudaDataType_t scalar_type; // of alpha (scal, axpy) and s (rot); c is always real
  int64_t n = 0;
  void* x = nullptr;
  int64_t incx = 1;
  void* y = nullptr;
  int64_t incy = 1;
  Scalar alpha, c, s;
  const void* param = nullptr; // rotm's five values, read when the work runs
  void* result = nullptr;      // amax/amin (int or int64_t), asum, nrm2, dot
  bool result_64 = false;      // amax/amin write an int64_t
  bool result_on_host = false; // the call returns once the result is written
};

// rotg (a, b -> c, s) and rotmg (d1, d2, x1, y1 -> param): pointers read and written when
// the work runs.
struct RotgArgs {
  bool modified; // rotmg
  cudaDataType_t type;
  void* a;
  void* b;
  void* c;
  void* s;
  void* param; // rotmg: d1 a, d2 b, x1 c, y1 s
  bool on_host;
};

enum class Level2Op {
  Gemv,
  Gbmv,
  Ger,
  Gerc,
  Symv,
  Hemv,
  Sbmv,
  Hbmv,
  Spmv,
  Hpmv,
  Syr,
  Her,
  Syr2,
  Her2,
  Spr,
  Hpr,
  Spr2,
  Hpr2,
  Trmv,
  Tbmv,
  Tpmv,
  Trsv,
  Tbsv,
  Tpsv
};

struct Level2Args {
  Level2Op op;
  cudaDataType_t type;
  cublasFillMode_t uplo = CUBLAS_FILL_MODE_LOWER;
  cublasOperation_t trans = CUBLAS_OP_N;
  cublasDiagType_t diag = CUBLAS_DIAG_NON_UNIT;
  int64_t m = 0, n = 0, kl = 0, ku = 0; // ku is k for the banded symmetric/triangular ones
  Scalar alpha, beta;                   // real for her/hpr/her2's beta-less forms: see op
  void* A = nullptr;                    // packed forms: AP
  int64_t lda = 0;
  void* x = nullptr;
  int64_t incx = 1;
  void* y = nullptr;
  int64_t incy = 1;
};

enum class Level3Op {
  Gemm,
  Symm,
  Hemm,
  Syrk,
  Herk,
  Syr2k,
  Her2k,
  Syrkx,
  Herkx,
  Trmm,
  Trsm,
  Geam,
  Dgmm
};

struct Level3Args {
  Level3Op op;
  cudaDataType_t type;
  cublasSideMode_t side = CUBLAS_SIDE_LEFT;
  cublasFillMode_t uplo = CUBLAS_FILL_MODE_LOWER;
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  cublasDiagType_t diag = CUBLAS_DIAG_NON_UNIT;
  int64_t m = 0, n = 0, k = 0;
  Scalar alpha, beta; // herk/her2k/herkx: beta real; herk: alpha real
  const void* A = nullptr;
  int64_t lda = 0;
  const void* B = nullptr; // dgmm: the vector x, with stride ldb
  int64_t ldb = 0;
  void* C = nullptr;
  int64_t ldc = 0;
  // trsm batched (batch >= 0): A, B are arrays of `batch` matrix pointers, read when the
  // work runs.
  int64_t batch = -1;
};

// GemmEx and every gemm of a batch: C_i = alpha op(A_i) op(B_i) + beta C_i.
struct GemmArgs {
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  int64_t m = 0, n = 0, k = 0;
  Scalar alpha, beta;
  cudaDataType_t scale_type;
  cublasComputeType_t compute;
  const void* A = nullptr;
  cudaDataType_t a_type;
  int64_t lda = 0, stride_a = 0;
  const void* B = nullptr;
  cudaDataType_t b_type;
  int64_t ldb = 0, stride_b = 0;
  void* C = nullptr;
  cudaDataType_t c_type;
  int64_t ldc = 0, stride_c = 0;
  int64_t batch = 1;
  bool pointer_arrays = false; // A, B, C are arrays of matrix pointers
};

enum class LuOp { Getrf, Getrs, Getri, Matinv };

// The batched LU family; A and B are arrays of `batch` matrix pointers.
struct LuBatchedArgs {
  LuOp op;
  cudaDataType_t type;
  cublasOperation_t trans = CUBLAS_OP_N; // getrs
  int64_t n = 0, nrhs = 0;
  void* A = nullptr; // getri/getrs: the factors; matinv: the matrices
  int64_t lda = 0;
  int* pivots = nullptr; // n per matrix; NULL: getrf without pivoting
  void* B = nullptr;     // getrs: right-hand sides; getri/matinv: the inverses
  int64_t ldb = 0;
  int* info = nullptr; // one per matrix (getrs: none)
  int64_t batch = 0;
};

// gelsBatched: least squares min |A_i X - C_i| by QR (m >= n, no transpose).
struct GelsBatchedArgs {
  cudaDataType_t type;
  int64_t m = 0, n = 0, nrhs = 0;
  void* A = nullptr;
  int64_t lda = 0;
  void* C = nullptr;
  int64_t ldc = 0;
  int* info = nullptr; // one per matrix; may be NULL
  int64_t batch = 0;
};

class BlasBackend {
public:
  virtual ~BlasBackend() = default;
  virtual cublasStatus_t level1(const libs::StreamTarget& target, const Level1Args& args) = 0;
  virtual cublasStatus_t rotg(const libs::StreamTarget& target, const RotgArgs& args) = 0;
  virtual cublasStatus_t level2(const libs::StreamTarget& target, const Level2Args& args) = 0;
  virtual cublasStatus_t level3(const libs::StreamTarget& target, const Level3Args& args) = 0;
  virtual cublasStatus_t gemm(const libs::StreamTarget& target, const GemmArgs& args) = 0;
  virtual cublasStatus_t lu_batched(const libs::StreamTarget& target,
                                    const LuBatchedArgs& args) = 0;
  virtual cublasStatus_t gels_batched(const libs::StreamTarget& target,
                                      const GelsBatchedArgs& args) = 0;
};

std::unique_ptr<BlasBackend> make_cpu_backend();

} // namespace mimic::cublas
