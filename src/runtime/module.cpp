#include "runtime/module.h"

#include <cstring>

#include "runtime/handle.h"
#include "runtime/memory.h"

namespace mimic::runtime {

namespace {

template <typename T> HandleRegistry<T>& registry() {
  static auto* r = new HandleRegistry<T>;
  return *r;
}

} // namespace

Function* Module::function(std::string_view name) const {
  for (const auto& f : functions)
    if (f->info->name == name)
      return f.get();
  return nullptr;
}

KernelHandle* Library::kernel(std::string_view name) const {
  for (const auto& k : kernels)
    if (k->info->name == name)
      return k.get();
  return nullptr;
}

Result<Module*> create_module(Context* context, std::shared_ptr<Program> program, Library* library) {
  auto m = std::make_unique<Module>();
  m->context = context;
  m->program = program;
  m->library = library;
  for (const KernelInfo& k : program->kernels) {
    auto f = std::make_unique<Function>();
    f->module = m.get();
    f->info = &k;
    m->functions.push_back(std::move(f));
  }
  // Globals: allocate all first (initializers may take each other's addresses).
  for (const GlobalInfo& g : program->globals) {
    auto p = allocate(context, g.size ? g.size : 1, g.managed ? MemoryKind::Managed : MemoryKind::Device);
    if (!p) {
      for (auto& [name, mem] : m->globals)
        release(mem.address, {MemoryKind::Device, MemoryKind::Managed});
      return Error("allocating global '" + g.name + "' (" + std::to_string(g.size) + " bytes): " +
                       p.error().message(),
                   CUDA_ERROR_OUT_OF_MEMORY);
    }
    m->globals[g.name] = {p.value(), g.size};
  }
  Module* raw = m.get();
  // Compile for the device: a kernel that cannot be translated fails the load, by name.
  {
    std::map<std::string, void*, std::less<>> addresses;
    for (const auto& [name, mem] : m->globals)
      addresses[name] = mem.address;
    const Device& d = *context->device;
    auto compiled = d.backend().compile(d.backend_index(), *program, addresses);
    if (!compiled) {
      for (auto& [name, gm] : m->globals)
        release(gm.address, {MemoryKind::Device, MemoryKind::Managed});
      return compiled.error();
    }
    m->compiled = std::move(compiled.value());
  }
  // Initializers may take the addresses of globals and of device functions.
  auto address_of = [raw](std::string_view name) -> Result<uint64_t> {
    auto it = raw->globals.find(name);
    if (it != raw->globals.end())
      return uint64_t(reinterpret_cast<uintptr_t>(it->second.address));
    if (raw->compiled)
      if (uint64_t f = raw->compiled->function_address(name))
        return f;
    return Error("an initializer takes the address of '" + std::string(name) +
                 "', which is not a global variable or function of this module");
  };
  for (const GlobalInfo& g : program->globals) {
    auto& mem = m->globals[g.name];
    std::vector<uint8_t> bytes(g.size);
    if (Status s = initialize_global(g, bytes.data(), address_of); !s) {
      for (auto& [name, gm] : m->globals)
        release(gm.address, {MemoryKind::Device, MemoryKind::Managed});
      return Error(program->origin + ": " + s.error().message(), CUDA_ERROR_INVALID_PTX);
    }
    const Device& d = *context->device;
    if (Status s = d.backend().copy(mem.address, bytes.data(), g.size); !s)
      return Error(s.error().message(), CUDA_ERROR_UNKNOWN);
  }
  m.release();
  registry<Module>().add(raw);
  for (const auto& f : raw->functions)
    registry<Function>().add(f.get());
  return raw;
}

CUresult destroy_module(Module* m) {
  if (!registry<Module>().remove(m))
    return CUDA_ERROR_INVALID_HANDLE;
  for (const auto& f : m->functions)
    registry<Function>().remove(f.get());
  for (auto& [name, mem] : m->globals)
    release(mem.address, {MemoryKind::Device, MemoryKind::Managed});
  m->globals.clear();
  // The Module and its Functions stay allocated: stale handles remain detectable.
  return CUDA_SUCCESS;
}

Result<Library*> create_library(std::shared_ptr<Program> program) {
  auto* lib = new Library;
  lib->program = std::move(program);
  for (const KernelInfo& k : lib->program->kernels) {
    auto h = std::make_unique<KernelHandle>();
    h->library = lib;
    h->info = &k;
    registry<KernelHandle>().add(h.get());
    lib->kernels.push_back(std::move(h));
  }
  registry<Library>().add(lib);
  return lib;
}

CUresult destroy_library(Library* lib) {
  if (!registry<Library>().remove(lib))
    return CUDA_ERROR_INVALID_HANDLE;
  for (const auto& k : lib->kernels)
    registry<KernelHandle>().remove(k.get());
  std::lock_guard lock(lib->mutex);
  for (auto& [context, module] : lib->modules)
    destroy_module(module);
  lib->modules.clear();
  return CUDA_SUCCESS;
}

Result<Module*> library_module(Library* lib, Context* context) {
  std::lock_guard lock(lib->mutex);
  auto it = lib->modules.find(context);
  if (it != lib->modules.end() && find_module(reinterpret_cast<CUmodule>(it->second)))
    return it->second;
  auto m = create_module(context, lib->program, lib);
  if (!m)
    return m.error();
  lib->modules[context] = m.value();
  return m.value();
}

void retire_modules(Context* context) {
  std::vector<Module*> doomed;
  registry<Module>().for_each([&](Module* m) {
    if (m->context == context)
      doomed.push_back(m);
  });
  for (Module* m : doomed)
    destroy_module(m);
}

Module* find_module(CUmodule handle) { return registry<Module>().find(handle); }
Function* find_function(CUfunction handle) { return registry<Function>().find(handle); }
Library* find_library(CUlibrary handle) { return registry<Library>().find(handle); }
KernelHandle* find_kernel(CUkernel handle) { return registry<KernelHandle>().find(handle); }

Result<Function*> resolve_function(CUfunction handle, Context* context) {
  if (Function* f = find_function(handle))
    return f;
  KernelHandle* k = find_kernel(reinterpret_cast<CUkernel>(handle));
  if (!k)
    return Error("not a function or kernel handle", CUDA_ERROR_INVALID_HANDLE);
  // Functions and modules are never freed, so the cached one can be checked like a handle:
  // still live, and of a live module in this context, it is what library_module would give.
  Function* last = k->last_function.load(std::memory_order_acquire);
  if (last && last->module->context == context &&
      find_function(reinterpret_cast<CUfunction>(last)) &&
      find_module(reinterpret_cast<CUmodule>(last->module)))
    return last;
  auto m = library_module(k->library, context);
  if (!m)
    return m.error();
  Function* f = m.value()->function(k->info->name);
  if (!f)
    return Error("kernel '" + k->info->name + "' is missing from its module", CUDA_ERROR_NOT_FOUND);
  k->last_function.store(f, std::memory_order_release);
  return f;
}

} // namespace mimic::runtime
