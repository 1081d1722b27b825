// The CPU backend: device pointers are host pointers, so each operation runs on the host
// in stream order (libs/common/stream_order.h) with OpenBLAS, using as many threads as
// Mimic's worker pool.
#include "libs/common/openblas_threads.h"
#include "libs/cublas/cpu/cpu_ops.h"
#include "libs/cublas/handle.h"
#include "support/log.h"

#include <climits>
#include <initializer_list>

namespace mimic::cublas {
namespace {

using cpu::run_gels_batched;

// OpenBLAS takes 32-bit sizes, increments and leading dimensions.
bool fits_int(std::initializer_list<int64_t> values) {
  for (int64_t v : values)
    if (v > INT_MAX || v < INT_MIN) return false;
  return true;
}

cublasStatus_t too_large(const char* what) {
  warn_once(std::string("cublas-cpu-size-") + what,
            std::string("cuBLAS: ") + what +
                " with a size, increment or leading dimension beyond 32 bits is not supported "
                "by the CPU backend (OpenBLAS is built with 32-bit integers)");
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

template <typename Args>
cublasStatus_t submit(const libs::StreamTarget& target, const Args& args, void (*run)(const Args&),
                      bool wait) {
  libs::HostWork work = [args, run] { run(args); };
  CUresult r = wait ? libs::run_and_wait(target, std::move(work))
                    : libs::run_in_stream_order(target, std::move(work));
  return status_from(r);
}

class CpuBackend final : public BlasBackend {
public:
  cublasStatus_t level1(const libs::StreamTarget& target, const Level1Args& a) override {
    if (!fits_int({a.n, a.incx, a.incy})) return too_large("a level 1 operation");
    return submit(target, a, cpu::run_level1, a.result_on_host);
  }

  cublasStatus_t rotg(const libs::StreamTarget& target, const RotgArgs& a) override {
    return submit(target, a, cpu::run_rotg, a.on_host);
  }

  cublasStatus_t level2(const libs::StreamTarget& target, const Level2Args& a) override {
    if (!fits_int({a.m, a.n, a.kl, a.ku, a.lda, a.incx, a.incy}))
      return too_large("a level 2 operation");
    return submit(target, a, cpu::run_level2, false);
  }

  cublasStatus_t level3(const libs::StreamTarget& target, const Level3Args& a) override {
    if (!fits_int({a.m, a.n, a.k, a.lda, a.ldb, a.ldc})) return too_large("a level 3 operation");
    return submit(target, a, cpu::run_level3, false);
  }

  cublasStatus_t gemm(const libs::StreamTarget& target, const GemmArgs& a) override {
    if (!fits_int({a.m, a.n, a.k, a.lda, a.ldb, a.ldc})) return too_large("a gemm");
    return submit(target, a, cpu::run_gemm, false);
  }

  cublasStatus_t lu_batched(const libs::StreamTarget& target, const LuBatchedArgs& a) override {
    if (!fits_int({a.n, a.nrhs, a.lda, a.ldb, a.n * a.batch}))
      return too_large("a batched LU operation");
    return submit(target, a, cpu::run_lu_batched, false);
  }

  cublasStatus_t gels_batched(const libs::StreamTarget& target, const GelsBatchedArgs& a) override {
    if (!fits_int({a.m, a.n, a.nrhs, a.lda, a.ldc})) return too_large("gelsBatched");
    return submit(target, a, run_gels_batched, false);
  }
};

} // namespace

std::unique_ptr<BlasBackend> make_cpu_backend() {
  libs::coordinate_openblas_threads();
  return std::make_unique<CpuBackend>();
}

} // namespace mimic::cublas
