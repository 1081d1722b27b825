#include "ptx/printer.h"

#include <charconv>
#include <cinttypes>
#include <cstdio>

namespace mimic::ptx {

namespace {

void append_int(std::string& out, int64_t v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_uint(std::string& out, uint64_t v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_mod(std::string& out, Modifier m) {
  out += '.';
  out += modifier_text(m);
}

void append_offset(std::string& out, int64_t offset) {
  if (offset == 0)
    return;
  if (offset > 0) {
    out += '+';
    append_int(out, offset);
  } else {
    // PTX spells a negative register offset [%r+-4]; [%r-4] is a syntax error to ptxas.
    out += '+';
    append_int(out, offset);
  }
}

void print_operand_list(std::string& out, std::span<const Operand> items) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += ", ";
    print_operand(out, items[i]);
  }
}

void print_attributes(std::string& out, std::span<const VarAttribute> attrs) {
  if (attrs.empty())
    return;
  out += ".attribute(";
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (i)
      out += ", ";
    append_mod(out, attrs[i].name);
    if (!attrs[i].args.empty()) {
      out += '(';
      for (size_t j = 0; j < attrs[i].args.size(); ++j) {
        if (j)
          out += ", ";
        char buf[32];
        snprintf(buf, sizeof buf, "0x%" PRIx64, attrs[i].args[j]);
        out += buf;
      }
      out += ')';
    }
  }
  out += ") ";
}

void print_params(std::string& out, std::span<const VarDecl> params, const char* indent) {
  out += '(';
  for (size_t i = 0; i < params.size(); ++i) {
    out += i ? ",\n" : "\n";
    out += indent;
    print_var_decl(out, params[i]);
  }
  out += params.empty() ? ")" : "\n)";
}

void print_loc(std::string& out, const Loc& loc) {
  out += ".loc ";
  append_uint(out, loc.file);
  out += ' ';
  append_uint(out, loc.line);
  out += ' ';
  append_uint(out, loc.column);
  if (loc.has_function_name) {
    out += ", function_name ";
    print_operand(out, loc.function_name);
  }
  if (loc.has_inlined_at) {
    out += ", inlined_at ";
    append_uint(out, loc.inlined_file);
    out += ' ';
    append_uint(out, loc.inlined_line);
    out += ' ';
    append_uint(out, loc.inlined_column);
  }
}

void print_block(std::string& out, const Block& block, int depth);


void indent_to(std::string& out, int depth) { out.append(size_t(depth), '\t'); }

void print_statement(std::string& out, const Statement& s, int depth) {
  switch (s.kind) {
  case StatementKind::Instruction:
    indent_to(out, depth);
    print_instruction(out, *s.instruction);
    out += '\n';
    return;
  case StatementKind::Label:
    out += s.text_view();
    out += ":\n";
    return;
  case StatementKind::Var:
    indent_to(out, depth);
    print_var_decl(out, *s.var);
    out += ";\n";
    return;
  case StatementKind::Block:
    indent_to(out, depth);
    out += "{\n";
    print_block(out, *s.block, depth + 1);
    indent_to(out, depth);
    out += "}\n";
    return;
  case StatementKind::Pragma:
    indent_to(out, depth);
    out += ".pragma ";
    out += s.text_view();
    out += ";\n";
    return;
  case StatementKind::Loc:
    indent_to(out, depth);
    print_loc(out, *s.loc_directive);
    out += '\n';
    return;
  case StatementKind::BranchTargets:
  case StatementKind::CallTargets:
    out += s.labeled->label;
    out += s.kind == StatementKind::BranchTargets ? ": .branchtargets " : ": .calltargets ";
    for (size_t i = 0; i < s.labeled->targets.size(); ++i) {
      if (i)
        out += ", ";
      out += s.labeled->targets[i];
    }
    out += ";\n";
    return;
  case StatementKind::CallPrototype:
    out += s.labeled->label;
    out += ": .callprototype ";
    if (s.labeled->prototype->has_returns) {
      print_params(out, s.labeled->prototype->returns, "\t");
      out += ' ';
    }
    out += "_ ";
    print_params(out, s.labeled->prototype->params, "\t");
    if (s.labeled->prototype->noreturn)
      out += " .noreturn";
    out += ";\n";
    return;
  }
}

void print_block(std::string& out, const Block& block, int depth) {
  for (const Statement& s : block.statements)
    print_statement(out, s, depth);
}

void print_function(std::string& out, const Function& f) {
  if (f.linkage != Linkage::None) {
    out += linkage_name(f.linkage);
    out += ' ';
  }
  out += f.is_entry ? ".entry " : ".func ";
  print_attributes(out, f.attributes);
  if (f.has_returns) {
    print_params(out, f.returns, "\t");
    out += ' ';
  }
  out += f.name;
  if (f.has_params)
    print_params(out, f.params, "\t");
  out += '\n';
  for (const FunctionDirective& d : f.directives) {
    append_mod(out, d.name);
    if (d.name == Modifier::Pragma) {
      out += ' ';
      out += d.text;
      out += ';';
    }
    for (size_t i = 0; i < d.values.size(); ++i) {
      out += i ? ", " : " ";
      append_uint(out, d.values[i]);
    }
    out += '\n';
  }
  if (!f.body) {
    out += ";\n\n";
    return;
  }
  out += "{\n";
  print_block(out, *f.body, 1);
  out += "}\n\n";
}

} // namespace

