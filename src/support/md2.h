// MD2 (RFC 1319). Only for the CUDA runtime's integrity check, which is defined on it;
// no maintained library still ships MD2.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace mimic {

class Md2 {
public:
  void update(const void* data, size_t size);
  std::array<uint8_t, 16> finish();

private:
  void compress(const uint8_t block[16]);

  uint8_t state_[48] = {};
  uint8_t checksum_[16] = {};
  uint8_t buffer_[16] = {};
  size_t buffered_ = 0;
};

} // namespace mimic
