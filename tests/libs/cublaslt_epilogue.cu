// link: -lcublasLt
// Every epilogue PyTorch and llm.c use (bias, ReLU, GELU, their auxiliary outputs — the
// GELU input matrix, the ReLU bit-mask — the gradients DRELU/DGELU reading them back, the
// bias gradients of D, A and B) for f32, f16, bf16 and f64, both transposes of A, one and
// two batches (the bias, auxiliary and gradient vectors with batch strides, or a bias
// shared by the batches), row-major A and B; against double-precision references.
#include "lt_case.h"

const cublasLtEpilogue_t epilogues[] = {
    CUBLASLT_EPILOGUE_DEFAULT,  CUBLASLT_EPILOGUE_RELU,        CUBLASLT_EPILOGUE_RELU_AUX,
    CUBLASLT_EPILOGUE_BIAS,     CUBLASLT_EPILOGUE_RELU_BIAS,   CUBLASLT_EPILOGUE_RELU_AUX_BIAS,
    CUBLASLT_EPILOGUE_DRELU,    CUBLASLT_EPILOGUE_DRELU_BGRAD, CUBLASLT_EPILOGUE_GELU,
    CUBLASLT_EPILOGUE_GELU_AUX, CUBLASLT_EPILOGUE_GELU_BIAS,   CUBLASLT_EPILOGUE_GELU_AUX_BIAS,
    CUBLASLT_EPILOGUE_DGELU,    CUBLASLT_EPILOGUE_DGELU_BGRAD, CUBLASLT_EPILOGUE_BGRADA,
    CUBLASLT_EPILOGUE_BGRADB,
};

struct Types {
  cublasComputeType_t compute;
  cudaDataType_t scale, ab, cd;
};

const Types types[] = {
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_32F},
    {CUBLAS_COMPUTE_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F},
    {CUBLAS_COMPUTE_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F},
};

int main() {
  cublasLtHandle_t handle;
  LT_CHECK(cublasLtCreate(&handle));
  for (cublasLtEpilogue_t e : epilogues)
    for (const Types& t : types)
      for (cublasOperation_t ta : {CUBLAS_OP_N, CUBLAS_OP_T})
        for (int batch : {1, 2}) {
          MatmulCase c;
          c.compute = t.compute, c.scale = t.scale, c.ab = t.ab, c.cd = t.cd;
          c.epilogue = e, c.ta = ta, c.tb = ta == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N;
          c.batch = batch, c.m = 13, c.n = 9, c.k = 11;
          c.alpha = 1.25, c.beta = batch == 2 ? 0.5 : 0;
          c.bias_broadcast = batch == 2 && ta == CUBLAS_OP_T && e == CUBLASLT_EPILOGUE_GELU_BIAS;
          run_case(handle, c);
        }
  // Row-major A and B (D column-major, as the auxiliary outputs need).
  for (cublasLtEpilogue_t e : epilogues) {
    MatmulCase c;
    c.ab = c.cd = CUDA_R_16F, c.epilogue = e, c.row_a = c.row_b = true, c.batch = 2;
    c.m = 10, c.n = 7, c.k = 5, c.beta = 0.25, c.tb = CUBLAS_OP_T;
    run_case(handle, c);
  }
  // llm.c's shapes: GELU with its pre-activation (aux ld = m) and the backward DGELU.
  {
    MatmulCase c;
    c.ab = c.cd = CUDA_R_16BF, c.ta = CUBLAS_OP_T, c.m = 64, c.n = 24, c.k = 48;
    c.epilogue = CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    run_case(handle, c);
    c.epilogue = CUBLASLT_EPILOGUE_DGELU, c.ta = CUBLAS_OP_N;
    run_case(handle, c);
  }
  // Epilogues without bias or auxiliary data on a row-major D.
  for (cublasLtEpilogue_t e : {CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_GELU,
                               CUBLASLT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_BGRADB}) {
    MatmulCase c;
    c.epilogue = e, c.row_cd = true, c.beta = 1;
    run_case(handle, c);
  }
  LT_CHECK(cublasLtDestroy(handle));
  return tally.finish("cublaslt_epilogue");
}
