// Modules, libraries, functions, kernels and launches.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "driver/impl_jit.h"
#include "runtime/graph.h"
#include "runtime/memory.h"
#include "runtime/module.h"
#include "runtime/stream.h"
#include "support/log.h"

namespace mimic::driver::impl {

namespace {

unsigned device_sm(const runtime::Context* c) {
  const auto& p = c->device->properties();
  return unsigned(p.cc_major * 10 + p.cc_minor);
}

CUresult report(const Error& e, CUresult fallback) {
  log_error(e.message());
  return e.code() ? CUresult(e.code()) : fallback;
}

// `error_log`, when given, receives the reason a load fails (the JIT error log).
CUresult load_module(CUmodule* out, const void* image, std::string* error_log = nullptr) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (!out || !image)
    return CUDA_ERROR_INVALID_VALUE;
  auto program = runtime::load_program(image, device_sm(c));
  if (!program) {
    if (error_log)
      *error_log = program.error().message();
    return report(program.error(), CUDA_ERROR_INVALID_IMAGE);
  }
  auto m = runtime::create_module(c, program.value());
  if (!m) {
    if (error_log)
      *error_log = m.error().message();
    return report(m.error(), CUDA_ERROR_OUT_OF_MEMORY);
  }
  *out = reinterpret_cast<CUmodule>(m.value());
  return CUDA_SUCCESS;
}

Result<std::string> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error(std::string("cannot open '") + path + "'", CUDA_ERROR_FILE_NOT_FOUND);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CUresult load_library(CUlibrary* out, const void* code, const runtime::Context* for_selection) {
  if (!out || !code)
    return CUDA_ERROR_INVALID_VALUE;
  unsigned sm = 0;
  if (for_selection) {
    sm = device_sm(for_selection);
  } else {
    const runtime::Device* d = runtime::device(0);
    if (!d)
      return CUDA_ERROR_NO_DEVICE;
    sm = unsigned(d->properties().cc_major * 10 + d->properties().cc_minor);
  }
  auto program = runtime::load_program(code, sm);
  if (!program)
    return report(program.error(), CUDA_ERROR_INVALID_IMAGE);
  auto lib = runtime::create_library(program.value());
  if (!lib)
    return report(lib.error(), CUDA_ERROR_OUT_OF_MEMORY);
  *out = reinterpret_cast<CUlibrary>(lib.value());
  return CUDA_SUCCESS;
}

CUresult get_global(runtime::Module* m, const char* name, CUdeviceptr* dptr, size_t* bytes, bool managed) {
  if (!name)
    return CUDA_ERROR_INVALID_VALUE;
  auto it = m->globals.find(std::string_view(name));
  if (it == m->globals.end())
    return CUDA_ERROR_NOT_FOUND;
  const runtime::GlobalInfo* g = m->program->global(name);
  if (managed && (!g || !g->managed))
    return CUDA_ERROR_INVALID_VALUE;
  if (dptr)
    *dptr = CUdeviceptr(reinterpret_cast<uintptr_t>(it->second.address));
  if (bytes)
    *bytes = it->second.size;
  return CUDA_SUCCESS;
}

CUresult function_attribute(int* pi, CUfunction_attribute attrib, const runtime::Function* f) {
  const runtime::KernelInfo& k = *f->info;
  const auto& p = f->module->context->device->properties();
  switch (attrib) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *pi = k.max_threads_per_block ? k.max_threads_per_block : p.max_threads_per_block;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *pi = int(k.static_shared_bytes);
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
    *pi = 0;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
    *pi = int(k.local_bytes);
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *pi = 32; // a CPU has no register file to budget; report a typical, occupancy-neutral count
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    *pi = int(k.module->version_major * 10 + k.module->version_minor);
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
    *pi = p.cc_major * 10 + p.cc_minor;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
    *pi = 0;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *pi = f->max_dynamic_shared_bytes ? f->max_dynamic_shared_bytes
                                      : p.shared_memory_per_block - int(k.static_shared_bytes);
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    *pi = f->preferred_shared_carveout;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
    *pi = 0;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    *pi = f->required_cluster[0];
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    *pi = f->required_cluster[1];
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    *pi = f->required_cluster[2];
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    *pi = 0;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    *pi = CU_CLUSTER_SCHEDULING_POLICY_DEFAULT;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult set_function_attribute(runtime::Function* f, CUfunction_attribute attrib, int value) {
  const auto& p = f->module->context->device->properties();
  switch (attrib) {
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    if (value < 0 || size_t(value) + f->info->static_shared_bytes > size_t(p.shared_memory_per_block_optin))
      return CUDA_ERROR_INVALID_VALUE;
    f->max_dynamic_shared_bytes = value;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    if (value < -1 || value > 100)
      return CUDA_ERROR_INVALID_VALUE;
    f->preferred_shared_carveout = value;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    if (value < 0 || value > 8)
      return CUDA_ERROR_INVALID_VALUE;
    f->required_cluster[attrib - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] = value;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
  case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

// A launch being submitted: what run_kernel needs, the packed parameters in `args`.
struct PendingLaunch {
  CUfunction function;
  runtime::Context* context;
  unsigned grid[3], block[3], shared;
  const runtime::KernelInfo* info;
  const uint8_t* args;
};

// Parameters up to this size are packed on the launching thread's stack.
constexpr size_t kStackParamBytes = 512;

CUresult launch(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                unsigned shared, CUstream h, void** params, void** extra, bool per_thread) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  PendingLaunch p{fn, c, {gx, gy, gz}, {bx, by, bz}, shared, nullptr, nullptr};
  if (CUresult r = check_launch(c, fn, p.grid, p.block, shared, p.info)) return r;
  uint8_t on_stack[kStackParamBytes];
  std::vector<uint8_t> on_heap;
  uint8_t* args = on_stack;
  if (p.info->param_bytes > sizeof on_stack) {
    on_heap.resize(p.info->param_bytes);
    args = on_heap.data();
  }
  if (CUresult r = pack_parameters(*p.info, params, extra, args)) return r;
  p.args = args;
  runtime::Stream* s = runtime::resolve_stream(h, c, per_thread);
  if (!s)
    return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult r = check_async_work(s))
    return r;
  // Work that outlives this call (queued, or a captured node) owns a copy of the launch.
  auto kept = [&p] {
    auto k = std::make_shared<runtime::KernelNodeParams>();
    keep_launch(p.function, p.context, p.grid, p.block, p.shared, *p.info,
                std::vector<uint8_t>(p.args, p.args + p.info->param_bytes), *k);
    return k;
  };
  if (runtime::is_capturing(s)) {
    runtime::GraphNode node;
    node.type = CU_GRAPH_NODE_TYPE_KERNEL;
    node.context = c;
    node.kernel = kept();
    node.work = [k = node.kernel] { return run_launch(*k); };
    return runtime::capture_node(s, node);
  }
  // On an idle stream the launch runs now, from this stack frame, with nothing copied.
  runtime::Work now = [&p] {
    return run_kernel(p.function, p.context, p.grid, p.block, p.shared, p.args);
  };
  runtime::submit_launch(s, now,
                         [&] { return runtime::Work([k = kept()] { return run_launch(*k); }); });
  return CUDA_SUCCESS;
}

} // namespace

} // namespace mimic::driver::impl

