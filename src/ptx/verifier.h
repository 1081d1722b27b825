// Semantic checks of a parsed module, beyond syntax:
//   - the module has .version and a known .target;
//   - every name an instruction uses is declared: registers (including %r<N> ranges) in
//     an enclosing block or the parameter lists, module variables and functions, special
//     registers, labels of the function;
//   - guards are predicates; branch and call targets exist; no name is declared twice in
//     one scope and no label twice in one function;
//   - instructions have a plausible number of operands and the modifiers they need
//     (a type on arithmetic, a state space or generic address on memory operations).
// Each finding is a Diagnostic naming the function and the line; a function with a
// finding is one that cannot be translated.
#pragma once

#include <vector>

#include "ptx/parser.h"

namespace mimic::ptx {

std::vector<Diagnostic> verify_module(const Module& module);

// Names of the special registers (%tid, %laneid, %clock64, %envreg3 ...).
bool is_special_register(std::string_view name);

} // namespace mimic::ptx
