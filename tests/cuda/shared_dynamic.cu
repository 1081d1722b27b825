// Dynamic shared memory: extern __shared__ sized at launch, several arrays carved from it,
// the same buffer seen through another type in a second kernel and from a device function,
// and launches of one kernel with different sizes.
#include <vector>

#include "check.h"

extern __shared__ unsigned char dyn[];

__device__ int* ints() {
  return reinterpret_cast<int*>(dyn);
}

// Layout: n ints, then n floats, then n shorts.
__global__ void carve(const int* in, int* out, int n) {
  int* a = ints();
  float* f = reinterpret_cast<float*>(a + n);
  short* s = reinterpret_cast<short*>(f + n);
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    a[i] = in[blockIdx.x * n + i];
    f[i] = a[i] * 0.25f;
    s[i] = short(a[i] - 7);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    int j = n - 1 - i;
    out[blockIdx.x * n + i] = a[j] + int(f[(i + 1) % n] * 4.0f) + s[(i + 2) % n];
  }
}

__global__ void as_doubles(double* out, int n) {
  extern __shared__ double d[];
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    d[i] = i * 1.5;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    out[i] = d[n - 1 - i] + d[i];
}

int main() {
  const int blocks = 4;
  for (int n : {32, 200, 1000}) {
    size_t bytes = n * (sizeof(int) + sizeof(float) + sizeof(short));
    std::vector<int> in(blocks * n), out(blocks * n), want(blocks * n);
    for (int i = 0; i < blocks * n; ++i)
      in[i] = (i * 131) % 977 - 300;
    for (int b = 0; b < blocks; ++b)
      for (int i = 0; i < n; ++i) {
        const int* a = &in[b * n];
        want[b * n + i] = a[n - 1 - i] + a[(i + 1) % n] + short(a[(i + 2) % n] - 7);
      }
    int *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, in.size() * sizeof(int)));
    CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
    CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
    carve<<<blocks, 96, bytes>>>(d_in, d_out, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
    expect_equal("carved", out.data(), want.data(), out.size());
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));

    std::vector<double> dout(n), dwant(n);
    for (int i = 0; i < n; ++i)
      dwant[i] = (n - 1 - i) * 1.5 + i * 1.5;
    double* d_d;
    CHECK(cudaMalloc(&d_d, n * sizeof(double)));
    as_doubles<<<1, 64, n * sizeof(double)>>>(d_d, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(dout.data(), d_d, n * sizeof(double), cudaMemcpyDeviceToHost));
    expect_equal("doubles", dout.data(), dwant.data(), n);
    CHECK(cudaFree(d_d));
  }
  return report("shared_dynamic");
}