namespace mimic::driver {

CUresult check_cluster_support(const runtime::Function& f, const unsigned cluster[3]) {
  uint64_t blocks = uint64_t(cluster[0]) * cluster[1] * cluster[2];
  if (blocks == 0) {
    const unsigned* own = f.info->cluster_dims;
    blocks = std::max(own[0], 1u) * uint64_t(std::max(own[1], 1u)) * std::max(own[2], 1u);
    if (f.required_cluster[0] > 0)
      blocks = uint64_t(f.required_cluster[0]) * std::max(f.required_cluster[1], 1) * std::max(f.required_cluster[2], 1);
  }
  unsigned limit = f.module->compiled ? f.module->compiled->max_cluster_blocks(size_t(f.info - f.module->program->kernels.data())) : 0;
  if (limit == 0 || blocks <= limit)
    return CUDA_SUCCESS;
  warn_once("cluster:" + f.info->name,
            "kernel '" + f.info->name + "' uses its thread block cluster (distributed shared memory, cluster "
            "barriers or registers) and is launched in clusters of " + std::to_string(blocks) +
            " blocks; the CPU backend runs such kernels in clusters of one block only: the launch fails "
            "with CUDA_ERROR_NOT_SUPPORTED");
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult check_launch(runtime::Context* c, CUfunction fn, const unsigned grid[3],
                      const unsigned block[3], unsigned shared, const runtime::KernelInfo*& info) {
  auto f = runtime::resolve_function(fn, c);
  if (!f) {
    // A library that fails to load here (lazily, at its first launch) says why, once.
    if (f.error().code() && f.error().code() != CUDA_ERROR_INVALID_HANDLE)
      warn_once("load:" + f.error().message(), f.error().message());
    return f.error().code() ? CUresult(f.error().code()) : CUDA_ERROR_INVALID_HANDLE;
  }
  const unsigned gx = grid[0], gy = grid[1], gz = grid[2], bx = block[0], by = block[1], bz = block[2];
  const auto& p = c->device->properties();
  const runtime::KernelInfo& k = *f.value()->info;
  uint64_t threads = uint64_t(bx) * by * bz;
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (int(bx) > p.max_block_dim[0] || int(by) > p.max_block_dim[1] || int(bz) > p.max_block_dim[2] ||
      threads > uint64_t(k.max_threads_per_block ? k.max_threads_per_block : p.max_threads_per_block))
    return CUDA_ERROR_INVALID_VALUE;
  if (gx > unsigned(p.max_grid_dim[0]) || gy > unsigned(p.max_grid_dim[1]) || gz > unsigned(p.max_grid_dim[2]))
    return CUDA_ERROR_INVALID_VALUE;
  const unsigned no_cluster[3] = {0, 0, 0};
  if (CUresult r = check_cluster_support(*f.value(), no_cluster))
    return r;
  size_t shared_limit = f.value()->max_dynamic_shared_bytes ? size_t(f.value()->max_dynamic_shared_bytes)
                                                            : size_t(p.shared_memory_per_block) - k.static_shared_bytes;
  if (shared > shared_limit)
    return CUDA_ERROR_INVALID_VALUE;
  info = &k;
  return CUDA_SUCCESS;
}

CUresult pack_parameters(const runtime::KernelInfo& k, void** params, void** extra, uint8_t* out) {
  // Either an array of pointers, one per parameter, or one packed buffer.
  if (params && extra)
    return CUDA_ERROR_INVALID_VALUE;
  if (params) {
    std::memset(out, 0, k.param_bytes); // the padding between parameters
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (!params[i])
        return CUDA_ERROR_INVALID_VALUE;
      std::memcpy(out + k.params[i].offset, params[i], k.params[i].size);
    }
    return CUDA_SUCCESS;
  }
  if (extra) {
    void* buffer = nullptr;
    size_t* size = nullptr;
    for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
        buffer = extra[i + 1];
      else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
        size = static_cast<size_t*>(extra[i + 1]);
      else
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!buffer || !size || *size < k.param_bytes)
      return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(out, buffer, k.param_bytes);
    return CUDA_SUCCESS;
  }
  return k.params.empty() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// A launch that outlives its call (queued work, a graph node) as it keeps it: `args` are
// its packed parameters, `arg_pointers` point to each one in them.
void keep_launch(CUfunction fn, runtime::Context* c, const unsigned grid[3], const unsigned block[3],
                 unsigned shared, const runtime::KernelInfo& info, std::vector<uint8_t> args,
                 runtime::KernelNodeParams& out) {
  out.function = fn;
  out.context = c;
  std::copy(grid, grid + 3, out.grid);
  std::copy(block, block + 3, out.block);
  out.shared_bytes = shared;
  out.args = std::move(args);
  out.arg_pointers.clear();
  for (const auto& param : info.params)
    out.arg_pointers.push_back(out.args.data() + param.offset);
}

CUresult prepare_launch(runtime::Context* c, CUfunction fn, const unsigned grid[3],
                        const unsigned block[3], unsigned shared, void** params, void** extra,
                        runtime::KernelNodeParams& out) {
  const runtime::KernelInfo* k = nullptr;
  if (CUresult r = check_launch(c, fn, grid, block, shared, k)) return r;
  std::vector<uint8_t> args(k->param_bytes);
  if (CUresult r = pack_parameters(*k, params, extra, args.data())) return r;
  keep_launch(fn, c, grid, block, shared, *k, std::move(args), out);
  return CUDA_SUCCESS;
}

// Runs a launch to completion (called from stream work: a launch's own item or a graph's).
// A kernel that fails leaves its error on the context, sticky, as on a GPU.
CUresult run_kernel(CUfunction fn, runtime::Context* c, const unsigned grid[3],
                    const unsigned block[3], unsigned shared, const void* args) {
  auto f = runtime::resolve_function(fn, c);
  if (!f)
    return f.error().code() ? CUresult(f.error().code()) : CUDA_ERROR_INVALID_HANDLE;
  runtime::Module* m = f.value()->module;
  if (!m->compiled)
    return CUDA_ERROR_NOT_SUPPORTED;
  size_t index = size_t(f.value()->info - m->program->kernels.data());
  runtime::LaunchShape shape;
  std::copy(grid, grid + 3, shape.grid);
  std::copy(block, block + 3, shape.block);
  shape.dynamic_shared_bytes = shared;
  shape.accessible = &runtime::device_accessible;
  const runtime::Device& d = *c->device;
  CUresult r = d.backend().launch(d.backend_index(), *m->compiled, index, shape, args);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_SUPPORTED) {
    CUresult expected = CUDA_SUCCESS;
    c->sticky_error.compare_exchange_strong(expected, r);
  }
  return r;
}

