// The PTX syntax tree. Nodes live in the module's arena and point into its source text;
// a Module owns both, so the tree is valid exactly as long as its Module.
//
// The tree keeps what the text says, normalised only where PTX defines an equivalence
// (constant expressions are folded, `-1` is one integer), so that printing a tree and
// parsing the result gives an identical tree (see compare.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/modifiers.h"
#include "ptx/opcodes.h"
#include "support/arena.h"

namespace mimic::ptx {

using Name = std::string_view;

struct SourceLoc {
  uint32_t line = 0;
  uint32_t column = 0;
};

// ---------------------------------------------------------------- operands

enum class OperandKind : uint8_t {
  Name,      // register, symbol, label or special register (`%tid` with component .x)
  Int,       // integer constant (value in `i`)
  F32,       // 0fXXXXXXXX (bits in `u`)
  F64,       // 0dXXXXXXXXXXXXXXXX (bits in `u`)
  Decimal,   // decimal floating literal such as 1.5 (value in `d`)
  Sink,      // `_`
  Vector,    // {a, b, c}: `elems`
  Address,   // [base+offset] or [a, b, {c}]: `elems` (first element may carry `offset`)
  Pair,      // a|b (setp, shfl destinations): `elems` of 2
  Expr,      // a constant expression that could not be folded: `expr`
  InitList,  // {a, {b, c}} in an initializer: `elems`
  MaskedName,// 0xFF(sym) in an initializer: mask in `offset`, name in `name`
  GenericOf, // generic(sym) in an initializer: name in `name`, offset in `offset`
  List,      // (a, b) parameter lists of call: `elems`
  NamedValue,// name = value in a sampler initializer: `elems` = {Name, value}
};

// Component selectors after a name: %tid.x, %r1.b0 (video instructions), %v.w.
// The SIMD video instructions also take lane lists: source selectors .h10 .b3210 .b7654
// and destination masks .h10 .b20 .b321. Those are encoded (see make_lane_selector)
// rather than listed; a single-lane selector that has a name above (.b0-.b3, .h0, .h1)
// always uses the name, so each spelling has exactly one value.
enum class Component : uint16_t { None, X, Y, Z, W, R, G, B, A, B0, B1, B2, B3, H0, H1 };
std::string component_name(Component c);
// Parses the text after the dot (`x`, `b0`, `h10`, `b3210`); None when it is no selector.
Component parse_component(std::string_view text);
// A lane list of 1-4 digits: halves (`h`, digits 0-3) or bytes (`b`, digits 0-7).
bool is_lane_selector(Component c);

struct Expr;

struct Operand {
  OperandKind kind = OperandKind::Int;
  bool negated : 1 = false;          // `!%p` predicate operand
  bool unsigned_literal : 1 = false; // integer written with a U suffix or beyond the int64 range
  bool unified : 1 = false;          // Address written [a].unified (ld on unified memory)
  Component component = Component::None;
  uint32_t count = 0;          // number of `elems`
  union {
    int64_t i;
    uint64_t u;
    double d;
    const Operand* elems;
    const Expr* expr;
    struct {
      const char* ptr;
      uint32_t len;
    } name;
  };
  int64_t offset = 0; // Name+offset in addresses and initializers

  Operand() : u(0) {}
  Name name_view() const { return {name.ptr, name.len}; }
  std::span<const Operand> children() const { return {elems, count}; }
  bool is_name() const { return kind == OperandKind::Name; }
};

enum class ExprOp : uint8_t {
  Add, Sub, Mul, Div, Rem, Shl, Shr, And, Or, Xor, LogAnd, LogOr, Eq, Ne, Lt, Le, Gt, Ge,
  Neg, Not, LogNot, Cond, // unary ops use `lhs` only; Cond uses all three
};
std::string_view expr_op_text(ExprOp op);

struct Expr {
  ExprOp op;
  Operand lhs, rhs, third;
};

// ---------------------------------------------------------------- instructions

struct Instruction {
  Opcode opcode = Opcode::Invalid;
  uint8_t num_modifiers = 0;
  uint8_t num_operands = 0;
  bool guard_negated = false;
  Name guard;                    // predicate register, empty when unguarded
  const Modifier* modifiers = nullptr;
  const Operand* operands = nullptr;
  SourceLoc loc;

