#include "ptx/modifiers.h"

#include <array>
#include <charconv>
#include <cstring>

namespace mimic::ptx {

namespace {

constexpr std::string_view kTexts[] = {
    "",
#define MODIFIER(id, text) text,
#include "ptx/modifiers.def"
#undef MODIFIER
};
constexpr size_t kCount = sizeof(kTexts) / sizeof(kTexts[0]);
static_assert(kCount == size_t(Modifier::Count_));

constexpr uint16_t kShapeBit = 0x8000;
constexpr uint32_t kShapeM[] = {0, 8, 16, 32, 64, 128, 256};
constexpr uint32_t kShapeK[] = {0, 1, 2, 4, 8, 16, 32, 64, 128, 256};

uint64_t hash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

// Open addressing, built once on first use (no work at load time).
struct Table {
  static constexpr size_t kSlots = 2048;
  std::array<uint16_t, kSlots> slots{};
  Table() {
    static_assert(kSlots > 2 * kCount);
    for (size_t i = 1; i < kCount; ++i) {
      size_t s = hash(kTexts[i]) & (kSlots - 1);
      while (slots[s])
        s = (s + 1) & (kSlots - 1);
      slots[s] = uint16_t(i);
    }
  }
  std::optional<Modifier> find(std::string_view text) const {
    size_t s = hash(text) & (kSlots - 1);
    while (uint16_t id = slots[s]) {
      if (kTexts[id] == text)
        return Modifier(id);
      s = (s + 1) & (kSlots - 1);
    }
    return std::nullopt;
  }
};

const Table& table() {
  static const Table t;
  return t;
}

bool parse_uint(std::string_view& s, uint32_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || p == s.data())
    return false;
  s.remove_prefix(size_t(p - s.data()));
  return true;
}

template <size_t N> int index_of(const uint32_t (&arr)[N], uint32_t v) {
  for (size_t i = 1; i < N; ++i)
    if (arr[i] == v)
      return int(i);
  return -1;
}

// .mMnN[kK]
std::optional<Modifier> parse_shape(std::string_view s) {
  Shape shape;
  if (s.size() < 4 || s[0] != 'm')
    return std::nullopt;
  s.remove_prefix(1);
  if (!parse_uint(s, shape.m) || s.empty() || s[0] != 'n')
    return std::nullopt;
  s.remove_prefix(1);
  if (!parse_uint(s, shape.n))
    return std::nullopt;
  if (!s.empty()) {
    if (s[0] != 'k')
      return std::nullopt;
    s.remove_prefix(1);
    if (!parse_uint(s, shape.k) || !s.empty() || shape.k == 0)
      return std::nullopt;
  }
  return make_shape(shape);
}

} // namespace

std::optional<Modifier> make_shape(Shape s) {
  int mi = index_of(kShapeM, s.m);
  int ki = s.k == 0 ? 0 : index_of(kShapeK, s.k);
  if (mi < 0 || ki < 0 || s.n == 0 || s.n % 8 != 0 || s.n / 8 > 127)
    return std::nullopt;
  return Modifier(kShapeBit | uint16_t(mi) << 11 | uint16_t(s.n / 8) << 4 | uint16_t(ki));
}

bool is_shape(Modifier m) { return uint16_t(m) & kShapeBit; }

Shape shape_of(Modifier m) {
  uint16_t v = uint16_t(m);
  if (!(v & kShapeBit))
    return {};
  return Shape{kShapeM[(v >> 11) & 7], uint32_t((v >> 4) & 127) * 8, kShapeK[v & 15]};
}

std::optional<Modifier> lookup_modifier(std::string_view text) {
  if (auto m = table().find(text))
    return m;
  if (!text.empty() && text[0] == 'm')
    return parse_shape(text);
  return std::nullopt;
}

std::string modifier_text(Modifier m) {
  if (is_shape(m)) {
    Shape s = shape_of(m);
    std::string out = "m" + std::to_string(s.m) + "n" + std::to_string(s.n);
    if (s.k)
      out += "k" + std::to_string(s.k);
    return out;
  }
  size_t i = size_t(m);
  return i < kCount ? std::string(kTexts[i]) : "<invalid modifier " + std::to_string(i) + ">";
}

bool is_type(Modifier m) { return type_bits(m) != 0; }

unsigned type_bits(Modifier m) {
  switch (m) {
  case Modifier::Pred:
  case Modifier::B1:
    return 1;
  case Modifier::B4:
  case Modifier::U4:
  case Modifier::S4:
  case Modifier::E2m1:
    return 4;
  case Modifier::B6:
  case Modifier::E2m3:
  case Modifier::E3m2:
    return 6;
  case Modifier::B8:
  case Modifier::U8:
  case Modifier::S8:
  case Modifier::E4m3:
  case Modifier::E5m2:
  case Modifier::Ue8m0:
  case Modifier::Ue4m3:
  case Modifier::E2m1x2:
    return 8;
  case Modifier::B16:
  case Modifier::U16:
  case Modifier::S16:
  case Modifier::F16:
  case Modifier::Bf16:
  case Modifier::E4m3x2:
  case Modifier::E5m2x2:
  case Modifier::E2m3x2:
  case Modifier::E3m2x2:
  case Modifier::Ue8m0x2:
  case Modifier::S2f6x2:
  case Modifier::E2m1x4:
    return 16;
  case Modifier::B32:
  case Modifier::U32:
  case Modifier::S32:
  case Modifier::F32:
  case Modifier::Tf32:
  case Modifier::F16x2:
  case Modifier::Bf16x2:
  case Modifier::U16x2:
  case Modifier::S16x2:
  case Modifier::E4m3x4:
  case Modifier::E5m2x4:
  case Modifier::E2m3x4:
  case Modifier::E3m2x4:
    return 32;
  case Modifier::B64:
  case Modifier::U64:
  case Modifier::S64:
  case Modifier::F64:
  case Modifier::F32x2:
  case Modifier::F16x4:
  case Modifier::Bf16x4:
  case Modifier::Texref:
  case Modifier::Samplerref:
  case Modifier::Surfref:
    return 64;
  case Modifier::B128:
  case Modifier::B8x16:
  case Modifier::B6x16P32:
  case Modifier::B4x16P64:
    return 128;
  case Modifier::B1024:
    return 1024;
  default:
    return 0;
  }
}

bool is_state_space(Modifier m) {
  switch (m) {
  case Modifier::Reg:
  case Modifier::Sreg:
  case Modifier::Const:
  case Modifier::Global:
  case Modifier::Local:
  case Modifier::Param:
  case Modifier::Shared:
  case Modifier::Tex:
  case Modifier::SharedCta:
  case Modifier::SharedCluster:
  case Modifier::ParamEntry:
  case Modifier::ParamFunc:
    return true;
  default:
    return false;
  }
}

bool is_vector(Modifier m) {
  return m == Modifier::V2 || m == Modifier::V4 || m == Modifier::V8 || m == Modifier::V16;
}

} // namespace mimic::ptx