CUresult run_launch(const runtime::KernelNodeParams& launch) {
  return run_kernel(launch.function, launch.context, launch.grid, launch.block, launch.shared_bytes,
                    launch.args.data());
}

} // namespace mimic::driver

namespace mimic::driver::impl {

// ---- modules

CUresult cuModuleLoadData_v2000(CUmodule* module, const void* image) { return load_module(module, image); }

CUresult cuModuleLoadDataEx_v2010(CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options,
                                  void** optionValues) {
  // JIT options tune NVIDIA's compiler (register limits) or ask for logs; none change
  // what the module does.
  JitOptions jit;
  if (CUresult r = jit.parse(numOptions, options, optionValues))
    return r;
  auto started = std::chrono::steady_clock::now();
  std::string error;
  CUresult r = load_module(module, image, &error);
  jit.write_logs(r == CUDA_SUCCESS ? "info    : module loaded" : "", error);
  jit.write_wall_time(std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - started).count());
  return r;
}

CUresult cuModuleLoadFatBinary_v2000(CUmodule* module, const void* fatCubin) { return load_module(module, fatCubin); }

CUresult cuModuleLoad_v2000(CUmodule* module, const char* fname) {
  if (!fname)
    return CUDA_ERROR_INVALID_VALUE;
  auto text = read_file(fname);
  if (!text)
    return report(text.error(), CUDA_ERROR_FILE_NOT_FOUND);
  // Images in memory need their terminating NUL when they are PTX text.
  text.value().push_back('\0');
  return load_module(module, text.value().data());
}

