// JIT linking (cuLink*): PTX, and the PTX inside fatbinaries and host objects, gathered
// into a linked image (runtime/link_image.h) that cuModuleLoadData and cuLibraryLoadData
// load as one program, like an -rdc program. The JIT options of cuModuleLoadDataEx are
// handled here too (JitOptions, impl_jit.h).
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "driver/driver_impl.h"
#include "driver/impl_common.h"
#include "driver/impl_jit.h"
#include "fatbin/binary.h"
#include "fatbin/fatbin.h"
#include "fatbin/select.h"
#include "ptx/parser.h"
#include "runtime/handle.h"
#include "runtime/link_image.h"
#include "runtime/program.h"

namespace mimic::driver {

// ---- JIT options

namespace {

unsigned option_uint(void* value) {
  return unsigned(reinterpret_cast<uintptr_t>(value));
}

} // namespace

CUresult JitOptions::parse(unsigned count, CUjit_option* options, void** values) {
  if (count > 0 && (!options || !values)) return CUDA_ERROR_INVALID_VALUE;
  count_ = count;
  options_ = options;
  values_ = values;
  for (unsigned i = 0; i < count; ++i) {
    void* v = values[i];
    switch (options[i]) {
    case CU_JIT_INFO_LOG_BUFFER:
      info_log_ = static_cast<char*>(v);
      break;
    case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
      info_size_ = option_uint(v);
      break;
    case CU_JIT_ERROR_LOG_BUFFER:
      error_log_ = static_cast<char*>(v);
      break;
    case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
      error_size_ = option_uint(v);
      break;
    case CU_JIT_OPTIMIZATION_LEVEL:
      if (option_uint(v) > 4) return CUDA_ERROR_INVALID_VALUE;
      optimization_level_ = int(option_uint(v));
      break;
    case CU_JIT_LOG_VERBOSE:
      verbose_ = option_uint(v) != 0;
      break;
    case CU_JIT_FALLBACK_STRATEGY:
      if (option_uint(v) > CU_PREFER_BINARY) return CUDA_ERROR_INVALID_VALUE;
      break;
    case CU_JIT_CACHE_MODE:
      if (option_uint(v) > CU_JIT_CACHE_OPTION_CA) return CUDA_ERROR_INVALID_VALUE;
      break;
    case CU_JIT_LTO:
      if (option_uint(v) != 0)
        return CUDA_ERROR_NOT_SUPPORTED; // link-time optimisation needs NVVM IR inputs
      break;
    case CU_JIT_GLOBAL_SYMBOL_NAMES:
    case CU_JIT_GLOBAL_SYMBOL_ADDRESSES:
    case CU_JIT_GLOBAL_SYMBOL_COUNT:
      return CUDA_ERROR_NOT_SUPPORTED; // host addresses for device symbols
    case CU_JIT_MAX_REGISTERS:
    case CU_JIT_THREADS_PER_BLOCK:
    case CU_JIT_WALL_TIME:
    case CU_JIT_TARGET_FROM_CUCONTEXT:
    case CU_JIT_TARGET:
    case CU_JIT_GENERATE_DEBUG_INFO:
    case CU_JIT_GENERATE_LINE_INFO:
    case CU_JIT_NEW_SM3X_OPT:
    case CU_JIT_FAST_COMPILE:
    case CU_JIT_FTZ:
    case CU_JIT_PREC_DIV:
    case CU_JIT_PREC_SQRT:
    case CU_JIT_FMA:
    case CU_JIT_REFERENCED_KERNEL_NAMES:
    case CU_JIT_REFERENCED_KERNEL_COUNT:
    case CU_JIT_REFERENCED_VARIABLE_NAMES:
    case CU_JIT_REFERENCED_VARIABLE_COUNT:
    case CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES:
    case CU_JIT_POSITION_INDEPENDENT_CODE:
    case CU_JIT_MIN_CTA_PER_SM:
    case CU_JIT_MAX_THREADS_PER_BLOCK:
    case CU_JIT_OVERRIDE_DIRECTIVE_VALUES:
    case CU_JIT_SPLIT_COMPILE:
      break; // tunes NVIDIA's compiler; nothing to do for LLVM's
    default:
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

void JitOptions::write_logs(const std::string& info, const std::string& error) const {
  auto fill = [](char* buffer, size_t size, const std::string& text) -> size_t {
    if (!buffer || size == 0) return 0;
    size_t n = std::min(text.size(), size - 1);
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
    return n + 1;
  };
  size_t info_written = fill(info_log_, info_size_, info);
  size_t error_written = fill(error_log_, error_size_, error);
  for (unsigned i = 0; i < count_; ++i) {
    if (options_[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
      values_[i] = reinterpret_cast<void*>(uintptr_t(info_written));
    else if (options_[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      values_[i] = reinterpret_cast<void*>(uintptr_t(error_written));
  }
}

void JitOptions::write_wall_time(float milliseconds) const {
  for (unsigned i = 0; i < count_; ++i)
    if (options_[i] == CU_JIT_WALL_TIME) {
      values_[i] = nullptr;
      std::memcpy(&values_[i], &milliseconds,
                  sizeof milliseconds); // CUDA stores the float in the slot
    }
}

namespace {

// ---- link states

struct LinkState {
  std::mutex mutex;
  JitOptions options;
  unsigned device_sm = 0;
  std::vector<runtime::PtxSource> modules;
  std::string info_log, error_log;
  std::chrono::duration<float, std::milli> time{0};
  bool completed = false;
  std::vector<uint8_t> image; // from cuLinkComplete, owned until cuLinkDestroy

  void add_error(const std::string& message) {
    error_log += (error_log.empty() ? "" : "\n") + message;
    options.write_logs(info_log, error_log);
  }
  void add_info(const std::string& message) {
    info_log += (info_log.empty() ? "" : "\n") + message;
  }
};

runtime::HandleRegistry<LinkState>& link_states() {
  static auto* r = new runtime::HandleRegistry<LinkState>;
  return *r;
}

unsigned current_sm() {
  const runtime::Device* d = nullptr;
  if (runtime::Context* c = runtime::current_context()) d = c->device;
  if (!d) d = runtime::device(0);
  return d ? unsigned(d->properties().cc_major * 10 + d->properties().cc_minor) : 75;
}

std::string input_name(const char* name, size_t index) {
  return name && *name ? std::string(name) : "input " + std::to_string(index + 1);
}

// Adds one PTX text after checking its syntax, so that errors name the input and line
// at the call that added it, as NVIDIA's JIT does.
CUresult add_ptx(LinkState& s, std::string text, const std::string& name) {
  ptx::ParseOptions opts;
  opts.origin = name;
  auto parsed = ptx::parse_module(text, opts);
  if (!parsed.errors.empty() || !parsed.module) {
    std::string message;
    for (const ptx::Diagnostic& d : parsed.errors)
      message += (message.empty() ? "" : "\n") + d.format();
    s.add_error(message.empty() ? name + ": error: not PTX text" : message);
    return CUDA_ERROR_INVALID_PTX;
  }
  for (const runtime::PtxSource& m : s.modules)
    if (m.text == text) return CUDA_SUCCESS; // the same PTX twice (an object's two fatbin sections)
  if (s.options.verbose())
    s.add_info("info    : added PTX '" + name + "' (" + std::to_string(text.size()) + " bytes)");
  s.modules.push_back({name, std::move(text)});
  return CUDA_SUCCESS;
}

// The PTX of a fatbin that suits the device.
CUresult add_fatbin(LinkState& s, const fatbin::Fatbin& fb, const std::string& name) {
  auto candidates = fatbin::ptx_candidates(fb);
  auto choice = fatbin::select_ptx(candidates, s.device_sm);
  if (!choice) {
    s.add_error(name + ": error: " + choice.error().message() +
                "; Mimic links PTX only (build with -gencode arch=compute_XX,code=compute_XX)");
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  auto text = fatbin::entry_contents(fb.entries[choice->index]);
  if (!text) {
    s.add_error(name + ": error: " + text.error().message());
    return CUDA_ERROR_INVALID_IMAGE;
  }
  return add_ptx(s, std::move(text.value()), name + " [PTX " + choice->target.name() + "]");
}

CUresult add_input(LinkState& s, CUjitInputType type, std::span<const uint8_t> bytes,
                   const std::string& name) {
  switch (type) {
  case CU_JIT_INPUT_PTX: {
    size_t n = 0;
    while (n < bytes.size() && bytes[n])
      ++n;
    return add_ptx(s, std::string(reinterpret_cast<const char*>(bytes.data()), n), name);
  }
  case CU_JIT_INPUT_FATBINARY: {
    auto fb = fatbin::parse_fatbin(bytes);
    if (!fb) {
      s.add_error(name + ": error: " + fb.error().message());
      return CUDA_ERROR_INVALID_IMAGE;
    }
    return add_fatbin(s, fb.value(), name);
  }
  case CU_JIT_INPUT_OBJECT: {
    auto scan = fatbin::scan_file(bytes);
    if (!scan) {
      s.add_error(name + ": error: " + scan.error().message());
      return CUDA_ERROR_INVALID_IMAGE;
    }
    if (scan->format == fatbin::ImageFormat::Ptx)
      return add_input(s, CU_JIT_INPUT_PTX, scan->image, name);
    if (scan->fatbins.empty()) {
      s.add_error(
          name +
          ": error: the object holds no device code (no .nv_fatbin or __nv_relfatbin section)");
      return CUDA_ERROR_INVALID_IMAGE;
    }
    for (const fatbin::LocatedFatbin& located : scan->fatbins)
      if (CUresult r = add_fatbin(s, located.fatbin, name + " (" + located.section + ")")) return r;
    return CUDA_SUCCESS;
  }
  case CU_JIT_INPUT_CUBIN:
    s.add_error(
        name +
        ": error: a cubin holds only NVIDIA machine code (SASS), which Mimic cannot translate; "
        "link its PTX instead");
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  case CU_JIT_INPUT_LIBRARY:
    s.add_error(
        name + ": error: device libraries (.a archives) are not supported yet; link the PTX of its "
               "objects instead");
    return CUDA_ERROR_NOT_SUPPORTED;
  case CU_JIT_INPUT_NVVM:
    s.add_error(name +
                ": error: NVVM IR (link-time optimisation) is not supported; link PTX instead");
    return CUDA_ERROR_NOT_SUPPORTED;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

// Every .extern function and variable one module uses must be defined (.visible or
// .weak) by one of the modules; a symbol defined .visible twice is an error.
std::string unresolved_symbols(const runtime::Program& program) {
  std::map<std::string, std::string, std::less<>> defined; // name -> module
  std::string errors;
  for (const auto& m : program.modules)
    for (const ptx::TopLevel& item : m->items) {
      std::string_view name;
      ptx::Linkage linkage = ptx::Linkage::None;
      bool definition = false;
      if (item.kind == ptx::DirectiveKind::Function) {
        name = item.function->name;
        linkage = item.function->linkage;
        definition = item.function->body != nullptr;
      } else if (item.kind == ptx::DirectiveKind::Var) {
        name = item.var->name;
        linkage = item.var->linkage;
        definition = linkage != ptx::Linkage::Extern;
      } else {
        continue;
      }
      if (!definition || (linkage != ptx::Linkage::Visible && linkage != ptx::Linkage::Weak))
        continue;
      auto [it, fresh] = defined.emplace(std::string(name), m->origin);
      if (!fresh && linkage == ptx::Linkage::Visible)
        errors += (errors.empty() ? "" : "\n") + m->origin + ": error: multiple definition of '" +
                  std::string(name) + "', first defined in " + it->second;
    }
  for (const auto& m : program.modules)
    for (const ptx::TopLevel& item : m->items) {
      std::string_view name;
      uint32_t line = 0;
      if (item.kind == ptx::DirectiveKind::Function && !item.function->body &&
          item.function->linkage == ptx::Linkage::Extern) {
        name = item.function->name;
        line = item.function->loc.line;
      } else if (item.kind == ptx::DirectiveKind::Var &&
                 item.var->linkage == ptx::Linkage::Extern &&
                 item.var->space != ptx::Modifier::Shared) {
        name = item.var->name;
      } else {
        continue;
      }
      if (!defined.count(name))
        errors += (errors.empty() ? "" : "\n") + m->origin +
                  (line ? ":" + std::to_string(line) : "") + ": error: undefined reference to '" +
                  std::string(name) + "'";
    }
  return errors;
}

CUresult add_data(CUlinkState state, CUjitInputType type, const void* data, size_t size,
                  const char* name, unsigned numOptions, CUjit_option* options,
                  void** optionValues) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  LinkState* s = link_states().find(state);
  if (!s) return state ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
  if (!data || size == 0 || type < 0 || type >= CU_JIT_NUM_INPUT_TYPES)
    return CUDA_ERROR_INVALID_VALUE;
  JitOptions local; // options for this input only
  if (CUresult r = local.parse(numOptions, options, optionValues)) return r;
  std::lock_guard lock(s->mutex);
  if (s->completed)
    return CUDA_ERROR_INVALID_VALUE; // nothing can be added once the link is complete
  auto started = std::chrono::steady_clock::now();
  CUresult r = add_input(*s, type, {static_cast<const uint8_t*>(data), size},
                         input_name(name, s->modules.size()));
  s->time += std::chrono::steady_clock::now() - started;
  return r;
}

CUresult add_file(CUlinkState state, CUjitInputType type, const char* path, unsigned numOptions,
                  CUjit_option* options, void** optionValues) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!link_states().find(state))
    return state ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
  if (!path) return CUDA_ERROR_INVALID_VALUE;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (LinkState* s = link_states().find(state)) {
      std::lock_guard lock(s->mutex);
      s->add_error(std::string(path) + ": error: cannot open the file");
    }
    return CUDA_ERROR_FILE_NOT_FOUND;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string bytes = text.str();
  if (bytes.empty()) return CUDA_ERROR_INVALID_VALUE;
  return add_data(state, type, bytes.data(), bytes.size(), path, numOptions, options, optionValues);
}

} // namespace

namespace impl {

CUresult cuLinkCreate_v6050(unsigned int numOptions, CUjit_option* options, void** optionValues,
                            CUlinkState* stateOut) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!stateOut) return CUDA_ERROR_INVALID_VALUE;
  auto s = std::make_unique<LinkState>();
  if (CUresult r = s->options.parse(numOptions, options, optionValues)) return r;
  s->device_sm = current_sm();
  s->options.write_logs("", ""); // the buffers start empty
  *stateOut = reinterpret_cast<CUlinkState>(s.get());
  link_states().add(s.release());
  return CUDA_SUCCESS;
}

CUresult cuLinkCreate_v5050(unsigned int numOptions, CUjit_option* options, void** optionValues,
                            CUlinkState* stateOut) {
  return cuLinkCreate_v6050(numOptions, options, optionValues, stateOut);
}

CUresult cuLinkAddData_v6050(CUlinkState state, CUjitInputType type, void* data, size_t size,
                             const char* name, unsigned int numOptions, CUjit_option* options,
                             void** optionValues) {
  return add_data(state, type, data, size, name, numOptions, options, optionValues);
}

CUresult cuLinkAddData_v5050(CUlinkState state, CUjitInputType type, void* data, size_t size,
                             const char* name, unsigned int numOptions, CUjit_option* options,
                             void** optionValues) {
  return add_data(state, type, data, size, name, numOptions, options, optionValues);
}

CUresult cuLinkAddFile_v6050(CUlinkState state, CUjitInputType type, const char* path,
                             unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return add_file(state, type, path, numOptions, options, optionValues);
}

CUresult cuLinkAddFile_v5050(CUlinkState state, CUjitInputType type, const char* path,
                             unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return add_file(state, type, path, numOptions, options, optionValues);
}

CUresult cuLinkComplete_v5050(CUlinkState state, void** cubinOut, size_t* sizeOut) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  LinkState* s = link_states().find(state);
  if (!s) return state ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
  if (!cubinOut || !sizeOut) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(s->mutex);
  if (s->completed) {
    *cubinOut = s->image.data();
    *sizeOut = s->image.size();
    return CUDA_SUCCESS;
  }
  if (s->modules.empty()) {
    s->add_error("error: nothing to link: add PTX with cuLinkAddData or cuLinkAddFile first");
    return CUDA_ERROR_INVALID_VALUE;
  }
  auto started = std::chrono::steady_clock::now();
  // Parse and verify the modules together, as cuModuleLoadData will load them.
  auto program = runtime::load_linked_program(s->modules, "link");
  if (!program) {
    s->add_error(program.error().message());
    return CUDA_ERROR_INVALID_PTX;
  }
  if (std::string unresolved = unresolved_symbols(*program.value()); !unresolved.empty()) {
    s->add_error(unresolved);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  s->image = runtime::make_linked_image(s->modules);
  s->completed = true;
  s->time += std::chrono::steady_clock::now() - started;
  std::string names;
  for (const runtime::PtxSource& m : s->modules)
    names += (names.empty() ? "" : ", ") + m.name;
  const runtime::Program& p = *program.value();
  s->add_info("info    : linked " + std::to_string(s->modules.size()) + " PTX module" +
              (s->modules.size() == 1 ? "" : "s") + " (" + names + ") for sm_" +
              std::to_string(s->device_sm) + ": " + std::to_string(p.kernels.size()) + " kernel" +
              (p.kernels.size() == 1 ? "" : "s") + ", " + std::to_string(p.globals.size()) +
              " global variable" + (p.globals.size() == 1 ? "" : "s"));
  if (s->options.verbose())
    for (const runtime::KernelInfo& k : p.kernels)
      s->add_info("info    : kernel '" + k.name + "': " + std::to_string(k.param_bytes) +
                  " bytes of parameters, " + std::to_string(k.static_shared_bytes) +
                  " bytes of shared memory, " + std::to_string(k.local_bytes) +
                  " bytes of local memory");
  s->options.write_logs(s->info_log, s->error_log);
  s->options.write_wall_time(s->time.count());
  *cubinOut = s->image.data();
  *sizeOut = s->image.size();
  return CUDA_SUCCESS;
}

CUresult cuLinkDestroy_v5050(CUlinkState state) {
  if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
  LinkState* s = link_states().find(state);
  if (!s || !link_states().remove(s))
    return state ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(s->mutex);
  // The state stays allocated (stale handles stay detectable); its image and inputs go.
  std::vector<uint8_t>().swap(s->image);
  std::vector<runtime::PtxSource>().swap(s->modules);
  return CUDA_SUCCESS;
}

} // namespace impl
} // namespace mimic::driver