// An operand of an expression: a symbol with an offset is itself a sum and needs its own
// parentheses there ((x+4) * y, -(x+4)); everything else brings its own.
static void print_expr_operand(std::string& out, const Operand& op) {
  bool wrap = op.kind == OperandKind::Name && op.offset != 0;
  if (wrap)
    out += '(';
  print_operand(out, op);
  if (wrap)
    out += ')';
}

// Section data: ptxas reads `label2-label1` there but no parentheses, so a top-level
// expression prints without its outer pair (inner ones stay: they cannot come from
// ptxas-valid text anyway, and they keep the re-parsed tree the same).
static void print_section_values(std::string& out, std::span<const Operand> values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      out += ", ";
    const Operand& v = values[i];
    bool binary = v.kind == OperandKind::Expr && v.expr->op != ExprOp::Neg && v.expr->op != ExprOp::Not &&
                  v.expr->op != ExprOp::LogNot && v.expr->op != ExprOp::Cond;
    if (!binary) {
      print_operand(out, v);
      continue;
    }
    // `label+4 - other` reads back the same (left to right, same precedence); with any
    // other operator, or on the right, label+4 keeps its parentheses.
    if (v.expr->op == ExprOp::Add || v.expr->op == ExprOp::Sub)
      print_operand(out, v.expr->lhs);
    else
      print_expr_operand(out, v.expr->lhs);
    out += ' ';
    out += expr_op_text(v.expr->op);
    out += ' ';
    print_expr_operand(out, v.expr->rhs);
  }
}

void print_operand(std::string& out, const Operand& op) {
  switch (op.kind) {
  case OperandKind::Name:
    if (op.negated)
      out += '!';
    out += op.name_view();
    if (op.component != Component::None) {
      out += '.';
      out += component_name(op.component);
    }
    append_offset(out, op.offset);
    return;
  case OperandKind::Int:
    if (op.unsigned_literal) {
      if (op.u > uint64_t(INT64_MAX)) {
        char buf[32];
        snprintf(buf, sizeof buf, "0x%" PRIX64, op.u);
        out += buf;
      } else {
        append_uint(out, op.u);
        out += 'U';
      }
    } else {
      append_int(out, op.i);
    }
    return;
  case OperandKind::F32: {
    char buf[16];
    snprintf(buf, sizeof buf, "0f%08" PRIX32, uint32_t(op.u));
    out += buf;
    return;
  }
  case OperandKind::F64: {
    char buf[24];
    snprintf(buf, sizeof buf, "0d%016" PRIX64, op.u);
    out += buf;
    return;
  }
  case OperandKind::Decimal: {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, op.d);
    std::string_view text(buf, size_t(r.ptr - buf));
    out += text;
    if (text.find_first_of(".e") == std::string_view::npos)
      out += ".0";
    return;
  }
  case OperandKind::Sink:
    out += '_';
    return;
  case OperandKind::Vector:
  case OperandKind::InitList:
    out += '{';
    print_operand_list(out, op.children());
    out += '}';
    return;
  case OperandKind::Address:
    out += '[';
    print_operand_list(out, op.children());
    out += ']';
    if (op.unified)
      out += ".unified";
    return;
  case OperandKind::List:
    out += '(';
    print_operand_list(out, op.children());
    out += ')';
    return;
  case OperandKind::Pair:
    print_operand(out, op.elems[0]);
    out += '|';
    print_operand(out, op.elems[1]);
    return;
  case OperandKind::NamedValue:
    print_operand(out, op.elems[0]);
    out += " = ";
    print_operand(out, op.elems[1]);
    return;
  case OperandKind::MaskedName: {
    char buf[32];
    snprintf(buf, sizeof buf, "0x%" PRIX64 "(", uint64_t(op.offset));
    out += buf;
    out += op.name_view();
    out += ')';
    return;
  }
  case OperandKind::GenericOf:
    out += "generic(";
    out += op.name_view();
    out += ')';
    append_offset(out, op.offset);
    return;
  case OperandKind::Expr: {
    const Expr& e = *op.expr;
    // A negated register (vmad's -a) must print bare: ptxas rejects (-%r1).
    if (e.op == ExprOp::Neg && e.lhs.kind == OperandKind::Name && e.lhs.offset == 0) {
      out += '-';
      print_operand(out, e.lhs);
      return;
    }
    out += '(';
    switch (e.op) {
    case ExprOp::Neg:
    case ExprOp::Not:
    case ExprOp::LogNot:
      out += expr_op_text(e.op);
      print_expr_operand(out, e.lhs);
      break;
    case ExprOp::Cond:
      print_expr_operand(out, e.lhs);
      out += " ? ";
      print_expr_operand(out, e.rhs);
      out += " : ";
      print_expr_operand(out, e.third);
      break;
    default:
      print_expr_operand(out, e.lhs);
      out += ' ';
      out += expr_op_text(e.op);
      out += ' ';
      print_expr_operand(out, e.rhs);
      break;
    }
    out += ')';
    return;
  }
  }
}

