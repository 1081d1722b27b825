#include "ptx/verifier.h"

#include <charconv>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace mimic::ptx {

namespace {

constexpr std::string_view kSpecialRegisters[] = {
    "%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid", "%nsmid", "%gridid",
    "%is_explicit_cluster", "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid",
    "%cluster_ctarank", "%cluster_nctarank", "%lanemask_eq", "%lanemask_le", "%lanemask_lt",
    "%lanemask_ge", "%lanemask_gt", "%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo",
    "%globaltimer_hi", "%reserved_smem_offset_begin", "%reserved_smem_offset_end",
    "%reserved_smem_offset_cap", "%total_smem_size", "%aggr_smem_size", "%dynamic_smem_size",
    "%current_graph_exec", "%bar_warp", "%bar0", "%ptx_version"};

// %envreg0..31, %pm0..7, %pm0_64..%pm7_64, %reserved_smem_offset_0/1
bool is_numbered_special(std::string_view name) {
  auto numbered = [&](std::string_view prefix, unsigned limit, std::string_view suffix = {}) {
    if (!name.starts_with(prefix) || !name.ends_with(suffix))
      return false;
    std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    unsigned v = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    return ec == std::errc() && p == digits.data() + digits.size() && !digits.empty() && v < limit;
  };
  return numbered("%envreg", 32) || numbered("%pm", 8) || numbered("%pm", 8, "_64") ||
         numbered("%reserved_smem_offset_", 2);
}

struct Arity {
  Opcode op;
  uint8_t min, max;
};

// Operand counts across all forms of an instruction (PTX ISA 9.0).
constexpr Arity kArity[] = {
    {Opcode::Add, 3, 3},    {Opcode::Sub, 3, 3},      {Opcode::Mul, 3, 3},     {Opcode::Div, 3, 3},
    {Opcode::Rem, 3, 3},    {Opcode::And, 3, 3},      {Opcode::Or, 3, 3},      {Opcode::Xor, 3, 3},
    {Opcode::Shl, 3, 3},    {Opcode::Shr, 3, 3},      {Opcode::Addc, 3, 3},    {Opcode::Subc, 3, 3},
    {Opcode::Mul24, 3, 3},  {Opcode::Copysign, 3, 3}, {Opcode::Min, 3, 4},     {Opcode::Max, 3, 4},
    {Opcode::Mad, 4, 4},    {Opcode::Fma, 4, 4},      {Opcode::Madc, 4, 4},    {Opcode::Mad24, 4, 4},
    {Opcode::Sad, 4, 4},    {Opcode::Bfe, 4, 4},      {Opcode::Bfi, 5, 5},     {Opcode::Selp, 4, 4},
    {Opcode::Slct, 4, 4},   {Opcode::Prmt, 3, 4},     {Opcode::Shf, 4, 4},     {Opcode::Lop3, 5, 6},
    {Opcode::Dp4a, 4, 4},   {Opcode::Dp2a, 4, 4},     {Opcode::Mov, 2, 2},     {Opcode::Cvt, 2, 4},
    {Opcode::Cvta, 2, 2},   {Opcode::Neg, 2, 2},      {Opcode::Abs, 2, 2},     {Opcode::Not, 2, 2},
    {Opcode::Cnot, 2, 2},   {Opcode::Popc, 2, 2},     {Opcode::Clz, 2, 2},     {Opcode::Brev, 2, 2},
    {Opcode::Bfind, 2, 2},  {Opcode::Rcp, 2, 2},      {Opcode::Sqrt, 2, 2},    {Opcode::Rsqrt, 2, 2},
    {Opcode::Sin, 2, 2},    {Opcode::Cos, 2, 2},      {Opcode::Lg2, 2, 2},     {Opcode::Ex2, 2, 2},
    {Opcode::Tanh, 2, 2},   {Opcode::Testp, 2, 2},    {Opcode::Setp, 3, 5},    {Opcode::Set, 3, 5},
    {Opcode::Ld, 2, 3},     {Opcode::Ldu, 2, 2},      {Opcode::St, 2, 3},      {Opcode::Atom, 3, 5},
    {Opcode::Red, 2, 3},    {Opcode::Bra, 1, 1},      {Opcode::Ret, 0, 0},     {Opcode::Exit, 0, 0},
    {Opcode::Trap, 0, 0},   {Opcode::Brkpt, 0, 0},    {Opcode::Call, 1, 4},    {Opcode::Brx, 2, 2},
    {Opcode::Shfl, 4, 5},   {Opcode::Vote, 2, 3},     {Opcode::Activemask, 1, 1}, {Opcode::Match, 3, 4},
    {Opcode::Redux, 3, 3},  {Opcode::Isspacep, 2, 2}, {Opcode::Fns, 4, 4},     {Opcode::Bmsk, 3, 3},
    {Opcode::Szext, 3, 3},  {Opcode::Nanosleep, 1, 1},
};

// Instructions that need a type among their modifiers.
bool needs_type(Opcode op) {
  switch (op) {
  case Opcode::Add: case Opcode::Sub: case Opcode::Mul: case Opcode::Mad: case Opcode::Div:
  case Opcode::Rem: case Opcode::Abs: case Opcode::Neg: case Opcode::Min: case Opcode::Max:
  case Opcode::And: case Opcode::Or: case Opcode::Xor: case Opcode::Not: case Opcode::Shl:
  case Opcode::Shr: case Opcode::Mov: case Opcode::Setp: case Opcode::Selp: case Opcode::Cvt:
  case Opcode::Ld: case Opcode::St: case Opcode::Atom: case Opcode::Red: case Opcode::Fma:
  case Opcode::Rcp: case Opcode::Sqrt: case Opcode::Rsqrt: case Opcode::Popc: case Opcode::Clz:
  case Opcode::Brev: case Opcode::Bfe: case Opcode::Bfi: case Opcode::Bfind: case Opcode::Cvta:
  case Opcode::Shfl: case Opcode::Prmt: case Opcode::Ldu:
    return true;
  default:
    return false;
  }
}

struct Symbol {
  Modifier space = Modifier::None;
  Modifier type = Modifier::None;
};

// A %r<N> declaration: names %r0 ... %r(N-1).
struct Range {
  uint32_t count;
  Modifier type;
};

class Scope {
public:
  explicit Scope(const Scope* parent) : parent_(parent) {}