CUresult cuModuleUnload_v2000(CUmodule hmod) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  runtime::Module* m = runtime::find_module(hmod);
  if (!m || m->library)
    return CUDA_ERROR_INVALID_HANDLE;
  runtime::synchronize_context(m->context);
  return runtime::destroy_module(m);
}

CUresult cuModuleGetFunction_v2000(CUfunction* hfunc, CUmodule hmod, const char* name) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!hfunc || !name)
    return CUDA_ERROR_INVALID_VALUE;
  runtime::Module* m = runtime::find_module(hmod);
  if (!m)
    return CUDA_ERROR_INVALID_HANDLE;
  runtime::Function* f = m->function(name);
  if (!f)
    return CUDA_ERROR_NOT_FOUND;
  *hfunc = reinterpret_cast<CUfunction>(f);
  return CUDA_SUCCESS;
}

CUresult cuModuleGetGlobal_v3020(CUdeviceptr_v2* dptr, size_t* bytes, CUmodule hmod, const char* name) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  runtime::Module* m = runtime::find_module(hmod);
  if (!m)
    return CUDA_ERROR_INVALID_HANDLE;
  return get_global(m, name, dptr, bytes, false);
}

CUresult cuModuleGetFunctionCount_v12040(unsigned int* count, CUmodule hmod) {
  runtime::Module* m = runtime::find_module(hmod);
  if (!m)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  *count = unsigned(m->functions.size());
  return CUDA_SUCCESS;
}