void print_instruction(std::string& out, const Instruction& ins) {
  if (!ins.guard.empty()) {
    out += ins.guard_negated ? "@!" : "@";
    out += ins.guard;
    out += ' ';
  }
  out += opcode_name(ins.opcode);
  for (Modifier m : ins.mods())
    append_mod(out, m);
  if (ins.num_operands) {
    out += ' ';
    print_operand_list(out, ins.ops());
  }
  out += ';';
}

void print_var_decl(std::string& out, const VarDecl& d) {
  if (d.linkage != Linkage::None) {
    out += linkage_name(d.linkage);
    out += ' ';
  }
  append_mod(out, d.space);
  out += ' ';
  print_attributes(out, d.attributes);
  if (d.align) {
    out += ".align ";
    append_uint(out, d.align);
    out += ' ';
  }
  if (d.vector != Modifier::None) {
    append_mod(out, d.vector);
    out += ' ';
  }
  append_mod(out, d.type);
  out += ' ';
  if (d.ptr) {
    out += ".ptr ";
    if (d.ptr_space != Modifier::None) {
      append_mod(out, d.ptr_space);
      out += ' ';
    }
    if (d.ptr_align) {
      out += ".align ";
      append_uint(out, d.ptr_align);
      out += ' ';
    }
  }
  out += d.name;
  if (d.has_range) {
    out += '<';
    append_uint(out, d.range);
    out += '>';
  }
  for (int64_t dim : d.dims) {
    out += '[';
    if (dim >= 0)
      append_int(out, dim);
    out += ']';
  }
  if (d.init) {
    out += " = ";
    print_operand(out, *d.init);
  }
}

std::string print_module(const Module& m) {
  std::string out;
  out.reserve(m.source.size() + m.source.size() / 8);
  if (m.version_major) {
    out += ".version ";
    append_uint(out, m.version_major);
    out += '.';
    append_uint(out, m.version_minor);
    out += '\n';
  }
  if (!m.target.empty()) {
    out += ".target ";
    for (size_t i = 0; i < m.target.size(); ++i) {
      if (i)
        out += ", ";
      out += m.target[i];
    }
    out += '\n';
  }
  if (m.address_size) {
    out += ".address_size ";
    append_uint(out, m.address_size);
    out += '\n';
  }
  out += '\n';
  for (const TopLevel& item : m.items) {
    switch (item.kind) {
    case DirectiveKind::Var:
      print_var_decl(out, *item.var);
      out += ";\n";
      break;
    case DirectiveKind::Function:
      print_function(out, *item.function);
      break;
    case DirectiveKind::File:
      out += ".file ";
      append_uint(out, item.file->index);
      out += " \"";
      out += item.file->path;
      out += '"';
      if (item.file->has_timestamp) {
        out += ", ";
        append_uint(out, item.file->timestamp);
        out += ", ";
        append_uint(out, item.file->size);
      }
      out += '\n';
      break;
    case DirectiveKind::Section:
      out += ".section ";
      out += item.section->name;
      out += "\n{\n";
      for (const SectionItem& s : item.section->items) {
        if (s.kind == SectionItem::Kind::Label) {
          out += s.label;
          out += ":\n";
          continue;
        }
        append_mod(out, s.type);
        out += ' ';
        print_section_values(out, s.values);
        out += '\n';
      }
      out += "}\n";
      break;
    case DirectiveKind::Pragma:
      out += ".pragma ";
      out += std::string_view(item.text.ptr, item.text.len);
      out += ";\n";
      break;
    case DirectiveKind::Alias:
      out += ".alias ";
      out += std::string_view(item.alias.a, item.alias.alen);
      out += ", ";
      out += std::string_view(item.alias.b, item.alias.blen);
      out += ";\n";
      break;
    case DirectiveKind::Loc:
      print_loc(out, *item.loc);
      out += '\n';
      break;
    }
  }
  return out;
}

} // namespace mimic::ptx
