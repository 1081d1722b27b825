#include "backends/amdgpu/texture_library.h"

#include <cuda.h>

#include <string>
#include <vector>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>

#ifdef MIMIC_AMDGPU_TEXTURE_HELPERS
#include "amdgpu_texture_device.inc" // kTextureHelpersBitcode
#endif

namespace mimic::amdgpu {

namespace {

constexpr const char* kHelpers[] = {"mimic_tex_fetch", "mimic_surface_access",
                                    "mimic_texture_query"};

} // namespace

Status link_texture_helpers(llvm::Module& m, const std::string& origin) {
  bool used = false;
  for (const char* name : kHelpers)
    if (llvm::Function* f = m.getFunction(name); f && f->isDeclaration()) used = true;
  if (!used) return {};
#ifndef MIMIC_AMDGPU_TEXTURE_HELPERS
  return Error(origin + ": its kernels use textures or surfaces, and this Mimic was built without "
                        "the AMDGPU texture helpers (no clang of its LLVM's version at build time; "
                        "set MIMIC_AMDGCN_CLANG and rebuild)",
               CUDA_ERROR_NOT_SUPPORTED);
#else
  llvm::StringRef bytes(reinterpret_cast<const char*>(kTextureHelpersBitcode),
                        sizeof kTextureHelpersBitcode);
  auto library = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bytes, "amdgpu_texture_device.bc"),
                                        m.getContext());
  if (!library)
    return Error(origin + ": internal error, the AMDGPU texture helpers' bitcode cannot be read: " +
                     llvm::toString(library.takeError()),
                 CUDA_ERROR_UNKNOWN);
  std::unique_ptr<llvm::Module> helpers = std::move(library.get());
  helpers->setDataLayout(m.getDataLayout());
  helpers->setTargetTriple(m.getTargetTriple());
  // The module's flags (code object version ...) are the ones that count.
  if (llvm::NamedMDNode* flags = helpers->getModuleFlagsMetadata())
    helpers->eraseNamedMetadata(flags);
  std::vector<std::string> defined;
  for (llvm::Function& f : *helpers) {
    // Built for no particular GPU: the module's target and features apply (compile.cpp sets
    // them on every definition after this).
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    if (!f.isDeclaration()) defined.push_back(f.getName().str());
  }
  if (llvm::Linker::linkModules(m, std::move(helpers), llvm::Linker::LinkOnlyNeeded))
    return Error(origin + ": internal error, linking the AMDGPU texture helpers failed",
                 CUDA_ERROR_UNKNOWN);
  // Internal: only this module's kernels call them, and the optimiser may inline and drop them.
  for (const std::string& name : defined)
    if (llvm::Function* f = m.getFunction(name); f && !f->isDeclaration()) {
      f->setComdat(nullptr);
      f->setVisibility(llvm::GlobalValue::DefaultVisibility);
      f->setLinkage(llvm::GlobalValue::InternalLinkage);
    }
  return {};
#endif
}

} // namespace mimic::amdgpu
