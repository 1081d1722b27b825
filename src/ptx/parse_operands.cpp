// Instructions, operands, constant expressions and initializers.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "ptx/parser_impl.h"

namespace mimic::ptx::detail {

namespace {

constexpr unsigned kMaxOperands = 255;
constexpr unsigned kMaxModifiers = 255;

struct BinaryOpInfo {
  ExprOp op;
  int precedence;
};

// C precedence. In an instruction operand that starts with a name, '|' forms a pair (a|b).
bool binary_op(const Token& t, BinaryOpInfo& out) {
  if (t.kind != TokenKind::Punct)
    return false;
  std::string_view s = t.text;
  if (s == "*") out = {ExprOp::Mul, 10};
  else if (s == "/") out = {ExprOp::Div, 10};
  else if (s == "%") out = {ExprOp::Rem, 10};
  else if (s == "+") out = {ExprOp::Add, 9};
  else if (s == "-") out = {ExprOp::Sub, 9};
  else if (s == "<<") out = {ExprOp::Shl, 8};
  else if (s == ">>") out = {ExprOp::Shr, 8};
  else if (s == "<") out = {ExprOp::Lt, 7};
  else if (s == ">") out = {ExprOp::Gt, 7};
  else if (s == "<=") out = {ExprOp::Le, 7};
  else if (s == ">=") out = {ExprOp::Ge, 7};
  else if (s == "==") out = {ExprOp::Eq, 6};
  else if (s == "!=") out = {ExprOp::Ne, 6};
  else if (s == "&") out = {ExprOp::And, 5};
  else if (s == "^") out = {ExprOp::Xor, 4};
  else if (s == "|") out = {ExprOp::Or, 3};
  else if (s == "&&") out = {ExprOp::LogAnd, 2};
  else if (s == "||") out = {ExprOp::LogOr, 1};
  else return false;
  return true;
}

} // namespace

Operand Parser::make_name(Name n) {
  Operand o;
  o.kind = OperandKind::Name;
  o.name = {n.data(), uint32_t(n.size())};
  return o;
}

Operand Parser::make_integer(const Token& t) {
  std::string_view s = t.text;
  bool u_suffix = !s.empty() && s.back() == 'U';
  if (u_suffix)
    s.remove_suffix(1);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    base = 16, s.remove_prefix(2);
  else if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
    base = 2, s.remove_prefix(2);
  else if (s.size() > 1 && s[0] == '0')
    base = 8, s.remove_prefix(1);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec == std::errc::result_out_of_range)
    fail(t, "integer constant " + quote(t.text) + " does not fit in 64 bits");
  if (ec != std::errc() || p != s.data() + s.size())
    fail(t, "malformed integer constant " + quote(t.text));
  Operand o;
  o.kind = OperandKind::Int;
  o.u = v;
  o.unsigned_literal = u_suffix || v > uint64_t(INT64_MAX);
  return o;
}

Operand Parser::make_float(const Token& t) {
  std::string_view s = t.text;
  Operand o;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')) {
    bool f32 = s[1] == 'f' || s[1] == 'F';
    std::string_view digits = s.substr(2);
    if (digits.size() != (f32 ? 8u : 16u))
      fail(t, quote(t.text) + ": a " + (f32 ? "0f constant takes exactly 8" : "0d constant takes exactly 16") +
                  " hexadecimal digits");
    uint64_t bits = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), bits, 16);
    if (ec != std::errc() || p != digits.data() + digits.size())
      fail(t, "malformed floating-point constant " + quote(t.text));
    o.kind = f32 ? OperandKind::F32 : OperandKind::F64;
    o.u = bits;
    return o;
  }
  double d = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec == std::errc::result_out_of_range)
    fail(t, "floating-point constant " + quote(t.text) + " is out of the double range");
  if (ec != std::errc() || p != s.data() + s.size())
    fail(t, "malformed floating-point constant " + quote(t.text));
  o.kind = OperandKind::Decimal;
  o.d = d;
  return o;
}

static bool is_int(const Operand& o) { return o.kind == OperandKind::Int; }

static unsigned expr_depth(const Operand& o) {
  if (o.kind != OperandKind::Expr)
    return 0;
  const Expr& e = *o.expr;
  return 1 + std::max({expr_depth(e.lhs), expr_depth(e.rhs), expr_depth(e.third)});
}

