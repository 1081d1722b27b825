// The handle API and what surrounds the computations: versions, status names, modes,
// streams (work ordered after kernels, device scalars written by a kernel, stream capture
// into a graph), Set/Get Vector/Matrix, the logger, and the statuses of bad input: a NULL
// or destroyed handle, bad dimensions and enums, and an entry point Mimic lacks.
#include "blas_test.h"

#include <string>

__global__ void fill(float* x, int n, float value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value + i;
}

std::string logged;
void on_log(const char* message) {
  logged += message;
}

void test_queries(cublasHandle_t h) {
  int version = 0;
  BLAS_OK(cublasGetVersion(h, &version));
  tally.check(version == CUBLAS_VERSION, "cublasGetVersion %d, want %d", version, CUBLAS_VERSION);
  int major = -1, minor = -1, patch = -1;
  BLAS_OK(cublasGetProperty(MAJOR_VERSION, &major));
  BLAS_OK(cublasGetProperty(MINOR_VERSION, &minor));
  BLAS_OK(cublasGetProperty(PATCH_LEVEL, &patch));
  tally.check(major == CUBLAS_VER_MAJOR && minor == CUBLAS_VER_MINOR && patch == CUBLAS_VER_PATCH,
              "cublasGetProperty");
  tally.check(cublasGetCudartVersion() == CUDART_VERSION, "cublasGetCudartVersion");
  tally.check(std::string(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE)) ==
                  "CUBLAS_STATUS_INVALID_VALUE",
              "cublasGetStatusName");
  tally.check(std::string(cublasGetStatusString(CUBLAS_STATUS_SUCCESS)) == "success",
              "cublasGetStatusString");

  cublasPointerMode_t pm;
  BLAS_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  BLAS_OK(cublasGetPointerMode(h, &pm));
  tally.check(pm == CUBLAS_POINTER_MODE_DEVICE, "pointer mode");
  BLAS_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  tally.status(cublasSetPointerMode(h, cublasPointerMode_t(7)), CUBLAS_STATUS_INVALID_VALUE,
               "bad pointer mode");
  cublasMath_t mm;
  BLAS_OK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
  BLAS_OK(cublasGetMathMode(h, &mm));
  tally.check(mm == CUBLAS_TF32_TENSOR_OP_MATH, "math mode");
  BLAS_OK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  cublasAtomicsMode_t am;
  BLAS_OK(cublasSetAtomicsMode(h, CUBLAS_ATOMICS_ALLOWED));
  BLAS_OK(cublasGetAtomicsMode(h, &am));
  tally.check(am == CUBLAS_ATOMICS_ALLOWED, "atomics mode");
  void* workspace;
  CUDA_OK(cudaMalloc(&workspace, 1 << 20));
  BLAS_OK(cublasSetWorkspace(h, workspace, 1 << 20));
  BLAS_OK(cublasSetWorkspace(h, nullptr, 0));
  CUDA_OK(cudaFree(workspace));
}

