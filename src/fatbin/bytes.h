// Little-endian reads from a span; reads past the end yield zero (callers check sizes
// before trusting values, the reader only guarantees memory safety).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

namespace mimic::fatbin {

class ByteReader {
public:
  explicit ByteReader(std::span<const uint8_t> data) : data_(data) {}

  uint16_t u16() { return read<uint16_t>(); }
  uint32_t u32() { return read<uint32_t>(); }
  uint64_t u64() { return read<uint64_t>(); }
  uint64_t position() const { return pos_; }
  void seek(uint64_t pos) { pos_ = pos; }
  std::span<const uint8_t> data() const { return data_; }

private:
  template <typename T> T read() {
    T v{};
    if (pos_ <= data_.size() && data_.size() - pos_ >= sizeof(T))
      std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::span<const uint8_t> data_;
  uint64_t pos_ = 0;
};

} // namespace mimic::fatbin
