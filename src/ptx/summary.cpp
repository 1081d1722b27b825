#include "ptx/summary.h"

#include <map>

#include "ptx/printer.h"
#include "ptx/verifier.h"

namespace mimic::ptx {

uint64_t declared_size(const VarDecl& d) {
  uint64_t bits = type_bits(d.type);
  uint64_t bytes = bits >= 8 ? bits / 8 : 1;
  if (d.vector == Modifier::V2)
    bytes *= 2;
  else if (d.vector == Modifier::V4)
    bytes *= 4;
  else if (d.vector == Modifier::V8)
    bytes *= 8;
  else if (d.vector == Modifier::V16)
    bytes *= 16;
  for (int64_t dim : d.dims)
    bytes *= dim < 0 ? 0 : uint64_t(dim);
  return bytes;
}

size_t ModuleSummary::kernel_count() const {
  size_t n = 0;
  for (const auto& f : functions)
    n += f.is_entry;
  return n;
}

size_t ModuleSummary::failed_count() const {
  size_t n = 0;
  for (const auto& f : functions)
    n += !f.parsed;
  return n;
}

ModuleSummary summarize(const ParseResult& result, bool verify) {
  ModuleSummary s;
  if (!result.module) {
    s.parsed = false;
    s.module_error = result.errors.empty() ? "parse failed" : result.errors.front().format();
    return s;
  }
  const Module& m = *result.module;
  s.parsed = result.ok();
  s.version_major = m.version_major;
  s.version_minor = m.version_minor;
  s.target = m.target.empty() ? "" : std::string(m.target.front());
  s.address_size = m.address_size;
  std::map<std::string, std::string, std::less<>> findings; // first finding per function
  if (verify) {
    for (const Diagnostic& d : verify_module(m)) {
      if (d.function.empty()) {
        s.parsed = false;
        if (s.module_error.empty())
          s.module_error = d.format();
      } else {
        findings.emplace(d.function, d.format());
      }
    }
  }
  for (const Function* f : m.functions()) {
    FunctionSummary fs;
    if (auto it = findings.find(f->name); it != findings.end()) {
      fs.parsed = false;
      fs.error = it->second;
      s.parsed = false;
    }
    fs.name = std::string(f->name);
    fs.is_entry = f->is_entry;
    fs.defined = f->body != nullptr;
    for (const VarDecl& p : f->params) {
      ParamSummary ps;
      ps.type = "." + modifier_text(p.type);
      ps.size = declared_size(p);
      ps.align = p.align;
      ps.pointer = p.ptr;
      if (p.ptr_space != Modifier::None)
        ps.pointee_space = "." + modifier_text(p.ptr_space);
      VarDecl unnamed = p;
      unnamed.name = {};
      print_var_decl(ps.text, unnamed);
      while (!ps.text.empty() && ps.text.back() == ' ')
        ps.text.pop_back();
      fs.params.push_back(std::move(ps));
    }
    s.functions.push_back(std::move(fs));
  }
  for (const FailedFunction& f : result.failed_functions) {
    FunctionSummary fs;
    fs.name = f.name;
    fs.is_entry = f.is_entry;
    fs.defined = true;
    fs.parsed = false;
    fs.error = f.error.format();
    s.functions.push_back(std::move(fs));
  }
  return s;
}

} // namespace mimic::ptx
