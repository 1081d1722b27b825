// Loops each thread runs on its own between barriers, which the CPU backend runs with the
// threads side by side (codegen/thread_interchange.h): trip counts that differ by thread,
// threads that never enter the loop, loops left by a break, values from before the loop
// used after it, loads the same for every thread (made once per round, never when no
// thread is in the loop), pointer-stepping loops and rows of a 2D block. The pass must make
// its interchange here (standard error, with MIMIC_INTERCHANGE=explain).
// mimic-env: MIMIC_INTERCHANGE=explain
// expect-stderr: : made
#include <vector>

#include "check.h"

// Grid-stride sums whose trip counts differ by one between threads.
__global__ void strided_sum(const float* x, int n, float* out) {
  float s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    s += x[i] * float(i % 7);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// The same walk with a pointer.
__global__ void pointer_walk(const float* x, int n, float* out) {
  int stride = blockDim.x * gridDim.x;
  float s = 1;
  for (const float* p = x + blockIdx.x * blockDim.x + threadIdx.x; p < x + n; p += stride)
    s = s * 0.5f + *p;
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Only some threads enter; a value loaded before the loop is used after it.
__global__ void partial_entry(const int* x, int n, int* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int base = x[(t * 13) % n];
  int acc = t * 7;
  if (threadIdx.x % 3 == 1)
    for (int i = threadIdx.x; i < n; i += blockDim.x)
      acc += x[i] * (i & 3);
  out[t] = acc - base;
}

// A search (of every other element) left by a break or by the bound: where, and after how
// many odd values.
__global__ void search(const int* x, int n, const int* keys, int* position, int* odd) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int key = keys[t];
  int i = 0, s = 0;
  for (; i < n; i += 2) {
    s += x[i] & 1;
    if (x[i] == key)
      break;
  }
  position[t] = i;
  odd[t] = s;
}

// Threads at or past `from` sum p[0..m); with no such thread p is never read.
__global__ void uniform_loads(const float* p, int m, int from, float* out) {
  float s = 0;
  if (int(threadIdx.x) >= from)
    for (int j = 0; j < m; ++j)
      s += p[j] * float(threadIdx.x);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s + float(threadIdx.x);
}

// Blocks of 16 x 8 threads: each row of 16 walks its matrix row.
__global__ void rows_2d(const float* in, int w, float* out) {
  int row = blockIdx.x * blockDim.y + threadIdx.y;
  float acc = 0;
  for (int k = threadIdx.x; k < w; k += blockDim.x)
    acc += in[row * w + k] * float(k + 1);
  out[row * blockDim.x + threadIdx.x] = acc;
}

int main() {
  const int blocks = 6, threads = 128, total = blocks * threads;
  const int n = 10000; // not a multiple of the grid
  std::vector<float> xf(n);
  std::vector<int> xi(n);
  for (int i = 0; i < n; ++i) {
    xf[i] = float((i * 37) % 101) / 16.0f;
    xi[i] = (i * 7919) % 1000;
  }
  float *d_xf, *d_outf, *d_p;
  int *d_xi, *d_outi, *d_keys, *d_pos, *d_odd;
  CHECK(cudaMalloc(&d_xf, n * sizeof(float)));
  CHECK(cudaMalloc(&d_xi, n * sizeof(int)));
  CHECK(cudaMalloc(&d_outf, 4 * total * sizeof(float)));
  CHECK(cudaMalloc(&d_outi, total * sizeof(int)));
  CHECK(cudaMalloc(&d_keys, total * sizeof(int)));
  CHECK(cudaMalloc(&d_pos, total * sizeof(int)));
  CHECK(cudaMalloc(&d_odd, total * sizeof(int)));
  CHECK(cudaMalloc(&d_p, 64 * sizeof(float)));
  CHECK(cudaMemcpy(d_xf, xf.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_xi, xi.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  std::vector<float> gotf(4 * total), wantf(4 * total);
  std::vector<int> goti(total), wanti(total), got2(total), want2(total);

  strided_sum<<<blocks, threads>>>(d_xf, n, d_outf);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(gotf.data(), d_outf, total * sizeof(float), cudaMemcpyDeviceToHost));
  for (int t = 0; t < total; ++t) {
    float s = 0;
    for (int i = t; i < n; i += total)
      s += xf[i] * float(i % 7);
    wantf[t] = s;
  }
  expect_near("strided_sum", gotf.data(), wantf.data(), total, 1e-5, true);

  pointer_walk<<<blocks, threads>>>(d_xf, n, d_outf);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(gotf.data(), d_outf, total * sizeof(float), cudaMemcpyDeviceToHost));
  for (int t = 0; t < total; ++t) {
    float s = 1;
    for (int i = t; i < n; i += total)
      s = s * 0.5f + xf[i];
    wantf[t] = s;
  }
  expect_near("pointer_walk", gotf.data(), wantf.data(), total, 1e-5, true);

  partial_entry<<<blocks, threads>>>(d_xi, n, d_outi);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(goti.data(), d_outi, total * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < total; ++t) {
    int acc = t * 7, tx = t % threads;
    if (tx % 3 == 1)
      for (int i = tx; i < n; i += threads)
        acc += xi[i] * (i & 3);
    wanti[t] = acc - xi[(t * 13) % n];
  }
  expect_equal("partial_entry", goti.data(), wanti.data(), total);

  std::vector<int> keys(total);
  for (int t = 0; t < total; ++t)
    keys[t] = t % 5 == 0 ? -1 : xi[(t * 62) % n]; // -1: not found, the bound ends the loop
  CHECK(cudaMemcpy(d_keys, keys.data(), total * sizeof(int), cudaMemcpyHostToDevice));
  search<<<blocks, threads>>>(d_xi, n, d_keys, d_pos, d_odd);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(goti.data(), d_pos, total * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got2.data(), d_odd, total * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < total; ++t) {
    int i = 0, s = 0;
    for (; i < n; i += 2) {
      s += xi[i] & 1;
      if (xi[i] == keys[t])
        break;
    }
    wanti[t] = i;
    want2[t] = s;
  }
  expect_equal("search position", goti.data(), wanti.data(), total);
  expect_equal("search odd count", got2.data(), want2.data(), total);

  // No thread enters: the null pointer must never be read.
  uniform_loads<<<blocks, threads>>>(nullptr, 64, threads, d_outf);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(gotf.data(), d_outf, total * sizeof(float), cudaMemcpyDeviceToHost));
  for (int t = 0; t < total; ++t)
    wantf[t] = float(t % threads);
  expect_near("uniform_loads, no thread inside", gotf.data(), wantf.data(), total);
  std::vector<float> p(64);
  for (int j = 0; j < 64; ++j)
    p[j] = float(j) * 0.25f;
  CHECK(cudaMemcpy(d_p, p.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));
  uniform_loads<<<blocks, threads>>>(d_p, 64, 100, d_outf);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(gotf.data(), d_outf, total * sizeof(float), cudaMemcpyDeviceToHost));
  for (int t = 0; t < total; ++t) {
    int tx = t % threads;
    float s = 0;
    if (tx >= 100)
      for (int j = 0; j < 64; ++j)
        s += p[j] * float(tx);
    wantf[t] = s + float(tx);
  }
  expect_near("uniform_loads", gotf.data(), wantf.data(), total, 1e-5, true);

  const int w = 75, rows = 4 * 8; // 4 blocks of 16 x 8
  rows_2d<<<4, dim3(16, 8)>>>(d_xf, w, d_outf);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(gotf.data(), d_outf, rows * 16 * sizeof(float), cudaMemcpyDeviceToHost));
  for (int r = 0; r < rows; ++r)
    for (int tx = 0; tx < 16; ++tx) {
      float acc = 0;
      for (int k = tx; k < w; k += 16)
        acc += xf[r * w + k] * float(k + 1);
      wantf[r * 16 + tx] = acc;
    }
  expect_near("rows_2d", gotf.data(), wantf.data(), rows * 16, 1e-5, true);

  return report("thread_loop_interchange");
}
