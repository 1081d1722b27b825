// Compiling programs for the CPU and running their kernels.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>

#include "runtime/backend.h"
#include "runtime/program.h"

namespace mimic::cpu {

// Lazy: a program of several kernels is lowered (checked) now and each kernel compiled at
// its first launch; `program` must outlive the result (runtime::Module keeps both).
// Eager: everything now (`mimic cache warm`).
enum class CompileMode { Lazy, Eager };

Result<std::shared_ptr<runtime::CompiledProgram>> compile_for_cpu(
    const runtime::Program& program, const std::map<std::string, void*, std::less<>>& globals,
    CompileMode mode = CompileMode::Lazy);
// A program's kernels as the CPU backend compiles them (lowered, optimised for this
// machine), for `mimic compile --target cpu`: a relocatable object file, assembly or the
// optimised LLVM IR. The kernels' symbols are mimic_kernel_N in Program::kernels order;
// with `block`, every kernel's code is for blocks of that shape only, named as the JIT
// names such code (codegen/block_shape.h: mimic_kernel_N.block.XxYxZ). `cpu`, when not
// empty, is another x86-64 CPU to compile for (LLVM's name; its features are its own).
enum class CpuCodeForm { Object, Assembly, LlvmIr };
Result<std::string> compile_cpu_code(const runtime::Program& program, CpuCodeForm form,
                                     const std::optional<std::array<uint32_t, 3>>& block = std::nullopt,
                                     const std::string& cpu = {});

CUresult launch_on_cpu(runtime::CompiledProgram& program, size_t kernel, const runtime::LaunchShape& shape,
                       const void* args);

} // namespace mimic::cpu