// The printer gives each expression node its own parentheses (and a symbol+offset leaf
// too), so a tree of depth d reads back with up to 2d+2 levels of nesting from where the
// expression starts, however few the source had (a-b-c-d, ---x). Checked where a whole
// expression ends, from the same depth as when the printed text is parsed.
void Parser::check_printed_depth(const Operand& e, const Token& at) {
  if (e.kind == OperandKind::Expr && depth_ + 2 * expr_depth(e) + 2 > options_.max_nesting)
    fail(at, "expression nested deeper than " + std::to_string(options_.max_nesting) +
                 " levels once printed");
}

Operand Parser::fold_unary(ExprOp op, Operand v, const Token& at) {
  if (is_int(v)) {
    Operand r = v;
    switch (op) {
    case ExprOp::Neg:
      r.u = 0 - v.u;
      r.unsigned_literal = false;
      return r;
    case ExprOp::Not:
      r.u = ~v.u;
      return r;
    case ExprOp::LogNot:
      r.u = v.u == 0;
      r.unsigned_literal = false;
      return r;
    default:
      break;
    }
  }
  if (op == ExprOp::Neg && (v.kind == OperandKind::F32 || v.kind == OperandKind::F64)) {
    v.u ^= v.kind == OperandKind::F32 ? 0x80000000ull : 0x8000000000000000ull;
    return v;
  }
  if (op == ExprOp::Neg && v.kind == OperandKind::Decimal) {
    v.d = -v.d;
    return v;
  }
  if (v.kind != OperandKind::Int && v.kind != OperandKind::Name && v.kind != OperandKind::Expr)
    fail(at, "operator " + std::string(expr_op_text(op)) + " cannot apply to this operand");
  auto* e = arena_.make<Expr>();
  e->op = op;
  e->lhs = v;
  Operand r;
  r.kind = OperandKind::Expr;
  r.expr = e;
  return r;
}

Operand Parser::fold_binary(ExprOp op, Operand a, Operand b, const Token& at) {
  if (is_int(a) && is_int(b)) {
    bool uns = a.unsigned_literal || b.unsigned_literal;
    Operand r;
    r.kind = OperandKind::Int;
    r.unsigned_literal = uns;
    uint64_t x = a.u, y = b.u;
    int64_t sx = a.i, sy = b.i;
    switch (op) {
    case ExprOp::Add: r.u = x + y; break;
    case ExprOp::Sub: r.u = x - y; break;
    case ExprOp::Mul: r.u = x * y; break;
    case ExprOp::Div:
    case ExprOp::Rem:
      if (y == 0)
        fail(at, "division by zero in a constant expression");
      if (uns)
        r.u = op == ExprOp::Div ? x / y : x % y;
      else if (sx == INT64_MIN && sy == -1)
        r.i = op == ExprOp::Div ? INT64_MIN : 0;
      else
        r.i = op == ExprOp::Div ? sx / sy : sx % sy;
      break;
    case ExprOp::Shl: r.u = y >= 64 ? 0 : x << y; break;
    case ExprOp::Shr:
      if (uns)
        r.u = y >= 64 ? 0 : x >> y;
      else
        r.i = y >= 64 ? (sx < 0 ? -1 : 0) : sx >> y;
      break;
    case ExprOp::And: r.u = x & y; break;
    case ExprOp::Or: r.u = x | y; break;
    case ExprOp::Xor: r.u = x ^ y; break;
    case ExprOp::LogAnd: r.u = x && y; r.unsigned_literal = false; break;
    case ExprOp::LogOr: r.u = x || y; r.unsigned_literal = false; break;
    case ExprOp::Eq: r.u = x == y; r.unsigned_literal = false; break;
    case ExprOp::Ne: r.u = x != y; r.unsigned_literal = false; break;
    case ExprOp::Lt: r.u = uns ? x < y : sx < sy; r.unsigned_literal = false; break;
    case ExprOp::Le: r.u = uns ? x <= y : sx <= sy; r.unsigned_literal = false; break;
    case ExprOp::Gt: r.u = uns ? x > y : sx > sy; r.unsigned_literal = false; break;
    case ExprOp::Ge: r.u = uns ? x >= y : sx >= sy; r.unsigned_literal = false; break;
    default:
      fail(at, "operator not allowed here");
    }
    // A result that looks negative only because of unsigned wrap-around stays unsigned.
    if (r.unsigned_literal && r.u <= uint64_t(INT64_MAX))
      r.unsigned_literal = false;
    return r;
  }
  // symbol +/- constant (in addresses and initializers)
  if ((a.kind == OperandKind::Name || a.kind == OperandKind::GenericOf) && is_int(b) &&
      (op == ExprOp::Add || op == ExprOp::Sub) && a.component == Component::None) {
    a.offset = op == ExprOp::Add ? int64_t(uint64_t(a.offset) + b.u) : int64_t(uint64_t(a.offset) - b.u);
    return a;
  }
  if (is_int(a) && b.kind == OperandKind::Name && op == ExprOp::Add && b.component == Component::None) {
    b.offset = int64_t(uint64_t(b.offset) + a.u);
    return b;
  }
  auto ok = [](const Operand& o) {
    return o.kind == OperandKind::Int || o.kind == OperandKind::Name || o.kind == OperandKind::Expr;
  };
  if (!ok(a) || !ok(b))
    fail(at, "operator " + std::string(expr_op_text(op)) + " needs integer or symbol operands");
  auto* e = arena_.make<Expr>();
  e->op = op;
  e->lhs = a;
  e->rhs = b;
  Operand r;
  r.kind = OperandKind::Expr;
  r.expr = e;
  return r;
}

