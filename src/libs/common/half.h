// IEEE binary16 and bfloat16 <-> float conversions for the CPU implementations: results
// are rounded to nearest even, NaN stays NaN, overflow becomes infinity.
#pragma once

#include <bit>
#include <cstdint>

namespace mimic::libs {

inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float value = float(mantissa) * 0x1p-24f;
    return sign ? -value : value;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

inline uint16_t float_to_half_bits(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: keep it quiet and non-zero
    return uint16_t(sign | 0x7e00 | ((magnitude >> 13) & 0x3ff));
  if (magnitude >= 0x477ff000u) // rounds to >= 65520: infinity
    return uint16_t(sign | 0x7c00);
  if (magnitude < 0x38800000u) {
    // Below the smallest normal half: a subnormal, rounded at 2^-24.
    float scaled = std::bit_cast<float>(magnitude) * 0x1p24f; // units of 2^-24, exact
    // Adding and subtracting 2^23 rounds to an integer by the FPU's nearest-even mode.
    uint32_t units = uint32_t((scaled + 0x1p23f) - 0x1p23f);
    return uint16_t(sign | units);
  }
  uint32_t rounded = magnitude + 0xfff + ((magnitude >> 13) & 1); // nearest even at bit 13
  return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
}

inline float bf16_bits_to_float(uint16_t b) {
  return std::bit_cast<float>(uint32_t(b) << 16);
}

inline uint16_t float_to_bf16_bits(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return uint16_t((bits >> 16) | 0x40);
  return uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

} // namespace mimic::libs
