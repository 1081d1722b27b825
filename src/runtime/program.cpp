#include "runtime/program.h"

#include <cstring>
#include <cuda.h>
#include <link.h>
#include <map>
#include <set>

#include "fatbin/binary.h"
#include "fatbin/select.h"
#include "ptx/summary.h"
#include "ptx/verifier.h"
#include "runtime/link_image.h"
#include "support/file.h"
#include "support/log.h"

namespace mimic::runtime {

size_t declared_align(const ptx::VarDecl& d) {
  size_t bits = ptx::type_bits(d.type);
  size_t a = bits >= 8 ? bits / 8 : 1;
  if (d.vector == ptx::Modifier::V2)
    a *= 2;
  else if (d.vector == ptx::Modifier::V4)
    a *= 4;
  else if (d.vector == ptx::Modifier::V8)
    a *= 8;
  return d.align ? std::max<size_t>(a, d.align) : a;
}

namespace {

// Names an instruction operand mentions (registers, symbols, called functions).
void operand_names(const ptx::Operand& op, std::vector<std::string_view>& out) {
  switch (op.kind) {
  case ptx::OperandKind::Name:
    out.push_back(op.name_view());
    break;
  case ptx::OperandKind::Address:
  case ptx::OperandKind::Vector:
  case ptx::OperandKind::List:
    for (const ptx::Operand& e : op.children())
      operand_names(e, out);
    break;
  default:
    break;
  }
}

} // namespace

void mentioned_names(const ptx::Block& b, std::vector<std::string_view>& out) {
  for (const ptx::Statement& s : b.statements) {
    if (s.kind == ptx::StatementKind::Instruction)
      for (const ptx::Operand& op : s.instruction->ops())
        operand_names(op, out);
    else if (s.kind == ptx::StatementKind::Block)
      mentioned_names(*s.block, out);
  }
}

namespace {

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Module-level .shared variables reached from `f`, directly or through the functions it
// calls, in declaration order.
std::vector<const ptx::VarDecl*> reached_shared(const ptx::Module& m, const ptx::Function& f) {
  std::map<std::string_view, const ptx::VarDecl*> shared;
  std::map<std::string_view, const ptx::Function*> functions;
  for (const ptx::TopLevel& item : m.items) {
    if (item.kind == ptx::DirectiveKind::Var && item.var->space == ptx::Modifier::Shared)
      shared[item.var->name] = item.var;
    else if (item.kind == ptx::DirectiveKind::Function && item.function->body)
      functions[item.function->name] = item.function;
  }
  std::set<const ptx::VarDecl*> used;
  std::set<const ptx::Function*> seen{&f};
  std::vector<const ptx::Function*> todo{&f};
  while (!todo.empty()) {
    const ptx::Function* g = todo.back();
    todo.pop_back();
    std::vector<std::string_view> names;
    mentioned_names(*g->body, names);
    for (std::string_view n : names) {
      if (auto v = shared.find(n); v != shared.end())
        used.insert(v->second);
      else if (auto c = functions.find(n); c != functions.end() && seen.insert(c->second).second)
        todo.push_back(c->second);
    }
  }
  std::vector<const ptx::VarDecl*> out;
  for (const ptx::TopLevel& item : m.items)
    if (item.kind == ptx::DirectiveKind::Var && used.count(item.var))
      out.push_back(item.var);
  return out;
}

bool is_dynamic_shared(const ptx::VarDecl& v) { return v.dims.size() == 1 && v.dims[0] < 0; }

KernelInfo describe_kernel(const ptx::Module& m, const ptx::Function& f) {
  KernelInfo k;
  k.name = std::string(f.name);
  k.function = &f;
  k.module = &m;
  k.params = param_layout(f, &k.param_bytes);
  for (const ptx::FunctionDirective& d : f.directives) {
    if ((d.name == ptx::Modifier::Maxntid || d.name == ptx::Modifier::Reqntid) && !d.values.empty()) {
      uint64_t n = 1;
      for (uint64_t v : d.values)
        n *= v;
      k.max_threads_per_block = int(std::min<uint64_t>(n, 1024));
    }
    if (d.name == ptx::Modifier::Reqnctapercluster)
      for (size_t i = 0; i < 3; ++i)
        k.cluster_dims[i] = i < d.values.size() ? unsigned(d.values[i]) : 1;
  }
  std::vector<const ptx::VarDecl*> shared = reached_shared(m, f);
  for (const ptx::Statement& s : f.body->statements) {
    if (s.kind != ptx::StatementKind::Var)
      continue;
    if (s.var->space == ptx::Modifier::Shared)
      shared.push_back(s.var);
    else if (s.var->space == ptx::Modifier::Local)
      k.local_bytes = round_up(k.local_bytes, declared_align(*s.var)) + ptx::declared_size(*s.var);
  }
  size_t dynamic_align = 16;
  for (const ptx::VarDecl* v : shared) {
    if (is_dynamic_shared(*v)) {
      dynamic_align = std::max(dynamic_align, declared_align(*v));
      continue;
    }
    k.static_shared_bytes = round_up(k.static_shared_bytes, declared_align(*v));
    k.shared.push_back({std::string(v->name), k.static_shared_bytes});
    k.static_shared_bytes += ptx::declared_size(*v);
  }
  k.dynamic_shared_offset = round_up(k.static_shared_bytes, dynamic_align);
  for (const ptx::VarDecl* v : shared)
    if (is_dynamic_shared(*v))
      k.shared.push_back({std::string(v->name), k.dynamic_shared_offset});
  return k;
}

Status add_module(Program& p, std::unique_ptr<ptx::Module> module) {
  const ptx::Module& m = *module;
  for (const ptx::TopLevel& item : m.items) {
    if (item.kind == ptx::DirectiveKind::Function && item.function->is_entry && item.function->body)
      p.kernels.push_back(describe_kernel(m, *item.function));
    if (item.kind != ptx::DirectiveKind::Var)
      continue;
    const ptx::VarDecl& v = *item.var;
    if (v.linkage == ptx::Linkage::Extern)
      continue;
    if (v.space != ptx::Modifier::Global && v.space != ptx::Modifier::Const)
      continue;
    GlobalInfo g;
    g.name = std::string(v.name);
    g.decl = &v;
    g.module = &m;
    g.size = ptx::declared_size(v);
    g.align = declared_align(v);
    g.constant = v.space == ptx::Modifier::Const;
    for (const ptx::VarAttribute& a : v.attributes)
      g.managed |= a.name == ptx::Modifier::Managed;
    p.globals.push_back(g);
  }
  p.modules.push_back(std::move(module));
  return {};
}

// Parses and verifies one PTX text; the error names every failing function.
Result<std::unique_ptr<ptx::Module>> parse_checked(std::string text, const std::string& origin) {
  ptx::ParseOptions opts;
  opts.origin = origin;
  auto parsed = ptx::parse_module(std::move(text), opts);
  std::vector<ptx::Diagnostic> problems = parsed.errors;
  if (parsed.module) {
    auto found = ptx::verify_module(*parsed.module);
    problems.insert(problems.end(), found.begin(), found.end());
  }
  if (problems.empty())
    return std::move(parsed.module);
  std::string message = origin + ": the PTX cannot be used (" + std::to_string(problems.size()) + " problem" +
                        (problems.size() == 1 ? "" : "s") + "):";
  size_t shown = 0;
  for (const ptx::Diagnostic& d : problems) {
    if (++shown > 20) {
      message += "\n  ... and " + std::to_string(problems.size() - 20) + " more";
      break;
    }
    message += "\n  " + d.format();
  }
  return Error(message, CUDA_ERROR_INVALID_PTX);
}

// The file of the loaded object (executable or shared library) whose mapping holds
// `address`; empty when none does.
std::string object_file_containing(const void* address) {
  struct Search {
    uintptr_t address;
    std::string path;
    bool found = false;
  } search{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD)
            continue;
          uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (s->address >= start && s->address < start + ph.p_memsz) {
            s->path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
            s->found = true;
            return 1;
          }
        }
        return 0;
      },
      &search);
  return search.found ? search.path : std::string();
}

