// MIMIC_CHECK=memory: a 4-byte load from an address that is not a multiple of 4 (which an
// x86 host would perform without complaint) ends the launch with
// cudaErrorMisalignedAddress, as on a GPU, naming kernel and PTX line.
// mimic-env: MIMIC_CHECK=memory
// expect-stderr: misaligned read of 4 bytes
#include <cstdio>

#include "check.h"

__global__ void aligned(const int* in, int* out) { out[threadIdx.x] = in[threadIdx.x] + 1; }

__global__ void misaligned(const char* bytes, int* out) {
  out[threadIdx.x] = *reinterpret_cast<const int*>(bytes + 1 + 4 * threadIdx.x);
}

int main() {
  int *in, *out;
  CHECK(cudaMalloc(&in, 64 * sizeof(int)));
  CHECK(cudaMalloc(&out, 64 * sizeof(int)));
  CHECK(cudaMemset(in, 0, 64 * sizeof(int)));
  aligned<<<1, 32>>>(in, out);
  CHECK(cudaDeviceSynchronize());
  misaligned<<<1, 32>>>(reinterpret_cast<const char*>(in), out);
  EXPECT(cudaDeviceSynchronize() == cudaErrorMisalignedAddress);
  printf("check_misaligned: %s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
