// link: -lcublasLt
// cublasLtMatmul for every type combination Mimic computes (f32, f16, bf16 inputs with f32
// accumulation, f16 compute, f64), both transposes, column- and row-major A, B and C/D,
// strided and pointer-array batches, alpha/beta with C != D and in place, C broadcast by a
// leading dimension of 0, every pointer mode, no algorithm, a non-blocking stream, sizes
// beyond the epilogue's column blocks and k = 0; against double-precision references.
#include "lt_case.h"

struct Types {
  cublasComputeType_t compute;
  cudaDataType_t scale, ab, cd;
};

const Types types[] = {
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_PEDANTIC, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_FAST_16BF, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_32F},
    {CUBLAS_COMPUTE_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F},
    {CUBLAS_COMPUTE_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F},
};

int main() {
  cublasLtHandle_t handle;
  LT_CHECK(cublasLtCreate(&handle));
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T};

  // Every type combination with both transposes, every order of A, B and C/D, one and
  // three batches, C != D and C == D.
  for (const Types& t : types)
    for (cublasOperation_t ta : ops)
      for (cublasOperation_t tb : ops)
        for (int order = 0; order < 8; ++order)
          for (int batch : {1, 3}) {
            MatmulCase c;
            c.compute = t.compute, c.scale = t.scale, c.ab = t.ab, c.cd = t.cd;
            c.ta = ta, c.tb = tb, c.batch = batch;
            c.row_a = order & 1, c.row_b = order & 2, c.row_cd = order & 4;
            c.alpha = batch == 1 ? 1 : 0.75;
            c.beta = batch == 1 ? 0 : -1.25;
            c.separate_c = (order + batch) % 2 == 0;
            run_case(handle, c);
          }

  // CUBLAS_OP_C is the transpose for real types.
  {
    MatmulCase c;
    c.ta = CUBLAS_OP_C, c.tb = CUBLAS_OP_C, c.beta = 0.5;
    run_case(handle, c);
  }
  // C broadcast over the columns (leading dimension 0).
  for (cudaDataType_t cd : {CUDA_R_32F, CUDA_R_16F}) {
    MatmulCase c;
    c.cd = cd, c.ab = cd, c.c_broadcast = true, c.beta = 1, c.batch = 2;
    run_case(handle, c);
  }
  // Pointer modes: device scalars, alpha (and beta) vectors.
  for (cublasLtPointerMode_t mode :
       {CUBLASLT_POINTER_MODE_DEVICE, CUBLASLT_POINTER_MODE_DEVICE_VECTOR,
        CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO,
        CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST})
    for (int batch : {1, 2}) {
      MatmulCase c;
      c.pointer_mode = mode, c.alpha = 1.5, c.beta = -0.5, c.batch = batch;
      run_case(handle, c);
      c.ab = c.cd = CUDA_R_16BF, c.epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
      run_case(handle, c);
    }
  // Pointer-array batches.
  for (const Types& t : types) {
    MatmulCase c;
    c.compute = t.compute, c.scale = t.scale, c.ab = t.ab, c.cd = t.cd;
    c.pointer_arrays = true, c.batch = 3, c.beta = 0.5, c.ta = CUBLAS_OP_T;
    run_case(handle, c);
  }
  // No algorithm (cuBLASLt picks one), a non-blocking stream, larger sizes, k = 0.
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (bool row : {false, true}) {
    MatmulCase c;
    c.use_heuristic = false, c.stream = stream;
    c.m = 130, c.n = 67, c.k = 129, c.beta = 2, c.row_cd = row, c.row_a = row;
    c.ab = c.cd = CUDA_R_16F;
    run_case(handle, c);
    c.ab = c.cd = CUDA_R_32F, c.tb = CUBLAS_OP_T, c.batch = 2;
    run_case(handle, c);
  }
  {
    MatmulCase c;
    c.k = 0, c.beta = 1.5;
    run_case(handle, c);
    c.beta = 0;
    run_case(handle, c);
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  LT_CHECK(cublasLtDestroy(handle));
  return tally.finish("cublaslt_matmul");
}
