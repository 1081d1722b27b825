// Writes a syntax tree back as PTX text, in one canonical layout. Parsing the output gives
// a tree equal (compare.h) to the one printed.
#pragma once

#include <string>

#include "ptx/ast.h"

namespace mimic::ptx {

std::string print_module(const Module& module);
void print_instruction(std::string& out, const Instruction& ins);
void print_operand(std::string& out, const Operand& op);
void print_var_decl(std::string& out, const VarDecl& decl);

} // namespace mimic::ptx
