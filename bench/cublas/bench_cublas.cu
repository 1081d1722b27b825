// SGEMM and DGEMM through Mimic's libcublas (this program runs under `mimic run`) against
// OpenBLAS called directly in the same process, with the same thread count and data; and
// an f32 cublasLtMatmul with the bias+GELU epilogue against the same GEMM by OpenBLAS
// followed by a fused native epilogue loop. Prints one line per case and ends with
// `cublas sgemm2048/openblas=X.XX` (the speed of the cuBLAS path relative to OpenBLAS:
// above 1 is faster).
//   bench_cublas [--quick] [--reps N]
#include <cblas.h>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

using Clock = std::chrono::steady_clock;

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if (auto status_ = (call); status_ != 0) {                                                     \
      fprintf(stderr, "%s failed: %d\n", #call, int(status_));                                     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

// Medians of `a` and `b` timed in alternating rounds, so that a change in the machine's
// load hits both sides alike.
template <typename A, typename B> std::pair<double, double> median_seconds_alternating(int reps, A&& a, B&& b) {
  a(), b(); // warm-up: first-touch of pages, OpenBLAS's threads
  std::vector<double> ta, tb;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    a();
    auto t1 = Clock::now();
    b();
    auto t2 = Clock::now();
    ta.push_back(std::chrono::duration<double>(t1 - t0).count());
    tb.push_back(std::chrono::duration<double>(t2 - t1).count());
  }
  std::sort(ta.begin(), ta.end());
  std::sort(tb.begin(), tb.end());
  return {ta[ta.size() / 2], tb[tb.size() / 2]};
}

template <typename F> double median_seconds(int reps, F&& run) {
  run(); // warm-up: first-touch of pages, OpenBLAS's threads
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    run();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

template <typename T> double ratio_for(cublasHandle_t handle, int n, int reps) {
  size_t count = size_t(n) * n;
  std::vector<T> host(count);
  for (size_t i = 0; i < count; ++i)
    host[i] = T((i * 7919 % 1000) / 1000.0 - 0.5);
  T *A, *B, *C;
  CHECK(cudaMalloc(&A, count * sizeof(T)));
  CHECK(cudaMalloc(&B, count * sizeof(T)));
  CHECK(cudaMalloc(&C, count * sizeof(T)));
  CHECK(cudaMemcpy(A, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(B, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  std::vector<T> hA(host), hB(host), hC(count);
  T one = 1, zero = 0;
  auto [mimic, direct] = median_seconds_alternating(
      reps,
      [&] {
        if constexpr (sizeof(T) == 4)
          CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n));
        else
          CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n));
        CHECK(cudaDeviceSynchronize());
      },
      [&] {
        if constexpr (sizeof(T) == 4)
          cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, hA.data(), n, hB.data(), n, 0,
                      hC.data(), n);
        else
          cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, hA.data(), n, hB.data(), n, 0,
                      hC.data(), n);
      });
  cudaFree(A), cudaFree(B), cudaFree(C);
  double flops = 2.0 * n * n * double(n);
  printf("%cgemm n=%d mimic_s=%.6f openblas_s=%.6f mimic_gflops=%.1f openblas_gflops=%.1f "
         "ratio=%.2f\n",
         sizeof(T) == 4 ? 's' : 'd', n, mimic, direct, flops / mimic * 1e-9, flops / direct * 1e-9,
         direct / mimic);
  fflush(stdout);
  return direct / mimic;
}

// The fixed cost of a small call: 64 x 64 SGEMMs back to back, each waited for.
void small_overhead(cublasHandle_t handle, int reps) {
  const int n = 64, calls = 200;
  std::vector<float> host(n * n, 0.5f), hC(n * n);
  float *A, *C;
  CHECK(cudaMalloc(&A, n * n * sizeof(float)));
  CHECK(cudaMalloc(&C, n * n * sizeof(float)));
  CHECK(cudaMemcpy(A, host.data(), n * n * sizeof(float), cudaMemcpyHostToDevice));
  float one = 1, zero = 0;
  double mimic = median_seconds(reps, [&] {
    for (int i = 0; i < calls; ++i) {
      CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, A, n, &zero, C, n));
      CHECK(cudaStreamSynchronize(nullptr));
    }
  });
  double direct = median_seconds(reps, [&] {
    for (int i = 0; i < calls; ++i)
      cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, host.data(), n,
                  host.data(), n, 0, hC.data(), n);
  });
  cudaFree(A), cudaFree(C);
  printf("sgemm n=64 mimic_us=%.2f openblas_us=%.2f overhead_us=%.2f\n", mimic / calls * 1e6,
         direct / calls * 1e6, (mimic - direct) / calls * 1e6);
}

// The tanh approximation of GELU, as cuBLASLt's epilogue defines it.
float gelu(float x) {
  return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
}