// Programs built with -rdc=true register a device-linked fatbin holding only SASS; their
// PTX is in the __nv_relfatbin section of the same object, one module per compilation
// unit. Returns those modules (parsed and verified), or nothing when there are none.
Result<std::vector<std::unique_ptr<ptx::Module>>> relocatable_ptx(const void* image, unsigned device_sm,
                                                                 std::string& selected) {
  std::vector<std::unique_ptr<ptx::Module>> out;
  std::string path = object_file_containing(image);
  if (path.empty())
    return out;
  auto file = MappedFile::open(path);
  if (!file)
    return out;
  auto scan = fatbin::scan_file(file->bytes());
  if (!scan)
    return out;
  for (const auto& located : scan->fatbins) {
    if (located.section != "__nv_relfatbin")
      continue;
    auto candidates = fatbin::ptx_candidates(located.fatbin);
    auto choice = fatbin::select_ptx(candidates, device_sm);
    if (!choice)
      continue;
    const fatbin::Entry& entry = located.fatbin.entries[choice->index];
    auto text = fatbin::entry_contents(entry);
    if (!text)
      return Error(path + ": " + text.error().message(), CUDA_ERROR_INVALID_IMAGE);
    char where[96];
    snprintf(where, sizeof where, " [__nv_relfatbin at 0x%llx, PTX %s]", (unsigned long long)entry.offset,
             choice->target.name().c_str());
    auto module = parse_checked(std::move(text.value()), path + where);
    if (!module)
      return module.error();
    selected = "PTX " + choice->target.name() + " from __nv_relfatbin (-rdc)";
    out.push_back(std::move(module.value()));
  }
  return out;
}

