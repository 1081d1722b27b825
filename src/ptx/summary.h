// What a PTX module declares, for tools (`mimic info`) and loaders: its kernels and
// functions with their parameters, and which of them failed to parse.
#pragma once

#include <string>
#include <vector>

#include "ptx/parser.h"

namespace mimic::ptx {

struct ParamSummary {
  std::string type;  // ".u64", ".b8"
  uint64_t size = 0; // bytes
  uint32_t align = 0;
  bool pointer = false;     // .ptr attribute
  std::string pointee_space; // ".global" ...
  std::string text;  // as declared, without the name: ".param .u64 .ptr .global .align 16"
};

struct FunctionSummary {
  std::string name;
  bool is_entry = false;
  bool defined = false; // has a body (declarations of externs have none)
  bool parsed = true;
  std::string error;    // when !parsed
  std::vector<ParamSummary> params;
};

struct ModuleSummary {
  bool parsed = false;           // the whole module parsed
  std::string module_error;      // module-level error (no functions known then)
  unsigned version_major = 0, version_minor = 0;
  std::string target;            // "sm_120" (first target word)
  unsigned address_size = 0;
  std::vector<FunctionSummary> functions; // in source order; failed ones appended at the end
  size_t kernel_count() const;
  size_t failed_count() const;
};

// With `verify`, functions with verifier findings (verifier.h) count as failed too.
ModuleSummary summarize(const ParseResult& result, bool verify = true);

// Size in bytes of a declared parameter or variable (vector and array sizes included).
uint64_t declared_size(const VarDecl& decl);

} // namespace mimic::ptx
