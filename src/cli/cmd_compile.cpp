// mimic compile --target TARGET [--emit obj|asm|llvm] [--block X[,Y[,Z]]] [--cpu NAME] IN.ptx -o OUT
//
// Compiles a PTX file standalone, as a backend would at module load: for an AMD GPU
// (`--target gfx1100`) into a linked AMDGPU code object (what hipModuleLoadData takes; its
// variables defined with their initial values), for the CPU backend (`--target cpu`) into a
// relocatable object of this machine. `--emit asm|llvm` writes the assembly or the
// optimised LLVM IR instead. `--block` (CPU) compiles each kernel's code for blocks of one
// shape, as the JIT compiles a kernel's first optimised code for its first launch's shape.
// `--cpu NAME` (CPU) compiles for another x86-64 CPU than this one (its features are the
// CPU's own): what the code would be there, and tests that must not depend on the machine.
#include <cstdio>
#include <array>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

#include "backends/cpu/jit.h"
#include "cli/commands.h"
#include "runtime/program.h"
#include "support/file.h"
#ifdef MIMIC_HAVE_AMDGPU_CODEGEN
#include "backends/amdgpu/code_object.h"
#endif

namespace mimic::cli {

namespace {

std::string amdgpu_targets() {
#ifdef MIMIC_HAVE_AMDGPU_CODEGEN
  std::string all;
  for (const std::string& t : amdgpu::supported_targets())
    all += (all.empty() ? "" : ", ") + t;
  return all;
#else
  return "none: this build has no AMDGPU code generation (LLVM's AMDGPU target and lld)";
#endif
}

int usage(FILE* out) {
  fprintf(
      out,
      "usage: mimic compile --target TARGET [--emit obj|asm|llvm] [--block X[,Y[,Z]]] [--cpu NAME]\n"
      "                     IN.ptx -o OUT\n"
      "  --target cpu      this machine's CPU, as the CPU backend compiles (a relocatable object)\n"
      "  --target gfxNNNN  an AMD GPU: a linked code object (.hsaco) for the HIP runtime\n"
      "  --emit obj        the object or code object (default); asm: assembly; llvm: the optimised "
      "LLVM IR;\n"
      "                    kernels: each kernel's parameter layout and static shared memory as the "
      "runtime\n"
      "                    lays them out (one line each: NAME OFFSET:SIZE:ALIGN... shared=BYTES)\n"
      "  --block X,Y,Z     (cpu) code for blocks of that shape only, as the JIT compiles a kernel's\n"
      "                    first launch (symbols mimic_kernel_N.block.XxYxZ)\n"
      "  --cpu NAME        (cpu) for that x86-64 CPU as LLVM names it (znver3, x86-64-v4, ...)\n"
      "                    instead of this machine's\n"
      "AMD GPU targets: %s\n",
      amdgpu_targets().c_str());
  return out == stdout ? 0 : 2;
}

// "256" or "32,8" or "8,8,4": each dimension 1..1024, at most 1024 threads in all.
std::optional<std::array<uint32_t, 3>> parse_block(const std::string& text) {
  std::array<uint32_t, 3> shape{1, 1, 1};
  size_t at = 0;
  for (size_t d = 0; d < 3; ++d) {
    size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(text.substr(at), &used);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (used == 0 || v == 0 || v > 1024) return std::nullopt;
    shape[d] = uint32_t(v);
    at += used;
    if (at == text.size()) break;
    if (text[at] != ',' || d == 2) return std::nullopt;
    ++at;
  }
  if (at != text.size() || uint64_t(shape[0]) * shape[1] * shape[2] > 1024) return std::nullopt;
  return shape;
}

bool write_file(const std::string& path, const void* data, size_t size) {
  FILE* f = path == "-" ? stdout : fopen(path.c_str(), "wb");
  if (!f) {
    fprintf(stderr, "mimic compile: cannot write %s: %s\n", path.c_str(), strerror(errno));
    return false;
  }
  bool ok = fwrite(data, 1, size, f) == size;
  if (f != stdout) ok = fclose(f) == 0 && ok;
  if (!ok) fprintf(stderr, "mimic compile: writing %s failed\n", path.c_str());
  return ok;
}

} // namespace

int cmd_compile(const Args& args) {
  std::string target, emit = "obj", input, output, block, cpu_name;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& into) {
      if (i + 1 >= args.size()) {
        fprintf(stderr, "mimic compile: %s needs a value\n", a.c_str());
        return false;
      }
      into = args[++i];
      return true;
    };
    if (a == "--help" || a == "-h") return usage(stdout);
    if (a == "--target" || a == "-t") {
      if (!value(target)) return 2;
    } else if (a.starts_with("--target=")) {
      target = a.substr(9);
    } else if (a == "--emit") {
      if (!value(emit)) return 2;
    } else if (a.starts_with("--emit=")) {
      emit = a.substr(7);
    } else if (a == "--block") {
      if (!value(block)) return 2;
    } else if (a.starts_with("--block=")) {
      block = a.substr(8);
    } else if (a == "--cpu") {
      if (!value(cpu_name)) return 2;
    } else if (a.starts_with("--cpu=")) {
      cpu_name = a.substr(6);
    } else if (a == "-o") {
      if (!value(output)) return 2;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      fprintf(stderr, "mimic compile: unknown option '%s'\n", a.c_str());
      return usage(stderr);
    } else if (input.empty()) {
      input = a;
    } else {
      fprintf(stderr, "mimic compile: one input file only ('%s' and '%s')\n", input.c_str(),
              a.c_str());
      return 2;
    }
  }
  if (target.empty() || input.empty() || output.empty()) {
    fprintf(stderr, "mimic compile: %s is missing\n",
            target.empty()  ? "--target"
            : input.empty() ? "the input"
                            : "-o OUT");
    return usage(stderr);
  }
  if (emit != "obj" && emit != "asm" && emit != "llvm" && emit != "kernels") {
    fprintf(stderr, "mimic compile: --emit is obj, asm, llvm or kernels, not '%s'\n", emit.c_str());
    return 2;
  }
  std::optional<std::array<uint32_t, 3>> shape;
  if (!block.empty()) {
    shape = parse_block(block);
    if (!shape) {
      fprintf(stderr, "mimic compile: --block is X[,Y[,Z]], each 1-1024 and 1024 threads at most, not '%s'\n",
              block.c_str());
      return 2;
    }
    if (target != "cpu") {
      fprintf(stderr, "mimic compile: --block is for --target cpu only\n");
      return 2;
    }
  }
  if (!cpu_name.empty() && target != "cpu") {
    fprintf(stderr, "mimic compile: --cpu is for --target cpu only\n");
    return 2;
  }
  auto text = read_text_file(input);
  if (!text) {
    fprintf(stderr, "mimic compile: %s\n", text.error().message().c_str());
    return 1;
  }
  auto program = runtime::load_program_from_ptx(std::move(text.value()), input);
  if (!program) {
    fprintf(stderr, "mimic compile: %s\n", program.error().message().c_str());
    return 1;
  }
  if (emit == "kernels") { // the launch's view, for checking what a backend generated
    std::string lines;
    for (const runtime::KernelInfo& k : program.value()->kernels) {
      lines += k.name;
      for (const runtime::ParamSlot& p : k.params)
        lines += " " + std::to_string(p.offset) + ":" + std::to_string(p.size) + ":" +
                 std::to_string(p.align);
      lines += " shared=" + std::to_string(k.static_shared_bytes) + "\n";
    }
    return write_file(output, lines.data(), lines.size()) ? 0 : 1;
  }
  if (target == "cpu") {
    auto form = emit == "llvm"  ? cpu::CpuCodeForm::LlvmIr
                : emit == "asm" ? cpu::CpuCodeForm::Assembly
                                : cpu::CpuCodeForm::Object;
    auto code = cpu::compile_cpu_code(*program.value(), form, shape, cpu_name);
    if (!code) {
      fprintf(stderr, "mimic compile: %s\n", code.error().message().c_str());
      return 1;
    }
    return write_file(output, code->data(), code->size()) ? 0 : 1;
  }
#ifdef MIMIC_HAVE_AMDGPU_CODEGEN
  if (!amdgpu::is_supported_target(target)) {
    fprintf(stderr, "mimic compile: unknown target '%s'; targets: cpu, %s\n", target.c_str(),
            amdgpu_targets().c_str());
    return 2;
  }
  if (emit != "obj") {
    auto code = amdgpu::compile_to_text(*program.value(), target,
                                        emit == "llvm" ? amdgpu::TextForm::LlvmIr
                                                       : amdgpu::TextForm::Assembly);
    if (!code) {
      fprintf(stderr, "mimic compile: %s\n", code.error().message().c_str());
      return 1;
    }
    return write_file(output, code->data(), code->size()) ? 0 : 1;
  }
  auto co = amdgpu::compile_code_object(*program.value(), target, nullptr);
  if (!co) {
    fprintf(stderr, "mimic compile: %s\n", co.error().message().c_str());
    return 1;
  }
  return write_file(output, co->elf.data(), co->elf.size()) ? 0 : 1;
#else
  fprintf(stderr, "mimic compile: unknown target '%s'; targets: cpu (AMD GPUs: %s)\n",
          target.c_str(), amdgpu_targets().c_str());
  return 2;
#endif
}

} // namespace mimic::cli
