#include "ptx/compare.h"

#include <cstring>

#include "ptx/printer.h"

namespace mimic::ptx {

namespace {

bool equal(const Operand& a, const Operand& b);

bool equal_list(std::span<const Operand> a, std::span<const Operand> b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i]))
      return false;
  return true;
}

bool equal(const Operand& a, const Operand& b) {
  if (a.kind != b.kind || a.negated != b.negated || a.unified != b.unified || a.component != b.component ||
      a.offset != b.offset)
    return false;
  switch (a.kind) {
  case OperandKind::Name:
  case OperandKind::MaskedName:
  case OperandKind::GenericOf:
    return a.name_view() == b.name_view();
  case OperandKind::Int:
    return a.u == b.u && a.unsigned_literal == b.unsigned_literal;
  case OperandKind::F32:
  case OperandKind::F64:
    return a.u == b.u;
  case OperandKind::Decimal:
    return std::memcmp(&a.d, &b.d, sizeof(double)) == 0;
  case OperandKind::Sink:
    return true;
  case OperandKind::Vector:
  case OperandKind::Address:
  case OperandKind::Pair:
  case OperandKind::InitList:
  case OperandKind::List:
  case OperandKind::NamedValue:
    return equal_list(a.children(), b.children());
  case OperandKind::Expr:
    return a.expr->op == b.expr->op && equal(a.expr->lhs, b.expr->lhs) && equal(a.expr->rhs, b.expr->rhs) &&
           equal(a.expr->third, b.expr->third);
  }
  return false;
}

bool equal(const VarAttribute& a, const VarAttribute& b) {
  return a.name == b.name && std::equal(a.args.begin(), a.args.end(), b.args.begin(), b.args.end());
}

template <typename T, typename F> bool equal_span(std::span<const T> a, std::span<const T> b, F eq) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!eq(a[i], b[i]))
      return false;
  return true;
}

bool equal(const VarDecl& a, const VarDecl& b) {
  return a.linkage == b.linkage && a.space == b.space && a.vector == b.vector && a.type == b.type &&
         a.align == b.align && a.ptr == b.ptr && a.ptr_space == b.ptr_space && a.ptr_align == b.ptr_align &&
         a.has_range == b.has_range && a.range == b.range && a.name == b.name &&
         std::equal(a.dims.begin(), a.dims.end(), b.dims.begin(), b.dims.end()) &&
         equal_span(a.attributes, b.attributes, [](auto& x, auto& y) { return equal(x, y); }) &&
         (a.init == nullptr) == (b.init == nullptr) && (!a.init || equal(*a.init, *b.init));
}

bool equal(const Instruction& a, const Instruction& b) {
  return a.opcode == b.opcode && a.guard == b.guard && a.guard_negated == b.guard_negated &&
         std::equal(a.mods().begin(), a.mods().end(), b.mods().begin(), b.mods().end()) &&
         equal_list(a.ops(), b.ops());
}

bool equal(const Loc& a, const Loc& b) {
  return a.file == b.file && a.line == b.line && a.column == b.column &&
         a.has_function_name == b.has_function_name && (!a.has_function_name || equal(a.function_name, b.function_name)) &&
         a.has_inlined_at == b.has_inlined_at && a.inlined_file == b.inlined_file &&
         a.inlined_line == b.inlined_line && a.inlined_column == b.inlined_column;
}

bool equal_decls(std::span<const VarDecl> a, std::span<const VarDecl> b) {
  return equal_span(a, b, [](auto& x, auto& y) { return equal(x, y); });
}

bool equal(const Block& a, const Block& b, std::string& where);

bool equal(const Statement& a, const Statement& b, std::string& where) {
  if (a.kind != b.kind) {
    where = "statement kinds differ";
    return false;
  }
  bool same = true;
  switch (a.kind) {
  case StatementKind::Instruction:
    same = equal(*a.instruction, *b.instruction);
    if (!same) {
      std::string x, y;
      print_instruction(x, *a.instruction);
      print_instruction(y, *b.instruction);
      where = "instruction '" + x + "' vs '" + y + "'";
    }
    return same;
  case StatementKind::Label:
  case StatementKind::Pragma:
    same = a.text_view() == b.text_view();
    break;
  case StatementKind::Var:
    same = equal(*a.var, *b.var);
    break;
  case StatementKind::Block:
    return equal(*a.block, *b.block, where);
  case StatementKind::Loc:
    same = equal(*a.loc_directive, *b.loc_directive);
    break;
  case StatementKind::BranchTargets:
  case StatementKind::CallTargets:
    same = a.labeled->label == b.labeled->label &&
           std::equal(a.labeled->targets.begin(), a.labeled->targets.end(), b.labeled->targets.begin(),
                      b.labeled->targets.end());
    break;
  case StatementKind::CallPrototype:
    same = a.labeled->label == b.labeled->label &&
           a.labeled->prototype->has_returns == b.labeled->prototype->has_returns &&
           a.labeled->prototype->noreturn == b.labeled->prototype->noreturn &&
           equal_decls(a.labeled->prototype->returns, b.labeled->prototype->returns) &&
           equal_decls(a.labeled->prototype->params, b.labeled->prototype->params);
    break;
  }
  if (!same)
    where = "statement at line " + std::to_string(a.loc.line) + " differs";
  return same;
}