  // Returns false when the name is already declared in this scope.
  bool declare(const VarDecl& d) {
    if (d.has_range)
      return ranges_.emplace(d.name, Range{d.range, d.type}).second;
    return names_.emplace(d.name, Symbol{d.space, d.type}).second;
  }

  const Symbol* find(std::string_view name, Symbol& scratch) const {
    for (const Scope* s = this; s; s = s->parent_) {
      if (auto it = s->names_.find(name); it != s->names_.end())
        return &it->second;
      if (s->ranges_.empty())
        continue;
      size_t digits = name.size();
      while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9')
        --digits;
      if (digits == name.size() || digits == 0)
        continue;
      if (auto it = s->ranges_.find(name.substr(0, digits)); it != s->ranges_.end()) {
        uint64_t index = 0;
        std::from_chars(name.data() + digits, name.data() + name.size(), index);
        if (index < it->second.count) {
          scratch = Symbol{Modifier::Reg, it->second.type};
          return &scratch;
        }
      }
    }
    return nullptr;
  }

private:
  const Scope* parent_;
  std::unordered_map<std::string_view, Symbol> names_;
  std::unordered_map<std::string_view, Range> ranges_;
};

class Verifier {
public:
  Verifier(const Module& m, std::vector<Diagnostic>& out) : m_(m), out_(out), module_scope_(nullptr) {}

  void run() {
    if (m_.version_major == 0)
      report({}, "the module has no .version directive");
    if (m_.target.empty())
      report({}, "the module has no .target directive");
    for (const TopLevel& item : m_.items) {
      if (item.kind == DirectiveKind::Var && !module_scope_.declare(*item.var))
        report(item.var->loc, "'" + std::string(item.var->name) + "' is declared twice at module level");
      if (item.kind == DirectiveKind::Function) {
        functions_.insert(item.function->name);
        module_names_.insert(item.function->name);
      }
      if (item.kind == DirectiveKind::Alias) {
        functions_.insert({item.alias.a, item.alias.alen});
      }
    }
    for (const TopLevel& item : m_.items)
      if (item.kind == DirectiveKind::Function && item.function->body)
        verify_function(*item.function);
  }

private:
  void report(SourceLoc loc, std::string message) {
    Diagnostic d;
    d.origin = m_.origin;
    d.line = loc.line;
    d.column = loc.column;
    d.function = function_;
    d.message = std::move(message);
    out_.push_back(std::move(d));
  }

  void collect_labels(const Block& b) {
    for (const Statement& s : b.statements) {
      std::string_view label;
      if (s.kind == StatementKind::Label)
        label = s.text_view();
      else if (s.kind == StatementKind::BranchTargets || s.kind == StatementKind::CallTargets ||
               s.kind == StatementKind::CallPrototype)
        label = s.labeled->label;
      else if (s.kind == StatementKind::Block)
        collect_labels(*s.block);
      if (!label.empty() && !labels_.insert(label).second)
        report(s.loc, "label '" + std::string(label) + "' is defined twice");
    }
  }

  void verify_function(const Function& f) {
    function_ = std::string(f.name);
    labels_.clear();
    collect_labels(*f.body);
    Scope params(&module_scope_);
    for (const VarDecl& p : f.returns)
      if (!p.name.empty() && p.name != "_" && !params.declare(p))
        report(p.loc, "parameter '" + std::string(p.name) + "' is declared twice");
    for (const VarDecl& p : f.params) {
      if (f.is_entry && p.space != Modifier::Param)
        report(p.loc, "kernel parameter '" + std::string(p.name) + "' must be in the .param space");
      if (!p.name.empty() && p.name != "_" && !params.declare(p))
        report(p.loc, "parameter '" + std::string(p.name) + "' is declared twice");
    }
    verify_block(*f.body, params);
    function_.clear();
  }