  std::span<const Modifier> mods() const { return {modifiers, num_modifiers}; }
  std::span<const Operand> ops() const { return {operands, num_operands}; }
  bool has(Modifier m) const {
    for (Modifier x : mods())
      if (x == m)
        return true;
    return false;
  }
};

// ---------------------------------------------------------------- declarations

enum class Linkage : uint8_t { None, Visible, Extern, Weak, Common };
std::string_view linkage_name(Linkage l);

// `.attribute(.managed)`, `.attribute(.unified(hi, lo))`
struct VarAttribute {
  Modifier name;
  std::span<const uint64_t> args;
};

struct VarDecl {
  Linkage linkage = Linkage::None;
  Modifier space = Modifier::None;   // .reg .global .shared .const .local .param .tex ...
  Modifier vector = Modifier::None;  // .v2 .v4 .v8
  Modifier type = Modifier::None;    // .b32 .f16x2 .texref ...
  uint32_t align = 0;                // .align N (0 = absent)
  bool ptr = false;                  // kernel parameter attribute .ptr
  Modifier ptr_space = Modifier::None; // .ptr .global / .shared / ...
  uint32_t ptr_align = 0;            // .ptr ... .align N
  bool has_range = false;            // %r<N>
  uint32_t range = 0;
  Name name;                         // empty for an unnamed parameter in a prototype (`_`)
  std::span<const int64_t> dims;     // array dimensions; -1 for `[]`
  std::span<const VarAttribute> attributes;
  const Operand* init = nullptr;     // initializer, or null
  SourceLoc loc;
};

// ---------------------------------------------------------------- statements

struct Block;

enum class StatementKind : uint8_t {
  Instruction,
  Label,          // `name:`
  Var,            // .reg/.local/.shared/.param declaration in a body
  Block,          // nested `{ ... }`
  Pragma,         // .pragma "text";
  Loc,            // .loc file line column [, function_name X, inlined_at f l c]
  BranchTargets,  // label: .branchtargets a, b, c;
  CallTargets,    // label: .calltargets f, g;
  CallPrototype,  // label: .callprototype (ret) _ (params) [.noreturn];
};

struct Loc {
  uint32_t file = 0, line = 0, column = 0;
  bool has_function_name = false;
  Operand function_name; // Name (+offset), e.g. $L__info_string0
  bool has_inlined_at = false;
  uint32_t inlined_file = 0, inlined_line = 0, inlined_column = 0;
};

struct CallPrototype {
  std::span<const VarDecl> returns;
  std::span<const VarDecl> params;
  bool has_returns = false;
  bool noreturn = false;
};

// `label: .branchtargets a, b;`, `label: .calltargets f;`, `label: .callprototype ...;`
// (rare, so kept out of Statement to keep every statement small).
struct LabeledDirective {
  Name label;
  std::span<const Name> targets;            // BranchTargets / CallTargets
  const CallPrototype* prototype = nullptr; // CallPrototype
};

struct Statement {
  StatementKind kind;
  SourceLoc loc;
  union {
    const Instruction* instruction;
    const VarDecl* var;
    const Block* block;
    const Loc* loc_directive;
    const LabeledDirective* labeled; // BranchTargets / CallTargets / CallPrototype
    struct {
      const char* ptr;
      uint32_t len;
    } text; // Label name / Pragma text
  };

  Statement() : instruction(nullptr) {}
  Name text_view() const { return {text.ptr, text.len}; }
};
static_assert(sizeof(Statement) <= 32, "statements are the most numerous nodes: keep them small");

struct Block {
  std::span<const Statement> statements;
};

// Whether `pred(instruction)` holds for an instruction of `b` or of a block nested in it,
// in program order; stops at the first that does.
template <typename Pred> bool any_instruction(const Block& b, Pred&& pred) {
  for (const Statement& s : b.statements) {
    if (s.kind == StatementKind::Block ? any_instruction(*s.block, pred)
                                       : s.kind == StatementKind::Instruction && pred(*s.instruction))
      return true;
  }
  return false;
}

// ---------------------------------------------------------------- functions and modules

// Performance-tuning and other directives between a signature and its body:
// .maxntid 256, 1, 1 / .reqntid / .minnctapersm / .maxnreg / .noreturn / .pragma ...
struct FunctionDirective {
  Modifier name;
  std::span<const uint64_t> values;
  Name text; // .pragma text
};

struct Function {
  bool is_entry = false;
  Linkage linkage = Linkage::None;
  Name name;
  bool has_returns = false; // `.func (.reg .b32 r) f` even when the list is empty
  std::span<const VarDecl> returns;
  std::span<const VarDecl> params;
  bool has_params = false;  // `()` written
  std::span<const VarAttribute> attributes;
  std::span<const FunctionDirective> directives;
  const Block* body = nullptr; // null for a declaration
  SourceLoc loc;
};

// `.section .debug_info { ... }` items
struct SectionItem {
  enum class Kind : uint8_t { Label, Data } kind;
  Modifier type = Modifier::None; // .b8 .b16 .b32 .b64
  Name label;
  std::span<const Operand> values;
};

struct Section {
  Name name;
  std::span<const SectionItem> items;
};

enum class DirectiveKind : uint8_t { Var, Function, File, Section, Pragma, Alias, Loc };

struct FileDirective {
  uint32_t index = 0;
  Name path; // without quotes, as written (escapes kept)
  bool has_timestamp = false;
  uint64_t timestamp = 0, size = 0;
};

struct TopLevel {
  DirectiveKind kind;
  union {
    const VarDecl* var;
    const Function* function;
    const FileDirective* file;
    const Section* section;
    const Loc* loc;
    struct {
      const char* ptr;
      uint32_t len;
    } text; // Pragma
    struct {
      const char* a;
      uint32_t alen;
      const char* b;
      uint32_t blen;
    } alias;
  };
  TopLevel() : var(nullptr) {}
};

struct Module {
  std::string source;       // the text the tree points into
  std::string origin;       // file name or description, for messages
  Arena arena;
  uint32_t version_major = 0, version_minor = 0;
  std::vector<Name> target; // sm_120, texmode_independent, debug, ...
  uint32_t address_size = 0; // 0 when the directive is absent (means 32 before PTX 2.3... we keep 0)
  std::vector<TopLevel> items;

  // Helpers for tools.
  std::vector<const Function*> functions() const;
};

} // namespace mimic::ptx
