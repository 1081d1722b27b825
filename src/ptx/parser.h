// Parsing PTX text into a Module.
//
// A syntax error inside a function body fails that function only: the parser records
// the error (with the function's name), skips to the end of the body and goes on, so a
// tool can say which kernels of a module parse. Errors outside functions end the parse.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ptx/ast.h"

namespace mimic::ptx {

struct Diagnostic {
  std::string origin;   // file name or description
  uint32_t line = 0, column = 0;
  std::string function; // enclosing function, empty at module level
  std::string message;
  std::string source_line; // the offending line, for display

  // "origin:line:col: error: message (in function 'f')" plus the line and a caret.
  std::string format() const;
};

struct FailedFunction {
  std::string name;
  bool is_entry = false;
  Diagnostic error;
};

struct ParseOptions {
  std::string origin = "<ptx>";
  unsigned max_nesting = 200; // blocks, vectors, expressions
};

struct ParseResult {
  std::unique_ptr<Module> module; // null only when a module-level error stopped the parse
  std::vector<Diagnostic> errors;
  std::vector<FailedFunction> failed_functions;

  bool ok() const { return module && errors.empty(); }
};

ParseResult parse_module(std::string source, const ParseOptions& options = {});

} // namespace mimic::ptx
