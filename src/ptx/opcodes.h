#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace mimic::ptx {

enum class Opcode : uint16_t {
  Invalid,
#define OPCODE(id, text) id,
#include "ptx/opcodes.def"
#undef OPCODE
  Count_
};

std::string_view opcode_name(Opcode op);
std::optional<Opcode> lookup_opcode(std::string_view text);

} // namespace mimic::ptx