Operand Parser::parse_primary() {
  Token t = lex_.peek();
  switch (t.kind) {
  case TokenKind::Integer:
    lex_.next();
    return make_integer(t);
  case TokenKind::Float:
    lex_.next();
    return make_float(t);
  case TokenKind::Identifier: {
    lex_.next();
    if (t.text == "_") {
      Operand o;
      o.kind = OperandKind::Sink;
      return o;
    }
    Operand o = make_name(t.text);
    const Token& next = lex_.peek();
    if (next.kind == TokenKind::DotWord) {
      // Lane lists (.b32 reads as bytes 3 and 2) only in instruction operands: in a
      // section, `.b32 label` may be followed by the next line's `.b32`.
      Component c = parse_component(next.text.substr(1));
      if (c != Component::None && (in_operands_ || !is_lane_selector(c))) {
        lex_.next();
        o.component = c;
      }
    }
    return o;
  }
  case TokenKind::Punct:
    if (t.is_punct('(')) {
      DepthGuard guard(*this, t);
      lex_.next();
      Operand v = parse_expression(1);
      expect_punct(')', "to close the parenthesis");
      return v;
    }
    [[fallthrough]];
  default:
    fail_expected("an operand");
  }
}

Operand Parser::parse_unary() {
  Token t = lex_.peek();
  if (t.kind == TokenKind::Punct && t.text.size() == 1) {
    ExprOp op;
    switch (t.text[0]) {
    case '-': op = ExprOp::Neg; break;
    case '~': op = ExprOp::Not; break;
    case '!': op = ExprOp::LogNot; break;
    case '+':
      lex_.next();
      return parse_unary();
    default:
      return parse_primary();
    }
    DepthGuard guard(*this, t);
    lex_.next();
    return fold_unary(op, parse_unary(), t);
  }
  return parse_primary();
}

// Precedence climbing. Without allow_bitor a '|' ends the expression, so that an
// instruction operand can be the first half of an a|b pair.
Operand Parser::parse_expression(int min_precedence, bool allow_bitor) {
  Operand lhs = parse_unary();
  for (;;) {
    BinaryOpInfo info;
    Token t = lex_.peek();
    if (t.is_punct('?') && min_precedence <= 1) {
      DepthGuard guard(*this, t);
      lex_.next();
      Operand a = parse_expression(1, allow_bitor);
      expect_punct(':', "in a conditional expression");
      Operand b = parse_expression(1, allow_bitor);
      if (is_int(lhs) && is_int(a) && is_int(b)) {
        lhs = lhs.u ? a : b;
        continue;
      }
      auto* e = arena_.make<Expr>();
      e->op = ExprOp::Cond;
      e->lhs = lhs;
      e->rhs = a;
      e->third = b;
      lhs = Operand();
      lhs.kind = OperandKind::Expr;
      lhs.expr = e;
      continue;
    }
    if (!binary_op(t, info) || info.precedence < min_precedence || (info.op == ExprOp::Or && !allow_bitor))
      return lhs;
    DepthGuard guard(*this, t);
    lex_.next();
    Operand rhs = parse_expression(info.precedence + 1, allow_bitor);
    lhs = fold_binary(info.op, lhs, rhs, t);
  }
}

