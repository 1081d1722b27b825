// Modules (CUmodule: a program loaded into one context, its globals in that context's
// memory), functions (CUfunction), libraries (CUlibrary: a program loaded into every
// context that uses it, on demand) and library kernels (CUkernel).
#pragma once

#include <atomic>
#include <cuda.h>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/context.h"
#include "runtime/program.h"

namespace mimic::runtime {

struct Module;

struct Function {
  Module* module = nullptr;
  const KernelInfo* info = nullptr;
  int max_dynamic_shared_bytes = 0; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  int preferred_shared_carveout = -1;
  int required_cluster[3] = {0, 0, 0};
  CUfunc_cache cache_config = CU_FUNC_CACHE_PREFER_NONE;
};

struct Library;

struct Module {
  Context* context = nullptr;
  std::shared_ptr<Program> program;
  Library* library = nullptr; // when it belongs to a library
  std::vector<std::unique_ptr<Function>> functions; // one per kernel, in program order
  struct GlobalMemory {
    void* address;
    size_t size;
  };
  std::map<std::string, GlobalMemory, std::less<>> globals;
  std::shared_ptr<CompiledProgram> compiled; // the backend's code for this module

  Function* function(std::string_view name) const;
};

struct KernelHandle {
  Library* library = nullptr;
  const KernelInfo* info = nullptr;
  // The function this kernel resolved to last (resolve_function): a launch through a
  // CUkernel then costs two handle lookups instead of the library's lock and module map.
  std::atomic<Function*> last_function{nullptr};
};

struct Library {
  std::shared_ptr<Program> program;
  std::vector<std::unique_ptr<KernelHandle>> kernels;
  std::mutex mutex;
  std::map<Context*, Module*> modules; // loaded per context on first use

  KernelHandle* kernel(std::string_view name) const;
};

// Loads a program into a context: allocates and initialises its globals.
Result<Module*> create_module(Context* context, std::shared_ptr<Program> program, Library* library = nullptr);
CUresult destroy_module(Module* module);

Result<Library*> create_library(std::shared_ptr<Program> program);
CUresult destroy_library(Library* library);
// The library's module in a context, loaded on first use.
Result<Module*> library_module(Library* library, Context* context);

// Unloads every module of a context (libraries' modules too: they load again on next use).
void retire_modules(Context* context);

Module* find_module(CUmodule handle);
Function* find_function(CUfunction handle);
Library* find_library(CUlibrary handle);
KernelHandle* find_kernel(CUkernel handle);

// A CUfunction argument that may also be a CUkernel (cuLaunchKernel accepts both):
// resolved to the function of the kernel's library module in `context`.
Result<Function*> resolve_function(CUfunction handle, Context* context);

} // namespace mimic::runtime
