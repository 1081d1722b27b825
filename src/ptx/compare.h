// Structural equality of syntax trees (source positions are ignored). Used to check that
// printing and re-parsing a module gives back the same tree.
#pragma once

#include <optional>
#include <string>

#include "ptx/ast.h"

namespace mimic::ptx {

// nullopt when equal; otherwise a description of the first difference.
std::optional<std::string> first_difference(const Module& a, const Module& b);

} // namespace mimic::ptx