// `first|second`, after the '|' (setp, shfl, tex ... destinations).
Operand Parser::parse_pair_tail(Operand first, Opcode opcode) {
  Token bar = lex_.next();
  Operand second = parse_operand(opcode);
  if (second.kind == OperandKind::Pair)
    fail(bar, "an operand pair a|b takes two operands");
  // Halves are registers or '_' (setp, shfl, tex destinations); an expression there would
  // print in parentheses and read back as a bitwise or.
  if (first.kind == OperandKind::Expr || second.kind == OperandKind::Expr)
    fail(bar, "an operand pair a|b takes registers or '_', not expressions");
  Operand pair[2] = {first, second};
  auto stored = arena_.copy(std::span<const Operand>(pair, 2));
  Operand o;
  o.kind = OperandKind::Pair;
  o.elems = stored.data();
  o.count = 2;
  return o;
}

Operand Parser::parse_operand(Opcode opcode) {
  Token t = lex_.peek();
  DepthGuard guard(*this, t);
  if (t.is_punct('{')) {
    lex_.next();
    std::vector<Operand> elems;
    if (!lex_.peek().is_punct('}')) {
      do
        elems.push_back(parse_operand(opcode));
      while (accept_punct(','));
    }
    expect_punct('}', "to close the vector operand");
    Operand o;
    o.kind = OperandKind::Vector;
    auto stored = store(elems);
    o.elems = stored.data();
    o.count = uint32_t(stored.size());
    if (lex_.peek().is_punct('|')) // tex/tld4 {d0, d1, d2, d3}|p
      return parse_pair_tail(o, opcode);
    return o;
  }
  if (t.is_punct('[')) {
    lex_.next();
    std::vector<Operand> elems;
    do
      elems.push_back(parse_operand(opcode));
    while (accept_punct(','));
    expect_punct(']', "to close the address operand");
    Operand o;
    o.kind = OperandKind::Address;
    auto stored = store(elems);
    o.elems = stored.data();
    o.count = uint32_t(stored.size());
    if (lex_.peek().kind == TokenKind::DotWord && lex_.peek().text == ".unified") { // ld ... [a].unified
      lex_.next();
      o.unified = true;
    }
    return o;
  }
  if (t.is_punct('(') && opcode == Opcode::Call) {
    lex_.next();
    std::vector<Operand> elems;
    if (!lex_.peek().is_punct(')')) {
      do
        elems.push_back(parse_operand(opcode));
      while (accept_punct(','));
    }
    expect_punct(')', "to close the call's parameter list");
    Operand o;
    o.kind = OperandKind::List;
    auto stored = store(elems);
    o.elems = stored.data();
    o.count = uint32_t(stored.size());
    return o;
  }
  Operand first;
  if (t.is_punct('!') && lex_.peek2().kind == TokenKind::Identifier) {
    lex_.next();
    first = parse_primary();
    if (first.kind != OperandKind::Name)
      fail(t, "'!' negates a predicate register, not " + quote(t.text));
    first.negated = true;
  } else {
    // An operand that starts with a name may be the first half of a pair (%p|%q); a
    // constant expression (1 | 2) may not, so there '|' is the bitwise or.
    first = parse_expression(1, t.kind != TokenKind::Identifier);
    check_printed_depth(first, t);
  }
  // In a call, a parenthesized operand is a parameter list: an expression would print as
  // one, and nothing there is an expression anyway (constants fold to integers).
  if (opcode == Opcode::Call && first.kind == OperandKind::Expr)
    fail(t, "a call's operands are names, constants and parameter lists, not expressions");
  if (lex_.peek().is_punct('|'))
    return parse_pair_tail(first, opcode);
  return first;
}

