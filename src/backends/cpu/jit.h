// Compiling programs for the CPU and running their kernels.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "runtime/backend.h"
#include "runtime/program.h"

namespace mimic::cpu {

Result<std::shared_ptr<runtime::CompiledProgram>> compile_for_cpu(
    const runtime::Program& program, const std::map<std::string, void*, std::less<>>& globals);
CUresult launch_on_cpu(runtime::CompiledProgram& program, size_t kernel, const runtime::LaunchShape& shape,
                       const void* args);

} // namespace mimic::cpu
