// A program: the device code of one image (a fatbin, a fatbin wrapper, PTX text),
// selected for a device, parsed and verified, with its kernels' parameter layouts and its
// global variables. Backend-neutral; backends compile it (codegen) into something to run.
//
// Loading fails as a whole, naming every kernel that cannot be used and why: nothing is
// dropped silently to surface later as "named symbol not found".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ptx/parser.h"
#include "runtime/link_image.h"
#include "support/error.h"

namespace mimic::runtime {

struct ParamSlot {
  size_t offset = 0; // in the packed argument buffer
  size_t size = 0;
  size_t align = 1;
};

struct KernelInfo {
  std::string name;
  const ptx::Function* function = nullptr; // in Program::modules
  const ptx::Module* module = nullptr;
  std::vector<ParamSlot> params;
  size_t param_bytes = 0;        // packed size of all parameters
  int max_threads_per_block = 0; // from .maxntid / .reqntid (0: unconstrained)
  unsigned cluster_dims[3] = {0, 0, 0}; // from .reqnctapercluster (0: set at launch, or none)
  // The block's shared window: every .shared variable the kernel reaches (its own and the
  // module-level ones named by it or by the functions it calls) at an offset, then the
  // dynamic shared memory (extern .shared arrays, all at dynamic_shared_offset).
  struct SharedVar {
    std::string name;
    size_t offset = 0;
  };
  std::vector<SharedVar> shared;
  size_t static_shared_bytes = 0;
  size_t dynamic_shared_offset = 0;
  size_t local_bytes = 0;
  const SharedVar* shared_var(std::string_view name) const {
    for (const SharedVar& v : shared)
      if (v.name == name)
        return &v;
    return nullptr;
  }
};

// The names the instructions of a body mention (registers, symbols, called functions),
// nested blocks included.
void mentioned_names(const ptx::Block& b, std::vector<std::string_view>& out);

// Alignment of a declared variable in bytes (its type, vector width and .align).
size_t declared_align(const ptx::VarDecl& d);

struct GlobalInfo {
  std::string name;
  const ptx::VarDecl* decl = nullptr;
  const ptx::Module* module = nullptr;
  size_t size = 0;
  size_t align = 1;
  bool managed = false;
  bool constant = false; // .const space
};

struct Program {
  std::string origin;        // what was loaded, for messages
  std::string selected;      // which entry: "PTX sm_75 (ISA 9.0)"
  std::vector<std::unique_ptr<ptx::Module>> modules;
  std::vector<KernelInfo> kernels;
  std::vector<GlobalInfo> globals;

  const KernelInfo* kernel(std::string_view name) const;
  const GlobalInfo* global(std::string_view name) const;
};

// Loads device code from a driver-API image pointer. `device_sm` picks the PTX
// (fatbin/select.h). The error text names the image, the entry and each failing kernel;
// its code is the CUresult to return (CUDA_ERROR_INVALID_IMAGE, _NO_BINARY_FOR_GPU,
// _INVALID_PTX).
Result<std::shared_ptr<Program>> load_program(const void* image, unsigned device_sm);
// The same from PTX text (cuModuleLoadData with PTX, tests).
Result<std::shared_ptr<Program>> load_program_from_ptx(std::string text, std::string origin);
// One program of several PTX modules linked together (a linked image, runtime/link_image.h,
// as -rdc programs are): the error names every module and function that cannot be used.
Result<std::shared_ptr<Program>> load_linked_program(std::vector<PtxSource> modules, std::string origin);

// Packed parameter layout of a function (natural alignment, as the CUDA ABI packs them).
std::vector<ParamSlot> param_layout(const ptx::Function& f, size_t* total_bytes);

// Writes the initial bytes of a global into `out` (size bytes). `address_of` resolves a
// symbol named in an initializer (another global) to its device address.
Status initialize_global(const GlobalInfo& global, uint8_t* out,
                         const std::function<Result<uint64_t>(std::string_view)>& address_of);

} // namespace mimic::runtime
