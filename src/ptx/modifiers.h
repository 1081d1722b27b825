// Dotted keywords of PTX: directives (.entry), state spaces (.shared::cta), types (.f16x2)
// and instruction modifiers (.rn, .L2::128B). Matrix shapes such as .m16n8k16 are encoded
// numerically (bit 15 set) instead of being listed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mimic::ptx {

enum class Modifier : uint16_t {
  None,
#define MODIFIER(id, text) id,
#include "ptx/modifiers.def"
#undef MODIFIER
  Count_
};

struct Shape {
  uint32_t m = 0, n = 0, k = 0; // k == 0 when the shape has no k (.m8n8)
};

// `text` is without the leading dot. Returns nullopt for unknown words.
std::optional<Modifier> lookup_modifier(std::string_view text);
// Text without the leading dot.
std::string modifier_text(Modifier m);

bool is_shape(Modifier m);
Shape shape_of(Modifier m);
std::optional<Modifier> make_shape(Shape s);

// Classification used by the parser and verifier.
bool is_type(Modifier m);        // .b32, .f16x2, .pred, ...
bool is_state_space(Modifier m); // .reg, .global, .shared::cta, ...
bool is_vector(Modifier m);      // .v2 .v4 .v8 .v16
// Size in bits of a scalar type (0 for non-types; 32 for packed pairs like .f16x2).
unsigned type_bits(Modifier m);

} // namespace mimic::ptx