Result<std::shared_ptr<Program>> from_fatbin(std::span<const uint8_t> bytes, unsigned device_sm,
                                            const std::string& origin) {
  auto fb = fatbin::parse_fatbin(bytes);
  if (!fb)
    return Error(origin + ": " + fb.error().message(), CUDA_ERROR_INVALID_IMAGE);
  auto candidates = fatbin::ptx_candidates(fb.value());
  auto choice = fatbin::select_ptx(candidates, device_sm);
  if (!choice && candidates.empty()) {
    std::string selected;
    auto rdc = relocatable_ptx(bytes.data(), device_sm, selected);
    if (!rdc)
      return rdc.error();
    if (!rdc->empty()) {
      auto program = std::make_shared<Program>();
      program->origin = origin;
      program->selected = selected;
      for (auto& m : rdc.value())
        if (Status s = add_module(*program, std::move(m)); !s)
          return s.error();
      return program;
    }
  }
  if (!choice) {
    std::string sass;
    for (const auto& e : fb->entries)
      if (e.is_elf())
        sass += (sass.empty() ? "" : ", ") + fatbin::entry_target(e).name();
    return Error(origin + ": " + choice.error().message() +
                     (sass.empty() ? "" : "; it holds machine code (SASS) only for " + sass +
                                              ", which Mimic cannot translate: rebuild with PTX "
                                              "(e.g. nvcc -gencode arch=compute_XX,code=compute_XX)"),
                 CUDA_ERROR_NO_BINARY_FOR_GPU);
  }
  const fatbin::Entry& entry = fb->entries[choice->index];
  if (choice->above_device)
    warn_once("ptx-above-" + origin,
              origin + ": no PTX for compute capability " + std::to_string(device_sm / 10) + "." +
                  std::to_string(device_sm % 10) + " or lower; using the PTX for " + choice->target.name() +
                  " (set MIMIC_COMPUTE_CAPABILITY to match it)");
  auto text = fatbin::entry_contents(entry);
  if (!text)
    return Error(origin + ": " + text.error().message(), CUDA_ERROR_INVALID_IMAGE);
  auto program = std::make_shared<Program>();
  program->origin = origin;
  program->selected = "PTX " + choice->target.name() + " (ISA " + std::to_string(entry.version_major) + "." +
                      std::to_string(entry.version_minor) + ")";
  auto module = parse_checked(std::move(text.value()), origin + " [" + program->selected + "]");
  if (!module)
    return module.error();
  if (Status s = add_module(*program, std::move(module.value())); !s)
    return s.error();
  return program;
}

} // namespace