// D = GELU(A B + bias) for n x n f32 matrices: cublasLtMatmul with
// CUBLASLT_EPILOGUE_GELU_BIAS against cblas_sgemm followed by one pass over D adding the
// bias and applying GELU with tanhf (what a native program fusing the epilogue by hand
// does), and against the bare cblas_sgemm (what the epilogue costs), in alternating rounds.
double lt_bias_gelu(cublasLtHandle_t lt, int n, int reps) {
  size_t count = size_t(n) * n;
  std::vector<float> host(count), bias(n);
  for (size_t i = 0; i < count; ++i)
    host[i] = float((i * 7919 % 1000) / 1000.0 - 0.5);
  for (int i = 0; i < n; ++i)
    bias[i] = float((i % 17) / 17.0 - 0.5);
  float *A, *B, *D, *dbias;
  CHECK(cudaMalloc(&A, count * sizeof(float)));
  CHECK(cudaMalloc(&B, count * sizeof(float)));
  CHECK(cudaMalloc(&D, count * sizeof(float)));
  CHECK(cudaMalloc(&dbias, n * sizeof(float)));
  CHECK(cudaMemcpy(A, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(B, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dbias, bias.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cublasLtMatmulDesc_t desc;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                       sizeof epilogue));
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias,
                                       sizeof dbias));
  cublasLtMatrixLayout_t layout;
  CHECK(cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, n, n, n));
  cublasLtMatmulHeuristicResult_t result;
  int returned = 0;
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, layout, layout, layout, layout, nullptr, 1,
                                       &result, &returned));
  float one = 1, zero = 0;
  auto run_mimic = [&] {
    CHECK(cublasLtMatmul(lt, desc, &one, A, layout, B, layout, &zero, D, layout, D, layout,
                         &result.algo, nullptr, 0, nullptr));
    CHECK(cudaDeviceSynchronize());
  };
  std::vector<float> hA(host), hB(host), hD(count);
  auto run_gemm = [&] {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, hA.data(), n, hB.data(), n,
                0, hD.data(), n);
  };
  auto run_native = [&] {
    run_gemm();
    for (int j = 0; j < n; ++j) {
      float* column = hD.data() + size_t(j) * n;
      for (int i = 0; i < n; ++i)
        column[i] = gelu(column[i] + bias[i]);
    }
  };
  // Alternating rounds, so that a change in the machine's load hits both sides alike.
  run_mimic(), run_gemm(), run_native();
  std::vector<double> mimic_times, gemm_times, native_times;
  auto seconds = [](auto from, auto to) {
    return std::chrono::duration<double>(to - from).count();
  };
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    run_mimic();
    auto t1 = Clock::now();
    run_gemm();
    auto t2 = Clock::now();
    run_native();
    auto t3 = Clock::now();
    mimic_times.push_back(seconds(t0, t1));
    gemm_times.push_back(seconds(t1, t2));
    native_times.push_back(seconds(t2, t3));
  }
  auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double mimic = median(mimic_times), gemm = median(gemm_times), native = median(native_times);
  std::vector<float> check(count);
  CHECK(cudaMemcpy(check.data(), D, count * sizeof(float), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (size_t i = 0; i < count; ++i)
    worst = std::max(worst, double(std::fabs(check[i] - hD[i])) / (1 + std::fabs(hD[i])));
  cublasLtMatrixLayoutDestroy(layout);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(A), cudaFree(B), cudaFree(D), cudaFree(dbias);
  printf("cublaslt sgemm+bias+gelu n=%d mimic_s=%.6f native_s=%.6f time_ratio=%.2f "
         "(mimic/native; goal <= 1.2) gemm_only_s=%.6f mimic/gemm_only=%.2f max_rel_diff=%.1e\n",
         n, mimic, native, mimic / native, gemm, mimic / gemm, worst);
  fflush(stdout);
  return mimic / native;
}

int main(int argc, char** argv) {
  bool quick = false;
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--quick"))
      quick = true;
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::max(1, atoi(argv[++i]));
    else {
      fprintf(stderr, "usage: bench_cublas [--quick] [--reps N]\n");
      return 2;
    }
  }
  cublasHandle_t handle;
  CHECK(cublasCreate(&handle));
  printf("config openblas_threads=%d reps=%d\n", openblas_get_num_threads(), reps);
  std::vector<int> sizes =
      quick ? std::vector<int>{256, 512} : std::vector<int>{512, 1024, 2048, 4096};
  double sgemm2048 = 0;
  for (int n : sizes) {
    double r = ratio_for<float>(handle, n, reps);
    if (n == 2048 || (quick && n == sizes.back())) sgemm2048 = r;
  }
  for (int n : sizes)
    ratio_for<double>(handle, n, reps);
  small_overhead(handle, reps);
  CHECK(cublasDestroy(handle));
  cublasLtHandle_t lt;
  CHECK(cublasLtCreate(&lt));
  for (int n : quick ? std::vector<int>{256, 512} : std::vector<int>{1024, 2048})
    lt_bias_gelu(lt, n, reps);
  CHECK(cublasLtDestroy(lt));
  printf("cublas sgemm%d/openblas=%.2f\n", quick ? sizes.back() : 2048, sgemm2048);
  return 0;
}