CUresult cuModuleEnumerateFunctions_v12040(CUfunction* functions, unsigned int numFunctions, CUmodule mod) {
  runtime::Module* m = runtime::find_module(mod);
  if (!m)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!functions || numFunctions > m->functions.size())
    return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < numFunctions; ++i)
    functions[i] = reinterpret_cast<CUfunction>(m->functions[i].get());
  return CUDA_SUCCESS;
}

CUresult cuModuleGetLoadingMode_v11070(CUmoduleLoadingMode* mode) {
  if (!mode)
    return CUDA_ERROR_INVALID_VALUE;
  // As NVIDIA's driver: lazy unless CUDA_MODULE_LOADING=EAGER.
  const char* env = std::getenv("CUDA_MODULE_LOADING");
  *mode = env && std::strcmp(env, "EAGER") == 0 ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
  return CUDA_SUCCESS;
}

// ---- libraries and kernels

// The options of cuLibraryLoad*: JIT options as for cuModuleLoadDataEx, and library
// options, which say how the application keeps its data (nothing Mimic needs to act on).
static CUresult check_library_options(CUjit_option* jitOptions, void** jitValues, unsigned numJitOptions,
                               CUlibraryOption* libraryOptions, void** libraryValues, unsigned numLibraryOptions) {
  JitOptions jit;
  if (CUresult r = jit.parse(numJitOptions, jitOptions, jitValues))
    return r;
  if (numLibraryOptions > 0 && (!libraryOptions || !libraryValues))
    return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < numLibraryOptions; ++i)
    if (libraryOptions[i] != CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE &&
        libraryOptions[i] != CU_LIBRARY_BINARY_IS_PRESERVED)
      return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult cuLibraryLoadData_v12000(CUlibrary* library, const void* code, CUjit_option* jitOptions, void** jitValues,
                                  unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryValues,
                                  unsigned int numLibraryOptions) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (CUresult r = check_library_options(jitOptions, jitValues, numJitOptions, libraryOptions, libraryValues,
                                         numLibraryOptions))
    return r;
  return load_library(library, code, runtime::current_context());
}

CUresult cuLibraryLoadFromFile_v12000(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                                      void** jitValues, unsigned int numJitOptions, CUlibraryOption* libraryOptions,
                                      void** libraryValues, unsigned int numLibraryOptions) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (CUresult r = check_library_options(jitOptions, jitValues, numJitOptions, libraryOptions, libraryValues,
                                         numLibraryOptions))
    return r;
  if (!fileName)
    return CUDA_ERROR_INVALID_VALUE;
  auto text = read_file(fileName);
  if (!text)
    return report(text.error(), CUDA_ERROR_FILE_NOT_FOUND);
  text.value().push_back('\0');
  return load_library(library, text.value().data(), runtime::current_context());
}

CUresult cuLibraryUnload_v12000(CUlibrary library) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  runtime::Library* lib = runtime::find_library(library);
  if (!lib)
    return CUDA_ERROR_INVALID_HANDLE;
  return runtime::destroy_library(lib);
}

CUresult cuLibraryGetKernel_v12000(CUkernel* pKernel, CUlibrary library, const char* name) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pKernel || !name)
    return CUDA_ERROR_INVALID_VALUE;
  runtime::Library* lib = runtime::find_library(library);
  if (!lib)
    return CUDA_ERROR_INVALID_HANDLE;
  runtime::KernelHandle* k = lib->kernel(name);
  if (!k)
    return CUDA_ERROR_NOT_FOUND;
  *pKernel = reinterpret_cast<CUkernel>(k);
  return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernelCount_v12040(unsigned int* count, CUlibrary library) {
  runtime::Library* lib = runtime::find_library(library);
  if (!lib)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  *count = unsigned(lib->kernels.size());
  return CUDA_SUCCESS;
}