bool equal(const Block& a, const Block& b, std::string& where) {
  if (a.statements.size() != b.statements.size()) {
    where = "blocks hold " + std::to_string(a.statements.size()) + " and " +
            std::to_string(b.statements.size()) + " statements";
    return false;
  }
  for (size_t i = 0; i < a.statements.size(); ++i)
    if (!equal(a.statements[i], b.statements[i], where))
      return false;
  return true;
}

bool equal(const Function& a, const Function& b, std::string& where) {
  where = "signature";
  if (a.is_entry != b.is_entry || a.linkage != b.linkage || a.name != b.name ||
      a.has_returns != b.has_returns || a.has_params != b.has_params ||
      !equal_decls(a.returns, b.returns) || !equal_decls(a.params, b.params) ||
      !equal_span(a.attributes, b.attributes, [](auto& x, auto& y) { return equal(x, y); }))
    return false;
  where = "directives";
  if (!equal_span(a.directives, b.directives, [](const FunctionDirective& x, const FunctionDirective& y) {
        return x.name == y.name && x.text == y.text &&
               std::equal(x.values.begin(), x.values.end(), y.values.begin(), y.values.end());
      }))
    return false;
  where = "body presence";
  if ((a.body == nullptr) != (b.body == nullptr))
    return false;
  where.clear();
  return !a.body || equal(*a.body, *b.body, where);
}

} // namespace

std::optional<std::string> first_difference(const Module& a, const Module& b) {
  if (a.version_major != b.version_major || a.version_minor != b.version_minor)
    return "versions differ";
  if (a.target != b.target)
    return "targets differ";
  if (a.address_size != b.address_size)
    return "address sizes differ";
  if (a.items.size() != b.items.size())
    return "modules hold " + std::to_string(a.items.size()) + " and " + std::to_string(b.items.size()) +
           " top-level items";
  for (size_t i = 0; i < a.items.size(); ++i) {
    const TopLevel& x = a.items[i];
    const TopLevel& y = b.items[i];
    std::string item = "top-level item " + std::to_string(i);
    if (x.kind != y.kind)
      return item + ": kinds differ";
    switch (x.kind) {
    case DirectiveKind::Var:
      if (!equal(*x.var, *y.var))
        return item + ": variable '" + std::string(x.var->name) + "' differs";
      break;
    case DirectiveKind::Function: {
      std::string where;
      if (!equal(*x.function, *y.function, where))
        return item + ": function '" + std::string(x.function->name) + "' differs: " + where;
      break;
    }
    case DirectiveKind::File:
      if (x.file->index != y.file->index || x.file->path != y.file->path ||
          x.file->has_timestamp != y.file->has_timestamp || x.file->timestamp != y.file->timestamp ||
          x.file->size != y.file->size)
        return item + ": .file differs";
      break;
    case DirectiveKind::Section: {
      const Section& s = *x.section;
      const Section& t = *y.section;
      bool same = s.name == t.name &&
                  equal_span(s.items, t.items, [](const SectionItem& p, const SectionItem& q) {
                    return p.kind == q.kind && p.type == q.type && p.label == q.label &&
                           equal_list(p.values, q.values);
                  });
      if (!same)
        return item + ": section '" + std::string(s.name) + "' differs";
      break;
    }
    case DirectiveKind::Pragma:
      if (std::string_view(x.text.ptr, x.text.len) != std::string_view(y.text.ptr, y.text.len))
        return item + ": .pragma differs";
      break;
    case DirectiveKind::Alias:
      if (std::string_view(x.alias.a, x.alias.alen) != std::string_view(y.alias.a, y.alias.alen) ||
          std::string_view(x.alias.b, x.alias.blen) != std::string_view(y.alias.b, y.alias.blen))
        return item + ": .alias differs";
      break;
    case DirectiveKind::Loc:
      if (!equal(*x.loc, *y.loc))
        return item + ": .loc differs";
      break;
    }
  }
  return std::nullopt;
}

} // namespace mimic::ptx
