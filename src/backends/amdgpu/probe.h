// What this machine offers Mimic's AMD GPU backend, for `mimic doctor` and `mimic run
// --backend amdgpu`: the HIP runtime (where, which version, or why not), each GPU and whether
// Mimic supports it, and which of AMD's math libraries are installed. Needs no code
// generation; loads the HIP runtime (hip_runtime()) if it was not loaded yet.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mimic::amdgpu {

struct ProbedGpu {
  int hip_ordinal = 0;
  std::string name;      // "AMD Radeon RX 7900 XTX"
  std::string gfx;       // "gfx1100"; empty when the runtime does not say
  std::string arch_name; // as HIP reports it, "gfx1100:sramecc-:xnack-"
  uint64_t total_memory = 0;
  int compute_units = 0;
  bool supported = false; // Mimic generates code for it (it is a CUDA device of the process)
  std::string reason;     // when not supported: why
};

struct ProbedLibrary {
  std::string name; // "rocBLAS"
  std::string file; // the file looked for, "librocblas.so"
  bool present = false;
  std::string path; // where it was found
};

struct ProbeReport {
  bool hip_found = false;  // a HIP runtime library loaded with every function Mimic needs
  std::string hip_path;    // the library loaded
  int runtime_version = 0; // hipRuntimeGetVersion (0: unknown)
  int driver_version = 0;  // hipDriverGetVersion (0: unknown)
  std::string runtime_version_text, driver_version_text; // "6.4.43482"
  std::vector<ProbedGpu> gpus;                           // every GPU the runtime reports
  // Why Mimic has no AMD GPU to use (no runtime, the runtime finds no GPU, none supported);
  // empty when at least one GPU is supported.
  std::string reason;
  std::vector<ProbedLibrary>
      math_libraries; // rocBLAS, hipBLASLt, MIOpen, rocFFT, hipFFT, rocSPARSE, rocRAND

  bool usable() const { return reason.empty(); }
};

// Probes once per call (the HIP runtime itself is loaded once per process).
ProbeReport probe();

// The math libraries part alone (no HIP needed): looks in LD_LIBRARY_PATH, beside the HIP
// runtime (`hip_directory`, may be empty), $ROCM_PATH/lib, /opt/rocm/lib and the system's
// library directories for each library's file, any soname version.
std::vector<ProbedLibrary> probe_math_libraries(const std::string& hip_directory);

} // namespace mimic::amdgpu