CUresult cuLibraryEnumerateKernels_v12040(CUkernel* kernels, unsigned int numKernels, CUlibrary library) {
  runtime::Library* lib = runtime::find_library(library);
  if (!lib)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!kernels || numKernels > lib->kernels.size())
    return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < numKernels; ++i)
    kernels[i] = reinterpret_cast<CUkernel>(lib->kernels[i].get());
  return CUDA_SUCCESS;
}

CUresult cuLibraryGetModule_v12000(CUmodule* pMod, CUlibrary library) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  runtime::Library* lib = runtime::find_library(library);
  if (!lib)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!pMod)
    return CUDA_ERROR_INVALID_VALUE;
  auto m = runtime::library_module(lib, c);
  if (!m)
    return report(m.error(), CUDA_ERROR_OUT_OF_MEMORY);
  *pMod = reinterpret_cast<CUmodule>(m.value());
  return CUDA_SUCCESS;
}

CUresult cuKernelGetFunction_v12000(CUfunction* pFunc, CUkernel kernel) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c))
    return r;
  if (!pFunc)
    return CUDA_ERROR_INVALID_VALUE;
  if (!runtime::find_kernel(kernel))
    return CUDA_ERROR_INVALID_HANDLE;
  auto f = runtime::resolve_function(reinterpret_cast<CUfunction>(kernel), c);
  if (!f)
    return report(f.error(), CUDA_ERROR_INVALID_HANDLE);
  *pFunc = reinterpret_cast<CUfunction>(f.value());
  return CUDA_SUCCESS;
}

CUresult cuKernelGetLibrary_v12050(CUlibrary* pLib, CUkernel kernel) {
  runtime::KernelHandle* k = runtime::find_kernel(kernel);
  if (!k)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!pLib)
    return CUDA_ERROR_INVALID_VALUE;
  *pLib = reinterpret_cast<CUlibrary>(k->library);
  return CUDA_SUCCESS;
}

// A global of the library's module in the current context (loaded on first use).
static CUresult library_global(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name, bool managed) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c)) {
    // Managed variables belong to no context: the CUDA runtime maps them at start-up,
    // before any context is current. They live in device 0's primary context's module.
    const runtime::Device* d = runtime::device(0);
    if (!managed || c || !d)
      return r;
    c = runtime::primary_context(*d);
    if (!c)
      return r;
  }
  runtime::Library* lib = runtime::find_library(library);
  if (!lib)
    return CUDA_ERROR_INVALID_HANDLE;
  auto m = runtime::library_module(lib, c);
  if (!m)
    return report(m.error(), CUDA_ERROR_OUT_OF_MEMORY);
  return get_global(m.value(), name, dptr, bytes, managed);
}

CUresult cuLibraryGetGlobal_v12000(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
  return library_global(dptr, bytes, library, name, false);
}

CUresult cuLibraryGetManaged_v12000(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
  return library_global(dptr, bytes, library, name, true);
}

// ---- functions and kernels: attributes, names, parameters

CUresult cuFuncGetAttribute_v2020(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c); !c) // a handle query: answers after a sticky error
    return r;
  if (!pi)
    return CUDA_ERROR_INVALID_VALUE;
  auto f = runtime::resolve_function(hfunc, c);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  return function_attribute(pi, attrib, f.value());
}

CUresult cuFuncSetAttribute_v9000(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c); !c) // handle state only: allowed after a sticky error
    return r;
  auto f = runtime::resolve_function(hfunc, c);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  return set_function_attribute(f.value(), attrib, value);
}

