// SGEMM and DGEMM through Mimic's libcublas (this program runs under `mimic run`) against
// OpenBLAS called directly in the same process, with the same thread count and data.
// Prints one line per case and ends with `cublas sgemm2048/openblas=X.XX` (the speed of
// the cuBLAS path relative to OpenBLAS: above 1 is faster).
//   bench_cublas [--quick] [--reps N]
#include <cblas.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using Clock = std::chrono::steady_clock;

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if (auto status_ = (call); status_ != 0) {                                                     \
      fprintf(stderr, "%s failed: %d\n", #call, int(status_));                                     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

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
  double mimic = median_seconds(reps, [&] {
    if constexpr (sizeof(T) == 4)
      CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n));
    else
      CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n));
    CHECK(cudaDeviceSynchronize());
  });
  double direct = median_seconds(reps, [&] {
    if constexpr (sizeof(T) == 4)
      cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, hA.data(), n, hB.data(), n,
                  0, hC.data(), n);
    else
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, hA.data(), n, hB.data(), n,
                  0, hC.data(), n);
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
  printf("cublas sgemm%d/openblas=%.2f\n", quick ? sizes.back() : 2048, sgemm2048);
  return 0;
}