const KernelInfo* Program::kernel(std::string_view name) const {
  for (const KernelInfo& k : kernels)
    if (k.name == name)
      return &k;
  return nullptr;
}

const GlobalInfo* Program::global(std::string_view name) const {
  for (const GlobalInfo& g : globals)
    if (g.name == name)
      return &g;
  return nullptr;
}

std::vector<ParamSlot> param_layout(const ptx::Function& f, size_t* total_bytes) {
  std::vector<ParamSlot> out;
  size_t offset = 0;
  for (const ptx::VarDecl& p : f.params) {
    ParamSlot slot;
    slot.size = ptx::declared_size(p);
    slot.align = declared_align(p);
    slot.offset = round_up(offset, slot.align);
    offset = slot.offset + slot.size;
    out.push_back(slot);
  }
  if (total_bytes)
    *total_bytes = offset;
  return out;
}

Result<std::shared_ptr<Program>> load_program_from_ptx(std::string text, std::string origin) {
  auto module = parse_checked(std::move(text), origin);
  if (!module)
    return module.error();
  auto program = std::make_shared<Program>();
  program->origin = origin;
  program->selected = "PTX text";
  if (Status s = add_module(*program, std::move(module.value())); !s)
    return s.error();
  return program;
}

Result<std::shared_ptr<Program>> load_linked_program(std::vector<PtxSource> modules, std::string origin) {
  auto program = std::make_shared<Program>();
  program->origin = origin;
  program->selected = "PTX linked from " + std::to_string(modules.size()) + " module" +
                      (modules.size() == 1 ? "" : "s");
  std::string problems;
  for (PtxSource& m : modules) {
    auto module = parse_checked(std::move(m.text), m.name);
    if (!module) {
      problems += (problems.empty() ? "" : "\n") + module.error().message();
      continue;
    }
    if (Status s = add_module(*program, std::move(module.value())); !s)
      problems += (problems.empty() ? "" : "\n") + s.error().message();
  }
  if (!problems.empty())
    return Error(problems, CUDA_ERROR_INVALID_PTX);
  return program;
}

Result<std::shared_ptr<Program>> load_program(const void* image, unsigned device_sm) {
  if (is_linked_image(image)) {
    auto modules = read_linked_image(image);
    if (!modules)
      return modules.error();
    char where[64];
    snprintf(where, sizeof where, "linked image at %p", image);
    return load_linked_program(std::move(modules.value()), where);
  }
  auto img = fatbin::classify_memory_image(image);
  if (!img)
    return Error("module image: " + img.error().message(), CUDA_ERROR_INVALID_IMAGE);
  char where[64];
  snprintf(where, sizeof where, "image at %p", image);
  switch (img->format) {
  case fatbin::ImageFormat::Wrapper:
  case fatbin::ImageFormat::Fatbin:
    return from_fatbin(img->bytes, device_sm, where);
  case fatbin::ImageFormat::Ptx:
    return load_program_from_ptx(std::string(reinterpret_cast<const char*>(img->bytes.data()), img->bytes.size()),
                                 where);
  case fatbin::ImageFormat::Cubin:
    return Error(std::string(where) + ": a cubin holds only NVIDIA machine code (SASS), which Mimic cannot "
                                      "translate; load PTX or a fatbin that carries PTX",
                 CUDA_ERROR_NO_BINARY_FOR_GPU);
  case fatbin::ImageFormat::HostElf:
    break;
  }
  return Error(std::string(where) + ": not a module image", CUDA_ERROR_INVALID_IMAGE);
}