CUresult cuFuncSetCacheConfig_v3000(CUfunction hfunc, CUfunc_cache config) {
  runtime::Context* c = nullptr;
  if (CUresult r = current_context(c); !c) // handle state only: allowed after a sticky error
    return r;
  auto f = runtime::resolve_function(hfunc, c);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL)
    return CUDA_ERROR_INVALID_VALUE;
  f.value()->cache_config = config;
  return CUDA_SUCCESS;
}

// A library kernel's function in the primary context of `dev`.
static CUresult kernel_function(CUkernel kernel, CUdevice dev, runtime::Function*& out) {
  const runtime::Device* d;
  if (CUresult r = device_of(dev, d))
    return r;
  if (!runtime::find_kernel(kernel))
    return CUDA_ERROR_INVALID_HANDLE;
  auto f = runtime::resolve_function(reinterpret_cast<CUfunction>(kernel), runtime::primary_context(*d));
  if (!f)
    return report(f.error(), CUDA_ERROR_INVALID_HANDLE);
  out = f.value();
  return CUDA_SUCCESS;
}

CUresult cuKernelGetAttribute_v12000(int* pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev) {
  runtime::Function* f = nullptr;
  if (CUresult r = kernel_function(kernel, dev, f))
    return r;
  if (!pi)
    return CUDA_ERROR_INVALID_VALUE;
  return function_attribute(pi, attrib, f);
}

CUresult cuKernelSetAttribute_v12000(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev) {
  runtime::Function* f = nullptr;
  if (CUresult r = kernel_function(kernel, dev, f))
    return r;
  return set_function_attribute(f, attrib, val);
}

CUresult cuFuncGetName_v12030(const char** name, CUfunction hfunc) {
  if (!name)
    return CUDA_ERROR_INVALID_VALUE;
  runtime::Function* f = runtime::find_function(hfunc);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  *name = f->info->name.c_str();
  return CUDA_SUCCESS;
}

CUresult cuKernelGetName_v12030(const char** name, CUkernel hfunc) {
  if (!name)
    return CUDA_ERROR_INVALID_VALUE;
  runtime::KernelHandle* k = runtime::find_kernel(hfunc);
  if (!k)
    return CUDA_ERROR_INVALID_HANDLE;
  *name = k->info->name.c_str();
  return CUDA_SUCCESS;
}

static CUresult param_info(const runtime::KernelInfo& k, size_t index, size_t* offset, size_t* size) {
  if (index >= k.params.size())
    return CUDA_ERROR_INVALID_VALUE;
  if (offset)
    *offset = k.params[index].offset;
  if (size)
    *size = k.params[index].size;
  return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo_v12040(CUfunction func, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
  runtime::Function* f = runtime::find_function(func);
  return f ? param_info(*f->info, paramIndex, paramOffset, paramSize) : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuKernelGetParamInfo_v12040(CUkernel kernel, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
  runtime::KernelHandle* k = runtime::find_kernel(kernel);
  return k ? param_info(*k->info, paramIndex, paramOffset, paramSize) : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuFuncGetModule_v11000(CUmodule* hmod, CUfunction hfunc) {
  runtime::Function* f = runtime::find_function(hfunc);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!hmod)
    return CUDA_ERROR_INVALID_VALUE;
  *hmod = reinterpret_cast<CUmodule>(f->module);
  return CUDA_SUCCESS;
}

CUresult cuFuncIsLoaded_v12040(CUfunctionLoadingState* state, CUfunction hfunc) {
  if (!state)
    return CUDA_ERROR_INVALID_VALUE;
  if (!runtime::find_function(hfunc))
    return CUDA_ERROR_INVALID_HANDLE;
  *state = CU_FUNCTION_LOADING_STATE_LOADED;
  return CUDA_SUCCESS;
}

CUresult cuFuncLoad_v12040(CUfunction hfunc) {
  return runtime::find_function(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

// ---- launch

CUresult cuLaunchKernel_v4000(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                              unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void** params,
                              void** extra) {
  return launch(f, gx, gy, gz, bx, by, bz, shared, s, params, extra, false);
}

CUresult cuLaunchKernel_v7000_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                   unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void** params,
                                   void** extra) {
  return launch(f, gx, gy, gz, bx, by, bz, shared, s, params, extra, true);
}

} // namespace mimic::driver::impl