  void verify_block(const Block& b, const Scope& parent) {
    Scope scope(&parent);
    for (const Statement& s : b.statements)
      if (s.kind == StatementKind::Var && !scope.declare(*s.var))
        report(s.loc, "'" + std::string(s.var->name) + "' is declared twice in one block");
    for (const Statement& s : b.statements) {
      if (s.kind == StatementKind::Instruction)
        verify_instruction(*s.instruction, scope);
      else if (s.kind == StatementKind::Block)
        verify_block(*s.block, scope);
      else if (s.kind == StatementKind::BranchTargets)
        check_targets(s, labels_, "a label of this function");
      else if (s.kind == StatementKind::CallTargets)
        check_targets(s, functions_, "a function");
    }
  }

  void check_targets(const Statement& s, const std::unordered_set<std::string_view>& known, const char* what) {
    for (Name t : s.labeled->targets)
      if (!known.count(t))
        report(s.loc, "'" + std::string(t) + "' in the target list is not " + what);
  }

  bool name_known(std::string_view name, const Scope& scope, const Symbol** symbol = nullptr) {
    Symbol scratch;
    if (const Symbol* s = scope.find(name, scratch)) {
      if (symbol) {
        static thread_local Symbol copy;
        copy = *s;
        *symbol = &copy;
      }
      return true;
    }
    return module_names_.count(name) || labels_.count(name) || is_special_register(name) || name == "WARP_SZ";
  }

  void check_operand(const Instruction& ins, const Operand& op, const Scope& scope) {
    switch (op.kind) {
    case OperandKind::Name:
      if (!name_known(op.name_view(), scope))
        report(ins.loc, "'" + std::string(op.name_view()) + "' is not declared (used by '" +
                            std::string(opcode_name(ins.opcode)) + "')");
      return;
    case OperandKind::Vector:
    case OperandKind::Address:
    case OperandKind::Pair:
    case OperandKind::List:
      for (const Operand& e : op.children())
        check_operand(ins, e, scope);
      return;
    case OperandKind::Expr:
      check_operand(ins, op.expr->lhs, scope);
      check_operand(ins, op.expr->rhs, scope);
      check_operand(ins, op.expr->third, scope);
      return;
    default:
      return;
    }
  }

  void verify_instruction(const Instruction& ins, const Scope& scope) {
    if (!ins.guard.empty()) {
      const Symbol* sym = nullptr;
      if (!name_known(ins.guard, scope, &sym))
        report(ins.loc, "guard predicate '" + std::string(ins.guard) + "' is not declared");
      else if (sym && sym->type != Modifier::Pred)
        report(ins.loc, "guard '" + std::string(ins.guard) + "' is a ." + modifier_text(sym->type) +
                            " register, not a .pred");
    }
    for (const Arity& a : kArity) {
      if (a.op != ins.opcode)
        continue;
      if (ins.num_operands < a.min || ins.num_operands > a.max)
        report(ins.loc, "'" + std::string(opcode_name(ins.opcode)) + "' takes " +
                            (a.min == a.max ? std::to_string(a.min) : std::to_string(a.min) + " to " + std::to_string(a.max)) +
                            " operands, not " + std::to_string(ins.num_operands));
      break;
    }
    // st.bulk (a fill without a type) is the one memory instruction that takes none.
    if (needs_type(ins.opcode) && !ins.has(Modifier::Bulk)) {
      bool typed = false;
      for (Modifier m : ins.mods())
        typed |= is_type(m);
      if (!typed)
        report(ins.loc, "'" + std::string(opcode_name(ins.opcode)) + "' needs a type (.b32, .f32, .u64 ...)");
    }
    if (ins.opcode == Opcode::Bra && ins.num_operands == 1 && ins.operands[0].kind == OperandKind::Name &&
        !labels_.count(ins.operands[0].name_view()))
      report(ins.loc, "branch target '" + std::string(ins.operands[0].name_view()) + "' is not a label of this function");
    for (const Operand& op : ins.ops())
      check_operand(ins, op, scope);
  }

  const Module& m_;
  std::vector<Diagnostic>& out_;
  Scope module_scope_;
  std::unordered_set<std::string_view> module_names_;
  std::unordered_set<std::string_view> functions_;
  std::unordered_set<std::string_view> labels_;
  std::string function_;
};

} // namespace

bool is_special_register(std::string_view name) {
  if (name.size() < 2 || name[0] != '%')
    return false;
  for (std::string_view s : kSpecialRegisters)
    if (s == name)
      return true;
  return is_numbered_special(name);
}

std::vector<Diagnostic> verify_module(const Module& module) {
  std::vector<Diagnostic> out;
  Verifier(module, out).run();
  return out;
}

} // namespace mimic::ptx