// ---------------------------------------------------------------- initializers

namespace {

struct InitWriter {
  const GlobalInfo& global;
  uint8_t* out;
  size_t size;
  size_t element;                // bytes per scalar element
  ptx::Modifier type;
  const std::function<Result<uint64_t>(std::string_view)>& address_of;
  size_t position = 0;           // in elements

  Status scalar(const ptx::Operand& v) {
    if (position * element + element > size)
      return Error("initializer of '" + global.name + "' has more elements than the variable holds");
    uint64_t bits = 0;
    bool is_float = type == ptx::Modifier::F32 || type == ptx::Modifier::F64;
    switch (v.kind) {
    case ptx::OperandKind::Int:
      if (type == ptx::Modifier::F32) {
        float f = v.unsigned_literal ? float(v.u) : float(v.i);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        bits = b;
      } else if (type == ptx::Modifier::F64) {
        double d = v.unsigned_literal ? double(v.u) : double(v.i);
        std::memcpy(&bits, &d, 8);
      } else {
        bits = v.u;
      }
      break;
    case ptx::OperandKind::F32:
    case ptx::OperandKind::F64:
    case ptx::OperandKind::Decimal: {
      double d;
      if (v.kind == ptx::OperandKind::F32) {
        float f;
        uint32_t b = uint32_t(v.u);
        std::memcpy(&f, &b, 4);
        d = f;
      } else if (v.kind == ptx::OperandKind::F64) {
        std::memcpy(&d, &v.u, 8);
      } else {
        d = v.d;
      }
      if (type == ptx::Modifier::F32) {
        float f = float(d);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        bits = b;
      } else if (type == ptx::Modifier::F64) {
        std::memcpy(&bits, &d, 8);
      } else if (v.kind == ptx::OperandKind::F32 && element == 4) {
        bits = v.u; // raw bits into a .b32
      } else if (v.kind == ptx::OperandKind::F64 && element == 8) {
        bits = v.u;
      } else {
        return Error("floating-point initializer for the non-float variable '" + global.name + "'");
      }
      break;
    }
    case ptx::OperandKind::Name:
    case ptx::OperandKind::GenericOf: {
      if (is_float || element != 8)
        return Error("the address of '" + std::string(v.name_view()) + "' initializes '" + global.name +
                     "', which is not a 64-bit integer");
      auto a = address_of(v.name_view());
      if (!a)
        return a.error();
      bits = a.value() + uint64_t(v.offset);
      break;
    }
    default:
      return Error("unsupported initializer element in '" + global.name + "'");
    }
    std::memcpy(out + position * element, &bits, element);
    ++position;
    return {};
  }

  Status walk(const ptx::Operand& v) {
    if (v.kind != ptx::OperandKind::InitList)
      return scalar(v);
    for (const ptx::Operand& e : v.children())
      if (Status s = walk(e); !s)
        return s;
    return {};
  }
};

} // namespace

Status initialize_global(const GlobalInfo& g, uint8_t* out,
                         const std::function<Result<uint64_t>(std::string_view)>& address_of) {
  std::memset(out, 0, g.size);
  if (!g.decl->init)
    return {};
  size_t bits = ptx::type_bits(g.decl->type);
  size_t element = bits >= 8 ? bits / 8 : 1;
  InitWriter w{g, out, g.size, element, g.decl->type, address_of};
  return w.walk(*g.decl->init);
}

} // namespace mimic::runtime