void test_copies() {
  const int n = 10, rows = 5, cols = 4, ld = 7;
  std::vector<float> x(n * 2), back(n * 3, -1.0f);
  for (int i = 0; i < n * 2; ++i)
    x[i] = float(i);
  Device<float> d(n * 2);
  BLAS_OK(cublasSetVector(n, sizeof(float), x.data(), 2, d.ptr, 1));
  BLAS_OK(cublasGetVector(n, sizeof(float), d.ptr, 1, back.data(), 3));
  bool ok = true;
  for (int i = 0; i < n; ++i)
    ok &= back[i * 3] == x[i * 2] && back[i * 3 + 1] == -1.0f;
  tally.check(ok, "Set/GetVector with increments");
  std::vector<double> A(ld * cols), B(ld * cols, -1);
  for (size_t i = 0; i < A.size(); ++i)
    A[i] = double(i);
  Device<double> dA(size_t(rows * cols));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  BLAS_OK(cublasSetMatrixAsync(rows, cols, sizeof(double), A.data(), ld, dA.ptr, rows, stream));
  BLAS_OK(cublasGetMatrixAsync_64(rows, cols, sizeof(double), dA.ptr, rows, B.data(), ld, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  ok = true;
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < ld; ++i)
      ok &= B[i + j * ld] == (i < rows ? A[i + j * ld] : -1);
  tally.check(ok, "Set/GetMatrixAsync");
  BLAS_OK(cublasSetMatrix_64(rows, cols, sizeof(double), A.data(), ld, dA.ptr, rows));
  tally.status(cublasSetVector(n, sizeof(float), x.data(), 0, d.ptr, 1),
               CUBLAS_STATUS_INVALID_VALUE, "SetVector incx 0");
  tally.status(cublasSetMatrix(rows, cols, sizeof(double), A.data(), rows - 1, dA.ptr, rows),
               CUBLAS_STATUS_INVALID_VALUE, "SetMatrix lda < rows");
  CUDA_OK(cudaStreamDestroy(stream));
}

// Work goes to the handle's stream after the kernels before it; device scalars are read when
// it runs, after the kernel that writes them.
void test_stream_order(cublasHandle_t h) {
  const int n = 1000;
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  BLAS_OK(cublasSetStream(h, stream));
  cudaStream_t got;
  BLAS_OK(cublasGetStream(h, &got));
  tally.check(got == stream, "cublasGetStream");
  Device<float> x(n), y(n), alpha(1);
  fill<<<(n + 255) / 256, 256, 0, stream>>>(x.ptr, n, 1.0f);
  fill<<<(n + 255) / 256, 256, 0, stream>>>(y.ptr, n, 0.5f);
  fill<<<1, 1, 0, stream>>>(alpha.ptr, 1, 3.0f);
  BLAS_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  BLAS_OK(cublasSaxpy(h, n, alpha.ptr, x.ptr, 1, y.ptr, 1));
  BLAS_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  fill<<<1, 1, 0, stream>>>(alpha.ptr, 1, -100.0f); // too late to change the axpy
  CUDA_OK(cudaStreamSynchronize(stream));
  auto result = y.get();
  bool ok = true;
  for (int i = 0; i < n; ++i)
    ok &= result[i] == 3.0f * (1.0f + i) + (0.5f + i);
  tally.check(ok, "axpy ordered after kernels on its stream, device alpha read when it ran");

  // Stream capture: the graph replays the cuBLAS work at each launch.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  float two = 2.0f;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  BLAS_OK(cublasSscal(h, n, &two, y.ptr, 1));
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_OK(cudaGraphLaunch(exec, stream));
  CUDA_OK(cudaGraphLaunch(exec, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  auto scaled = y.get();
  ok = true;
  for (int i = 0; i < n; ++i)
    ok &= scaled[i] == 4.0f * result[i];
  tally.check(ok, "cuBLAS work captured into a graph runs at each launch");
  CUDA_OK(cudaGraphExecDestroy(exec));
  CUDA_OK(cudaGraphDestroy(graph));
  BLAS_OK(cublasSetStream(h, nullptr));
  CUDA_OK(cudaStreamDestroy(stream));
}

void test_logger(cublasHandle_t h) {
  BLAS_OK(cublasSetLoggerCallback(on_log));
  cublasLogCallback callback = nullptr;
  BLAS_OK(cublasGetLoggerCallback(&callback));
  tally.check(callback == on_log, "cublasGetLoggerCallback");
  int version;
  cublasGetVersion(h, &version);
  tally.check(logged.find("cublasGetVersion_v2") != std::string::npos,
              "the logger callback saw the call: '%s'", logged.c_str());
  BLAS_OK(cublasLoggerConfigure(0, 0, 0, nullptr));
  BLAS_OK(cublasSetLoggerCallback(nullptr));
  logged.clear();
  cublasGetVersion(h, &version);
  tally.check(logged.empty(), "the log is off again");
}

void test_bad_input(cublasHandle_t h) {
  Device<float> d(256);
  float one = 1;
  auto gemm = [&](cublasHandle_t handle, cublasOperation_t ta, int m, int n, int k, int lda,
                  int ldb, int ldc) {
    return cublasSgemm(handle, ta, CUBLAS_OP_N, m, n, k, &one, d.ptr, lda, d.ptr, ldb, &one, d.ptr,
                       ldc);
  };
  tally.status(gemm(nullptr, CUBLAS_OP_N, 4, 4, 4, 4, 4, 4), CUBLAS_STATUS_NOT_INITIALIZED,
               "gemm NULL handle");
  tally.status(gemm(h, CUBLAS_OP_N, -1, 4, 4, 4, 4, 4), CUBLAS_STATUS_INVALID_VALUE, "gemm m < 0");
  tally.status(gemm(h, CUBLAS_OP_N, 4, 4, 4, 3, 4, 4), CUBLAS_STATUS_INVALID_VALUE, "gemm lda < m");
  tally.status(gemm(h, CUBLAS_OP_T, 4, 4, 8, 4, 8, 4), CUBLAS_STATUS_INVALID_VALUE,
               "gemm lda < k (A transposed)");
  tally.status(gemm(h, CUBLAS_OP_N, 4, 4, 4, 4, 4, 2), CUBLAS_STATUS_INVALID_VALUE, "gemm ldc < m");
  tally.status(gemm(h, cublasOperation_t(9), 4, 4, 4, 4, 4, 4), CUBLAS_STATUS_INVALID_VALUE,
               "gemm bad op");
  tally.status(gemm(h, CUBLAS_OP_N, 0, 4, 4, 4, 4, 4), CUBLAS_STATUS_SUCCESS, "gemm m = 0");
  tally.status(cublasSgemv(h, CUBLAS_OP_N, 4, 4, &one, d.ptr, 4, d.ptr, 0, &one, d.ptr, 1),
               CUBLAS_STATUS_INVALID_VALUE, "gemv incx 0");
  tally.status(cublasStrsm(h, CUBLAS_SIDE_LEFT, cublasFillMode_t(5), CUBLAS_OP_N, CUBLAS_DIAG_UNIT,
                           4, 4, &one, d.ptr, 4, d.ptr, 4),
               CUBLAS_STATUS_INVALID_VALUE, "trsm bad fill mode");
  tally.status(
      cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, 4, 2, &one, d.ptr, 3, &one, d.ptr, 4),
      CUBLAS_STATUS_INVALID_VALUE, "syrk lda < n");
  tally.status(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, d.ptr, 2, 4,
                                         d.ptr, 2, 4, &one, d.ptr, 2, 4, -1),
               CUBLAS_STATUS_INVALID_VALUE, "strided batched count < 0");
  float result;
  tally.status(cublasSdot(h, 4, d.ptr, 1, d.ptr, 1, nullptr), CUBLAS_STATUS_INVALID_VALUE,
               "dot NULL result");
  tally.status(cublasSdot(nullptr, 4, d.ptr, 1, d.ptr, 1, &result), CUBLAS_STATUS_NOT_INITIALIZED,
               "dot NULL handle");
  cublasPointerMode_t mode;
  tally.status(cublasGetPointerMode(nullptr, &mode), CUBLAS_STATUS_NOT_INITIALIZED,
               "GetPointerMode NULL handle");
  tally.status(cublasDestroy(nullptr), CUBLAS_STATUS_NOT_INITIALIZED, "destroy NULL handle");
  // An entry point Mimic does not implement answers NOT_SUPPORTED.
  const float* arrays[1] = {d.ptr};
  float* out[1] = {d.ptr};
  tally.status(
      cublasSgemvBatched(h, CUBLAS_OP_N, 2, 2, &one, arrays, 2, arrays, 1, &one, out, 1, 1),
      CUBLAS_STATUS_NOT_SUPPORTED, "an unimplemented entry point");
}

int main() {
  cublasHandle_t h;
  BLAS_OK(cublasCreate(&h));
  test_queries(h);
  test_copies();
  test_stream_order(h);
  test_logger(h);
  test_bad_input(h);
  // Two handles at once, and a destroyed handle.
  cublasHandle_t second;
  BLAS_OK(cublasCreate(&second));
  BLAS_OK(cublasDestroy(second));
  float one = 1;
  Device<float> d(16);
  tally.status(cublasSscal(second, 4, &one, d.ptr, 1), CUBLAS_STATUS_NOT_INITIALIZED,
               "scal on a destroyed handle");
  tally.status(cublasDestroy(second), CUBLAS_STATUS_NOT_INITIALIZED, "destroying twice");
  BLAS_OK(cublasSscal(h, 4, &one, d.ptr, 1));
  BLAS_OK(cublasDestroy(h));
  return tally.finish("cublas_handle");
}