const Instruction* Parser::parse_instruction(Token opcode_token, Name guard, bool guard_negated,
                                             SourceLoc loc) {
  auto opcode = lookup_opcode(opcode_token.text);
  if (!opcode)
    fail(opcode_token, "unknown instruction " + quote(opcode_token.text));
  Modifier mods[kMaxModifiers];
  unsigned num_mods = 0;
  while (lex_.peek().kind == TokenKind::DotWord) {
    Token m = lex_.next();
    auto mod = lookup_modifier(m.text.substr(1));
    if (!mod)
      fail(m, "unknown modifier " + quote(m.text) + " on '" + std::string(opcode_token.text) + "'");
    if (num_mods == kMaxModifiers)
      fail(m, "too many modifiers");
    mods[num_mods++] = *mod;
  }
  std::vector<Operand> operands;
  struct OperandScope { // lane selectors allowed; reset on errors too
    bool& flag;
    explicit OperandScope(bool& f) : flag(f) { flag = true; }
    ~OperandScope() { flag = false; }
  } scope(in_operands_);
  if (!lex_.peek().is_punct(';')) {
    do {
      if (operands.size() == kMaxOperands)
        fail(lex_.peek(), "too many operands");
      operands.push_back(parse_operand(*opcode));
    } while (accept_punct(','));
  }
  if (!lex_.peek().is_punct(';')) {
    std::string what = operands.empty() ? "after '" + std::string(opcode_token.text) + "' and its modifiers"
                                        : "after an operand of '" + std::string(opcode_token.text) + "'";
    if (lex_.newline_before_current() && lex_.peek().kind != TokenKind::End)
      fail(lex_.previous_end(), "expected ';' at the end of the line " + what + " (the next line starts with " +
                                    describe(lex_.peek()) + ")");
    fail_expected("',' or ';' " + what);
  }
  lex_.next();
  auto* ins = arena_.make<Instruction>();
  ins->opcode = *opcode;
  ins->guard = guard;
  ins->guard_negated = guard_negated;
  ins->loc = loc;
  ins->num_modifiers = uint8_t(num_mods);
  ins->modifiers = arena_.copy(std::span<const Modifier>(mods, num_mods)).data();
  ins->num_operands = uint8_t(operands.size());
  ins->operands = store(operands).data();
  return ins;
}

Operand Parser::parse_initializer() {
  Token t = lex_.peek();
  DepthGuard guard(*this, t);
  if (t.is_punct('{')) {
    lex_.next();
    std::vector<Operand> elems;
    if (!lex_.peek().is_punct('}')) {
      do
        elems.push_back(parse_initializer());
      while (accept_punct(','));
    }
    expect_punct('}', "to close the initializer list");
    Operand o;
    o.kind = OperandKind::InitList;
    auto stored = store(elems);
    o.elems = stored.data();
    o.count = uint32_t(stored.size());
    return o;
  }
  if (t.kind == TokenKind::Identifier && t.text == "generic" && lex_.peek2().is_punct('(')) {
    lex_.next();
    lex_.next();
    Token name = expect_identifier("inside generic()");
    expect_punct(')', "to close generic()");
    Operand o = make_name(name.text);
    o.kind = OperandKind::GenericOf;
    // generic(sym)+offset
    while (lex_.peek().is_punct('+') || lex_.peek().is_punct('-')) {
      Token op = lex_.next();
      Operand n = parse_unary();
      o = fold_binary(op.text[0] == '+' ? ExprOp::Add : ExprOp::Sub, o, n, op);
    }
    return o;
  }
  if (t.kind == TokenKind::Integer && lex_.peek2().is_punct('(')) {
    lex_.next();
    Operand mask = make_integer(t);
    lex_.next();
    Token name = expect_identifier("inside a mask()");
    expect_punct(')', "to close the mask");
    Operand o = make_name(name.text);
    o.kind = OperandKind::MaskedName;
    o.offset = mask.i;
    return o;
  }
  if (t.kind == TokenKind::Identifier && lex_.peek2().is_punct('=')) {
    lex_.next();
    lex_.next();
    Operand pair[2] = {make_name(t.text), parse_initializer()};
    auto stored = arena_.copy(std::span<const Operand>(pair, 2));
    Operand o;
    o.kind = OperandKind::NamedValue;
    o.elems = stored.data();
    o.count = 2;
    return o;
  }
  Operand v = parse_expression(1);
  check_printed_depth(v, t);
  return v;
}

Operand Parser::parse_section_value() {
  Token t = lex_.peek();
  if (t.kind == TokenKind::DotWord) { // another section: .b32 .debug_abbrev
    lex_.next();
    Operand o = make_name(t.text);
    while (lex_.peek().is_punct('+') || lex_.peek().is_punct('-')) {
      Token op = lex_.next();
      Operand n = parse_unary();
      o = fold_binary(op.text[0] == '+' ? ExprOp::Add : ExprOp::Sub, o, n, op);
    }
    check_printed_depth(o, t);
    return o;
  }
  Operand v = parse_expression(1);
  check_printed_depth(v, t);
  return v;
}

} // namespace mimic::ptx::detail
