// JIT options (CUjit_option) as cuLinkCreate, cuLinkAddData and cuModuleLoadDataEx take
// them: validated, and the outputs CUDA defines written back (log buffers, the number of
// log bytes written, the wall time). Mimic compiles PTX with LLVM, so the options that tune
// NVIDIA's compiler (registers, cache modes, targets) are checked and recorded but change
// nothing.
#pragma once

#include <cuda.h>

#include <string>

namespace mimic::driver {

class JitOptions {
public:
  // Checks the options; the arrays stay the caller's, and CUDA requires them to stay valid
  // while outputs may be written (until cuLinkDestroy for a link state).
  CUresult parse(unsigned count, CUjit_option* options, void** values);

  // Copies the logs into the caller's buffers (truncated, NUL-terminated) and stores in
  // the *_LOG_BUFFER_SIZE_BYTES slots how many bytes were written, NUL included.
  void write_logs(const std::string& info, const std::string& error) const;
  void write_wall_time(float milliseconds) const;

  int optimization_level() const { return optimization_level_; }
  bool verbose() const { return verbose_; }

private:
  unsigned count_ = 0;
  CUjit_option* options_ = nullptr;
  void** values_ = nullptr;
  char* info_log_ = nullptr;
  size_t info_size_ = 0;
  char* error_log_ = nullptr;
  size_t error_size_ = 0;
  int optimization_level_ = 4;
  bool verbose_ = false;
};

} // namespace mimic::driver
