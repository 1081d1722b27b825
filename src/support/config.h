// Settings read from the environment (once, on first use).
#pragma once

#include <optional>
#include <string_view>
#include <utility>

namespace mimic::config {

// MIMIC_COMPUTE_CAPABILITY ("8.6", "86", "12.0"); 8.6 when unset. An unusable value is
// reported once and ignored.
std::pair<int, int> compute_capability();

// MIMIC_CHECK=memory: kernels check every global, generic and shared access against the
// live allocations and report the first bad one (kernel, PTX line, block, thread).
bool check_memory();

// MIMIC_THREADS: how many host threads run a launch's blocks (the CPU device's
// multiprocessors); the machine's hardware threads when unset.
unsigned worker_threads();

// MIMIC_LAUNCH=async: every kernel launch goes to its stream's worker thread. By default a
// launch on a stream with nothing pending runs on the launching thread (the launch returns
// when the kernel has run), which saves two thread hand-offs per launch; a program whose
// kernel waits for the host to act after the launch returns needs async.
bool inline_launches();

// MIMIC_BACKEND: which backends provide devices. `auto` (unset): the AMD GPUs the HIP runtime
// finds, as devices 0.., then the CPU; `cpu`: only the CPU; `amdgpu`: only AMD GPUs (none
// when there is no usable one, so CUDA reports no device). An unknown value is reported once
// and treated as auto.
enum class BackendChoice { Auto, Cpu, Amdgpu };
BackendChoice backend_choice();
// Parses a MIMIC_BACKEND / `mimic run --backend` value; nullopt when it names no backend.
std::optional<BackendChoice> parse_backend_choice(std::string_view value);

// A switch that is on unless `variable` is set to 0 or off: the code generator's
// MIMIC_INTERCHANGE, MIMIC_PREFETCH and the like, for measuring what each pass is worth.
// Read at each call (tests set them per process; the JIT cache keys on them).
bool switched_on(const char* variable);

} // namespace mimic::config
