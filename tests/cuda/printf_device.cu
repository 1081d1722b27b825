// Device printf: integer, floating-point, string and character conversions with widths,
// precisions and flags, output ordered by barriers, and launches in sequence. The runner
// compares standard output with printf_device.expected, which is what the host's printf
// makes of the same calls (print_lines runs on both sides).
// expect-output: printf_device.expected
#include <cstdio>

__device__ const char kWord[] = "mimic";

__host__ __device__ void print_lines(int k, const char* word) {
  printf("int %d %i %u %x %X %o|%5d|%-5d|%+d|%05d\n", -k * 7, k, 4000000000u - k, 255 + k,
         48879 + k, 8 + k, k, k, k, -k);
  printf("long %ld %lld %llu %llx\n", -1234567890123L * (k + 1), 9000000000000000000LL + k,
         18000000000000000000ULL + k, 0x123456789abcdefULL << k);
  printf("float %f %.3f %e %.2E %g %g %8.2f|%-8.1f|\n", 1.5f * k, 3.14159265 * k, 6.02e23 * (k + 1),
         -1.0e-5 * k, 100000.0 * k, 0.0001 + k, -2.25 * k, 0.5 * k);
  printf("string %s|%8s|%-8s|%.3s %c%c %%\n", word, word, word, word, 'A' + k, '0' + k);
}

__global__ void single(int first, int count) {
  for (int k = first; k < first + count; ++k)
    print_lines(k, kWord);
}

__global__ void ordered() {
  for (int t = 0; t < int(blockDim.x); ++t) {
    if (int(threadIdx.x) == t) printf("thread %d of %d says %d\n", threadIdx.x, blockDim.x, t * t);
    __syncthreads();
  }
}

static bool ok(cudaError_t err) {
  if (err != cudaSuccess) fprintf(stderr, "printf_device: %s\n", cudaGetErrorString(err));
  return err == cudaSuccess;
}

int main() {
  single<<<1, 1>>>(0, 2);
  if (!ok(cudaGetLastError()) || !ok(cudaDeviceSynchronize())) return 1;
  single<<<1, 1>>>(2, 1);
  if (!ok(cudaGetLastError())) return 1;
  ordered<<<1, 4>>>();
  if (!ok(cudaGetLastError()) || !ok(cudaDeviceSynchronize())) return 1;
  printf("printf_device: done\n");
  return 0;
}
