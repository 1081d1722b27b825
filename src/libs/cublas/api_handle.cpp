#include "libs/cublas/api_handle.h"

#include "libs/cublas/api_boundary.h"
#include "libs/cublas/handle.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace mimic::cublas::impl {

#define MIMIC_CUBLAS_HANDLE(name, h)                                                               \
  Handle* name = find_handle(h);                                                                   \
  if (!name) return CUBLAS_STATUS_NOT_INITIALIZED

cublasStatus_t create(cublasHandle_t* out) {
  if (!out) return CUBLAS_STATUS_INVALID_VALUE;
  Handle* handle = nullptr;
  if (cublasStatus_t s = create_handle(&handle)) return s;
  *out = reinterpret_cast<cublasHandle_t>(handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t destroy(cublasHandle_t handle) {
  return destroy_handle(handle);
}

cublasStatus_t get_version(cublasHandle_t h, int* version) {
  MIMIC_CUBLAS_HANDLE(handle, h);
  if (!version) return CUBLAS_STATUS_INVALID_VALUE;
  *version = CUBLAS_VERSION;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t get_property(libraryPropertyType type, int* value) {
  if (!value) return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
  case MAJOR_VERSION:
    *value = CUBLAS_VER_MAJOR;
    return CUBLAS_STATUS_SUCCESS;
  case MINOR_VERSION:
    *value = CUBLAS_VER_MINOR;
    return CUBLAS_STATUS_SUCCESS;
  case PATCH_LEVEL:
    *value = CUBLAS_VER_PATCH;
    return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

size_t cudart_version() {
  return CUDART_VERSION;
}

cublasStatus_t set_workspace(cublasHandle_t h, void* workspace, size_t bytes) {
  MIMIC_CUBLAS_HANDLE(handle, h);
  if (bytes && !workspace) return CUBLAS_STATUS_INVALID_VALUE;
  // The CPU backend needs no device workspace; it is kept for the getters of later
  // backends.
  handle->workspace = workspace;
  handle->workspace_bytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t set_stream(cublasHandle_t h, cudaStream_t stream) {
  MIMIC_CUBLAS_HANDLE(handle, h);
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t get_stream(cublasHandle_t h, cudaStream_t* stream) {
  MIMIC_CUBLAS_HANDLE(handle, h);
  if (!stream) return CUBLAS_STATUS_INVALID_VALUE;
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

// One getter/setter pair of a handle field; the setter accepts `valid` values only.
template <typename T> cublasStatus_t get_field(cublasHandle_t h, T Handle::* field, T* out) {
  MIMIC_CUBLAS_HANDLE(handle, h);
  if (!out) return CUBLAS_STATUS_INVALID_VALUE;
  *out = handle->*field;
  return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
cublasStatus_t set_field(cublasHandle_t h, T Handle::* field, T value, bool valid) {
  MIMIC_CUBLAS_HANDLE(handle, h);
  if (!valid) return CUBLAS_STATUS_INVALID_VALUE;
  handle->*field = value;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t get_pointer_mode(cublasHandle_t h, cublasPointerMode_t* mode) {
  return get_field(h, &Handle::pointer_mode, mode);
}
cublasStatus_t set_pointer_mode(cublasHandle_t h, cublasPointerMode_t mode) {
  return set_field(h, &Handle::pointer_mode, mode,
                   mode == CUBLAS_POINTER_MODE_HOST || mode == CUBLAS_POINTER_MODE_DEVICE);
}
cublasStatus_t get_atomics_mode(cublasHandle_t h, cublasAtomicsMode_t* mode) {
  return get_field(h, &Handle::atomics_mode, mode);
}
cublasStatus_t set_atomics_mode(cublasHandle_t h, cublasAtomicsMode_t mode) {
  return set_field(h, &Handle::atomics_mode, mode,
                   mode == CUBLAS_ATOMICS_NOT_ALLOWED || mode == CUBLAS_ATOMICS_ALLOWED);
}
cublasStatus_t get_math_mode(cublasHandle_t h, cublasMath_t* mode) {
  return get_field(h, &Handle::math_mode, mode);
}
cublasStatus_t set_math_mode(cublasHandle_t h, cublasMath_t mode) {
  // The CPU backend computes every mode at full precision, which each mode allows.
  unsigned base = unsigned(mode) & ~unsigned(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  bool valid =
      base <= CUBLAS_FP32_EMULATED_BF16X9_MATH || base == CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH;
  return set_field(h, &Handle::math_mode, mode, valid);
}
cublasStatus_t get_sm_count_target(cublasHandle_t h, int* count) {
  return get_field(h, &Handle::sm_count_target, count);
}
cublasStatus_t set_sm_count_target(cublasHandle_t h, int count) {
  return set_field(h, &Handle::sm_count_target, count, count >= 0);
}
cublasStatus_t get_emulation_strategy(cublasHandle_t h, cublasEmulationStrategy_t* strategy) {
  return get_field(h, &Handle::emulation_strategy, strategy);
}
cublasStatus_t set_emulation_strategy(cublasHandle_t h, cublasEmulationStrategy_t strategy) {
  return set_field(h, &Handle::emulation_strategy, strategy,
                   strategy >= CUBLAS_EMULATION_STRATEGY_DEFAULT &&
                       strategy <= CUBLAS_EMULATION_STRATEGY_EAGER);
}

// --- Status names ------------------------------------------------------------------------

namespace {

struct StatusText {
  cublasStatus_t status;
  const char* name;
  const char* text;
};

constexpr StatusText status_texts[] = {
    {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "success"},
    {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED",
     "the library was not initialized"},
    {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
    {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
     "an invalid numeric value was used as an argument"},
    {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH",
     "an absent device architectural feature is required"},
    {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR",
     "an access to GPU memory space failed"},
    {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED",
     "the GPU program failed to execute"},
    {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"},
    {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED",
     "the functionality requested is not supported"},
    {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR",
     "error detected trying to check the license"},
};

const StatusText* find_status(cublasStatus_t status) {
  for (const StatusText& s : status_texts)
    if (s.status == status) return &s;
  return nullptr;
}

} // namespace

const char* status_name(cublasStatus_t status) {
  const StatusText* s = find_status(status);
  return s ? s->name : "CUBLAS_STATUS_UNKNOWN";
}

const char* status_string(cublasStatus_t status) {
  const StatusText* s = find_status(status);
  return s ? s->text : "unknown error";
}

// --- The logger -----------------------------------------------------------------------

namespace {

struct Logger {
  std::mutex mutex;
  bool on = false, to_stdout = false, to_stderr = false;
  FILE* file = nullptr;
  cublasLogCallback callback = nullptr;
};

Logger& logger() {
  static Logger* l = [] {
    auto* made = new Logger; // outlives exit handlers
    // CUBLAS_LOGINFO_DBG=1 turns the log on, CUBLAS_LOGDEST_DBG names stdout, stderr or a file.
    const char* on = std::getenv("CUBLAS_LOGINFO_DBG");
    if (on && std::strcmp(on, "1") == 0) {
      made->on = true;
      const char* dest = std::getenv("CUBLAS_LOGDEST_DBG");
      if (!dest || std::strcmp(dest, "stdout") == 0)
        made->to_stdout = true;
      else if (std::strcmp(dest, "stderr") == 0)
        made->to_stderr = true;
      else
        made->file = std::fopen(dest, "a");
    }
    return made;
  }();
  return *l;
}

std::atomic<bool> log_wanted{false};
std::once_flag log_env_read;

} // namespace

bool api_log_enabled() noexcept {
  std::call_once(log_env_read, [] {
    Logger& l = logger();
    log_wanted = l.on;
  });
  return log_wanted.load(std::memory_order_relaxed);
}

void api_log(const char* api, cublasStatus_t status) noexcept {
  try {
    std::string line = std::string("I! cuBLAS (v") + std::to_string(CUBLAS_VER_MAJOR) + "." +
                       std::to_string(CUBLAS_VER_MINOR) + ") function " + api + " returned " +
                       status_name(status);
    Logger& l = logger();
    std::lock_guard lock(l.mutex);
    if (l.callback) {
      l.callback(line.c_str());
      return;
    }
    line += '\n';
    if (l.to_stdout) std::fputs(line.c_str(), stdout);
    if (l.to_stderr) std::fputs(line.c_str(), stderr);
    if (l.file) {
      std::fputs(line.c_str(), l.file);
      std::fflush(l.file);
    }
  } catch (...) {
  }
}

cublasStatus_t logger_configure(int log_on, int to_stdout, int to_stderr, const char* file_name) {
  api_log_enabled(); // the environment first, so that this configuration wins
  Logger& l = logger();
  std::lock_guard lock(l.mutex);
  l.on = log_on != 0;
  l.to_stdout = to_stdout != 0;
  l.to_stderr = to_stderr != 0;
  if (l.file) std::fclose(l.file);
  l.file = file_name && *file_name ? std::fopen(file_name, "a") : nullptr;
  log_wanted = l.on;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t set_logger_callback(cublasLogCallback callback) {
  api_log_enabled();
  Logger& l = logger();
  std::lock_guard lock(l.mutex);
  l.callback = callback;
  // A callback receives the log: setting one turns the log on.
  l.on = l.on || callback;
  log_wanted = l.on;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t get_logger_callback(cublasLogCallback* callback) {
  if (!callback) return CUBLAS_STATUS_INVALID_VALUE;
  Logger& l = logger();
  std::lock_guard lock(l.mutex);
  *callback = l.callback;
  return CUBLAS_STATUS_SUCCESS;
}

// --- Set/Get Vector/Matrix ----------------------------------------------------------------

namespace {

// A strided vector or a column-major matrix is a pitched 2D region: `rows` rows of
// `width` bytes, `pitch` bytes apart.
CUDA_MEMCPY2D region_copy(bool to_device, const void* src, int64_t src_pitch, void* dst,
                          int64_t dst_pitch, int64_t width, int64_t rows) {
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = to_device ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  copy.dstMemoryType = to_device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  if (to_device) {
    copy.srcHost = src;
    copy.dstDevice = CUdeviceptr(dst);
  } else {
    copy.srcDevice = CUdeviceptr(src);
    copy.dstHost = dst;
  }
  copy.srcPitch = size_t(src_pitch);
  copy.dstPitch = size_t(dst_pitch);
  copy.WidthInBytes = size_t(width);
  copy.Height = size_t(rows);
  return copy;
}

cublasStatus_t copy_region(const CUDA_MEMCPY2D& copy, bool async, cudaStream_t stream) {
  if (copy.Height == 0 || copy.WidthInBytes == 0) return CUBLAS_STATUS_SUCCESS;
  CUcontext current = nullptr;
  if (cuCtxGetCurrent(&current) != CUDA_SUCCESS || !current) return CUBLAS_STATUS_NOT_INITIALIZED;
  return copy_status_from(async ? cuMemcpy2DAsync(&copy, stream) : cuMemcpy2D(&copy));
}

cublasStatus_t copy_vector(bool to_device, int64_t n, int64_t elem_size, const void* x,
                           int64_t incx, void* y, int64_t incy, bool async, cudaStream_t stream) {
  if (n < 0 || elem_size <= 0 || incx <= 0 || incy <= 0 || (n > 0 && (!x || !y)))
    return CUBLAS_STATUS_INVALID_VALUE;
  return copy_region(region_copy(to_device, x, incx * elem_size, y, incy * elem_size, elem_size, n),
                     async, stream);
}

cublasStatus_t copy_matrix(bool to_device, int64_t rows, int64_t cols, int64_t elem_size,
                           const void* A, int64_t lda, void* B, int64_t ldb, bool async,
                           cudaStream_t stream) {
  if (rows < 0 || cols < 0 || elem_size <= 0 || lda <= 0 || ldb <= 0 || lda < rows || ldb < rows)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (rows > 0 && cols > 0 && (!A || !B)) return CUBLAS_STATUS_INVALID_VALUE;
  // Columns are the rows of the pitched region.
  return copy_region(
      region_copy(to_device, A, lda * elem_size, B, ldb * elem_size, rows * elem_size, cols), async,
      stream);
}

} // namespace

cublasStatus_t set_vector(int64_t n, int64_t elem_size, const void* x, int64_t incx, void* y,
                          int64_t incy) {
  return copy_vector(true, n, elem_size, x, incx, y, incy, false, nullptr);
}
cublasStatus_t get_vector(int64_t n, int64_t elem_size, const void* x, int64_t incx, void* y,
                          int64_t incy) {
  return copy_vector(false, n, elem_size, x, incx, y, incy, false, nullptr);
}
cublasStatus_t set_vector_async(int64_t n, int64_t elem_size, const void* x, int64_t incx, void* y,
                                int64_t incy, cudaStream_t stream) {
  return copy_vector(true, n, elem_size, x, incx, y, incy, true, stream);
}
cublasStatus_t get_vector_async(int64_t n, int64_t elem_size, const void* x, int64_t incx, void* y,
                                int64_t incy, cudaStream_t stream) {
  return copy_vector(false, n, elem_size, x, incx, y, incy, true, stream);
}
cublasStatus_t set_matrix(int64_t rows, int64_t cols, int64_t elem_size, const void* A, int64_t lda,
                          void* B, int64_t ldb) {
  return copy_matrix(true, rows, cols, elem_size, A, lda, B, ldb, false, nullptr);
}
cublasStatus_t get_matrix(int64_t rows, int64_t cols, int64_t elem_size, const void* A, int64_t lda,
                          void* B, int64_t ldb) {
  return copy_matrix(false, rows, cols, elem_size, A, lda, B, ldb, false, nullptr);
}
cublasStatus_t set_matrix_async(int64_t rows, int64_t cols, int64_t elem_size, const void* A,
                                int64_t lda, void* B, int64_t ldb, cudaStream_t stream) {
  return copy_matrix(true, rows, cols, elem_size, A, lda, B, ldb, true, stream);
}
cublasStatus_t get_matrix_async(int64_t rows, int64_t cols, int64_t elem_size, const void* A,
                                int64_t lda, void* B, int64_t ldb, cudaStream_t stream) {
  return copy_matrix(false, rows, cols, elem_size, A, lda, B, ldb, true, stream);
}

} // namespace mimic::cublas::impl
