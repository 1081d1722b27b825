// The empty kernel of the launch round-trip measurement.
#include "cuda_kernels.h"

namespace bench::cuda {

__global__ void empty_kernel() {}

void run_empty(unsigned blocks) {
  empty_kernel<<<blocks, kWarp>>>();
}

} // namespace bench::cuda
