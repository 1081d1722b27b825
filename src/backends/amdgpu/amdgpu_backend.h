// The AMD GPU backend: RDNA GPUs driven through AMD's HIP runtime. Device memory is hipMalloc
// memory (one address space with the host, but not dereferenceable by it), kernels are
// AMDGPU code objects (code_object.h) loaded with hipModuleLoadData and launched with
// hipModuleLaunchKernel.
#pragma once

#include <memory>
#include <vector>

#include "backends/amdgpu/code_object.h"
#include "backends/amdgpu/hip_devices.h"
#include "runtime/backend.h"
#include "runtime/program.h"

namespace mimic::amdgpu {

// A backend over the supported GPUs of `devices` (those of `hip`), or an error saying why
// there is none: no supported GPU, naming each GPU found and why Mimic cannot use it.
Result<std::unique_ptr<runtime::Backend>> create_amdgpu_backend(const HipApi& hip,
                                                                std::vector<HipDevice> devices);

// The process's AMD GPU backend: loads the HIP runtime (hip_runtime()), enumerates its GPUs
// and keeps the supported ones. The error says why there is none ("HIP runtime not found:
// tried ...", "hipGetDeviceCount failed ...", "no supported AMD GPU: ...").
Result<std::unique_ptr<runtime::Backend>> create_amdgpu_backend();

// Loads a compiled code object on backend device `device` of an AMD GPU backend and finds
// its kernels (`program`'s kernels, in order): the second half of Backend::compile, apart
// for tests that bring their own code object.
Result<std::shared_ptr<runtime::CompiledProgram>> load_code_object(runtime::Backend& backend,
                                                                   size_t device,
                                                                   const CodeObject& code,
                                                                   const runtime::Program& program);

} // namespace mimic::amdgpu
