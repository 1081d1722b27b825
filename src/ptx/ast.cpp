#include "ptx/ast.h"

#include <array>

namespace mimic::ptx {

namespace {

constexpr std::string_view kOpcodeNames[] = {
    "<invalid>",
#define OPCODE(id, text) text,
#include "ptx/opcodes.def"
#undef OPCODE
};
constexpr size_t kOpcodeCount = sizeof(kOpcodeNames) / sizeof(kOpcodeNames[0]);
static_assert(kOpcodeCount == size_t(Opcode::Count_));

uint64_t hash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

struct OpcodeTable {
  static constexpr size_t kSlots = 512;
  std::array<uint16_t, kSlots> slots{};
  OpcodeTable() {
    for (size_t i = 1; i < kOpcodeCount; ++i) {
      size_t s = hash(kOpcodeNames[i]) & (kSlots - 1);
      while (slots[s])
        s = (s + 1) & (kSlots - 1);
      slots[s] = uint16_t(i);
    }
  }
};

} // namespace

std::string_view opcode_name(Opcode op) {
  size_t i = size_t(op);
  return i < kOpcodeCount ? kOpcodeNames[i] : "<invalid>";
}

std::optional<Opcode> lookup_opcode(std::string_view text) {
  static const OpcodeTable table;
  size_t s = hash(text) & (OpcodeTable::kSlots - 1);
  while (uint16_t id = table.slots[s]) {
    if (kOpcodeNames[id] == text)
      return Opcode(id);
    s = (s + 1) & (OpcodeTable::kSlots - 1);
  }
  return std::nullopt;
}

namespace {

constexpr uint16_t kLaneBit = 0x8000;   // lane list, not a named component
constexpr uint16_t kLaneHalves = 0x4000; // .hNN (halves) rather than .bNNNN (bytes)

std::string_view named_component(Component c) {
  switch (c) {
  case Component::None: return "";
  case Component::X: return "x";
  case Component::Y: return "y";
  case Component::Z: return "z";
  case Component::W: return "w";
  case Component::R: return "r";
  case Component::G: return "g";
  case Component::B: return "b";
  case Component::A: return "a";
  case Component::B0: return "b0";
  case Component::B1: return "b1";
  case Component::B2: return "b2";
  case Component::B3: return "b3";
  case Component::H0: return "h0";
  case Component::H1: return "h1";
  }
  return "";
}

} // namespace

bool is_lane_selector(Component c) { return uint16_t(c) & kLaneBit; }

std::string component_name(Component c) {
  uint16_t v = uint16_t(c);
  if (!(v & kLaneBit))
    return std::string(named_component(c));
  std::string out(1, v & kLaneHalves ? 'h' : 'b');
  unsigned count = ((v >> 12) & 3) + 1;
  for (unsigned i = 0; i < count; ++i)
    out += char('0' + ((v >> (3 * i)) & 7));
  return out;
}

Component parse_component(std::string_view s) {
  for (uint16_t i = 1; i <= uint16_t(Component::H1); ++i)
    if (named_component(Component(i)) == s)
      return Component(i);
  if (s.size() < 2 || s.size() > 5 || (s[0] != 'b' && s[0] != 'h'))
    return Component::None;
  bool halves = s[0] == 'h';
  char max_digit = halves ? '3' : '7';
  uint16_t v = kLaneBit | (halves ? kLaneHalves : 0) | uint16_t((s.size() - 2) << 12);
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > max_digit)
      return Component::None;
    v |= uint16_t((s[i] - '0') << (3 * (i - 1)));
  }
  return Component(v);
}

std::string_view expr_op_text(ExprOp op) {
  switch (op) {
  case ExprOp::Add: return "+";
  case ExprOp::Sub: return "-";
  case ExprOp::Mul: return "*";
  case ExprOp::Div: return "/";
  case ExprOp::Rem: return "%";
  case ExprOp::Shl: return "<<";
  case ExprOp::Shr: return ">>";
  case ExprOp::And: return "&";
  case ExprOp::Or: return "|";
  case ExprOp::Xor: return "^";
  case ExprOp::LogAnd: return "&&";
  case ExprOp::LogOr: return "||";
  case ExprOp::Eq: return "==";
  case ExprOp::Ne: return "!=";
  case ExprOp::Lt: return "<";
  case ExprOp::Le: return "<=";
  case ExprOp::Gt: return ">";
  case ExprOp::Ge: return ">=";
  case ExprOp::Neg: return "-";
  case ExprOp::Not: return "~";
  case ExprOp::LogNot: return "!";
  case ExprOp::Cond: return "?:";
  }
  return "?";
}

std::string_view linkage_name(Linkage l) {
  switch (l) {
  case Linkage::None: return "";
  case Linkage::Visible: return ".visible";
  case Linkage::Extern: return ".extern";
  case Linkage::Weak: return ".weak";
  case Linkage::Common: return ".common";
  }
  return "";
}

std::vector<const Function*> Module::functions() const {
  std::vector<const Function*> out;
  for (const TopLevel& item : items)
    if (item.kind == DirectiveKind::Function)
      out.push_back(item.function);
  return out;
}

} // namespace mimic::ptx
