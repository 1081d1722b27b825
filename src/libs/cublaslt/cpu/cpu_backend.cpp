// The CPU backend: device memory is host memory, so operations run on the host in the
// stream's order (libs/common/stream_order.h). OpenBLAS takes 32-bit sizes.
#include "libs/common/openblas_threads.h"
#include "libs/cublaslt/cpu/cpu_ops.h"
#include "libs/cublaslt/failure.h"

#include <climits>
#include <string>

namespace mimic::cublaslt {
namespace {

bool fits_int(int64_t v) {
  return v <= INT_MAX;
}

class CpuBackend final : public LtBackend {
public:
  cublasStatus_t supports(const MatmulArgs& a) override {
    bool fits = fits_int(a.m) && fits_int(a.n) && fits_int(a.k) && fits_int(a.a.ld) &&
                fits_int(a.b.ld) && fits_int(a.c.ld) && fits_int(a.d.ld);
    if (!fits)
      return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                  "sizes or leading dimensions beyond 32 bits (the CPU backend's OpenBLAS)");
    return CUBLAS_STATUS_SUCCESS;
  }

  cublasStatus_t matmul(const libs::StreamTarget& target, const MatmulArgs& args) override {
    libs::coordinate_openblas_threads();
    return status_from(libs::run_in_stream_order(target, [args] { cpu::run_matmul(args); }));
  }

  cublasStatus_t transform(const libs::StreamTarget& target, const TransformArgs& args) override {
    return status_from(libs::run_in_stream_order(target, [args] { cpu::run_transform(args); }));
  }

private:
  static cublasStatus_t status_from(CUresult r) {
    if (r == CUDA_SUCCESS) return CUBLAS_STATUS_SUCCESS;
    if (r == CUDA_ERROR_NOT_SUPPORTED) return CUBLAS_STATUS_NOT_SUPPORTED;
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
};

} // namespace

LtBackend& cpu_backend() {
  static auto* backend = new CpuBackend; // stateless; outlives exit handlers
  return *backend;
}

LtBackend* backend_for(libs::DeviceKind kind) {
  switch (kind) {
  case libs::DeviceKind::HostMemory:
    return &cpu_backend();
  case libs::DeviceKind::Separate:
    break; // hipBLASLt through HIP arrives with the AMD backend (issue 8)
  }
  return nullptr;
}

} // namespace mimic::cublaslt
