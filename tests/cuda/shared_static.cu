// Static shared memory: several __shared__ arrays of different types in one kernel (int,
// double, byte, a padded 2D float tile), each block reversing and transposing its slice.
// nvcc-flags: -arch=sm_75
#include <vector>

#include "check.h"

constexpr int B = 128;

__global__ void shuffle_through_shared(const int* in, int* out, double* dout, unsigned char* cout,
                                       float* fout) {
  __shared__ int si[B];
  __shared__ double sd[B];
  __shared__ unsigned char sc[B];
  __shared__ float tile[8][17];
  int t = threadIdx.x, g = blockIdx.x * B + t;
  si[t] = in[g];
  sd[t] = in[g] * 0.5;
  sc[t] = (unsigned char)(in[g] * 3);
  tile[t / 16][t % 16] = float(in[g]);
  __syncthreads();
  out[g] = si[B - 1 - t];
  dout[g] = sd[(t + 5) % B];
  cout[g] = sc[B - 1 - t] ^ sc[t];
  fout[g] = tile[t % 8][t / 8];
}

int main() {
  const int blocks = 6, n = blocks * B;
  std::vector<int> in(n), out(n), want(n);
  std::vector<double> dout(n), dwant(n);
  std::vector<unsigned char> cout_(n), cwant(n);
  std::vector<float> fout(n), fwant(n);
  for (int i = 0; i < n; ++i)
    in[i] = (i * 37) % 1001 - 400;
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < B; ++t) {
      int g = b * B + t, base = b * B;
      want[g] = in[base + B - 1 - t];
      dwant[g] = in[base + (t + 5) % B] * 0.5;
      cwant[g] = (unsigned char)(in[base + B - 1 - t] * 3) ^ (unsigned char)(in[g] * 3);
      fwant[g] = float(in[base + (t % 8) * 16 + t / 8]);
    }
  int *d_in, *d_out;
  double* d_d;
  unsigned char* d_c;
  float* d_f;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, n * sizeof(int)));
  CHECK(cudaMalloc(&d_d, n * sizeof(double)));
  CHECK(cudaMalloc(&d_c, n));
  CHECK(cudaMalloc(&d_f, n * sizeof(float)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  shuffle_through_shared<<<blocks, B>>>(d_in, d_out, d_d, d_c, d_f);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(dout.data(), d_d, n * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(cout_.data(), d_c, n, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(fout.data(), d_f, n * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("reversed", out.data(), want.data(), n);
  expect_equal("doubles", dout.data(), dwant.data(), n);
  expect_equal("bytes", cout_.data(), cwant.data(), n);
  expect_equal("transposed", fout.data(), fwant.data(), n);
  return report("shared_static");
}
