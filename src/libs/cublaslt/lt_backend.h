// What cuBLASLt's operations ask of a backend, as records checked and resolved by the API
// layer (matmul_check.cpp): every size, type, stride and pointer is known and valid; a
// backend only computes. The CPU backend (cpu/) runs them on the host with OpenBLAS; a
// hipBLASLt backend for AMD GPUs (issue 8) implements the same interface.
#pragma once

#include "libs/common/device.h"
#include "libs/common/stream_order.h"

#include <cublasLt.h>

#include <cstdint>

namespace mimic::cublaslt {

// One matrix operand as its layout describes it (before the operation's transpose).
struct MatrixArg {
  // The matrix; in pointer-array batch mode the device array of per-batch pointers.
  const void* data = nullptr;
  cudaDataType_t type = CUDA_R_32F;
  int64_t rows = 0, cols = 0;
  int64_t ld = 0; // between columns (COL order) or rows (ROW order); 0 broadcasts C
  bool row_major = false;
  int64_t batch_stride = 0; // elements
};

// A cublasLtEpilogue_t taken apart into the steps it applies, in this order.
struct EpilogueOps {
  bool bias = false;    // x += bias[row]
  bool aux_out = false; // GELU: store x in aux; ReLU: store the bit x > 0 in aux
  bool relu = false;    // x = x > 0 ? x : 0
  bool gelu = false;    // x = GELU(x), tanh approximation
  bool drelu = false;   // x = aux bit ? x : 0
  bool dgelu = false;   // x *= GELU'(aux)
  bool bgrad = false;   // bias[row] = sum over columns of the result
  bool bgrad_a = false; // bias[row] = sum over k of op(A)
  bool bgrad_b = false; // bias[col] = sum over k of op(B)

  bool uses_bias_pointer() const { return bias || bgrad || bgrad_a || bgrad_b; }
  bool uses_aux() const { return aux_out || drelu || dgelu; }
  bool relu_mask() const { return (aux_out && relu) || drelu; }
};

// alpha and beta: values read at the call (host pointer mode, and the host beta of
// ALPHA_DEVICE_VECTOR_BETA_HOST) or device pointers read when the work runs (device
// scalars, or vectors of one value per row of D).
struct Scalars {
  cudaDataType_t type = CUDA_R_32F; // the scale type
  cublasLtPointerMode_t mode = CUBLASLT_POINTER_MODE_HOST;
  double alpha = 1, beta = 0;
  const void* alpha_ptr = nullptr;
  const void* beta_ptr = nullptr;
  int64_t alpha_vector_stride = 0; // elements between the batches' alpha vectors

  bool alpha_vector() const { return mode >= CUBLASLT_POINTER_MODE_DEVICE_VECTOR; }
  bool beta_vector() const { return mode == CUBLASLT_POINTER_MODE_DEVICE_VECTOR; }
  bool beta_zero() const { return mode == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO; }
};

// D = epilogue(alpha op(A) op(B) + beta C) for each of `batch` problems.
struct MatmulArgs {
  bool double_precision = false; // compute in f64 (CUBLAS_COMPUTE_64F), else f32
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool pointer_arrays = false;
  MatrixArg a, b, c, d;
  Scalars scalars;
  EpilogueOps ops;
  void* bias = nullptr; // input (bias) or output (gradients)
  cudaDataType_t bias_type = CUDA_R_32F;
  int64_t bias_stride = 0;
  void* aux = nullptr; // input (drelu, dgelu) or output (aux_out)
  cudaDataType_t aux_type = CUDA_R_32F;
  int64_t aux_ld = 0, aux_stride = 0; // in bits for a ReLU mask
  // An emulation descriptor's CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER:
  // set to -1, since Mimic computes at full precision and never emulates.
  int32_t* emulation_bits = nullptr;
};

// C = alpha op(A) + beta op(B) for each of `batch` matrices (cublasLtMatrixTransform).
struct TransformArgs {
  bool trans_a = false, trans_b = false;
  int64_t rows = 0, cols = 0, batch = 1;
  MatrixArg a, b, c; // a.data / b.data NULL: that term is absent
  Scalars scalars;
};

class LtBackend {
public:
  virtual ~LtBackend() = default;
  // NOT_SUPPORTED (saying why) for a valid problem this backend cannot run.
  virtual cublasStatus_t supports(const MatmulArgs& args) = 0;
  virtual cublasStatus_t matmul(const libs::StreamTarget& target, const MatmulArgs& args) = 0;
  virtual cublasStatus_t transform(const libs::StreamTarget& target, const TransformArgs& args) = 0;
};

// The backend for devices of `kind`, or nullptr when there is none yet.
LtBackend* backend_for(libs::DeviceKind kind);
LtBackend& cpu_backend();

} // namespace mimic::cublaslt
