// The device log of code_object.h as the host reads it: device printf, assert and trap records,
// turned into the text CUDA prints. Pure functions over bytes already copied from the GPU;
// strings the records point to are read through `ReadDevice`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace mimic::amdgpu {

// Copies `bytes` from device address `address` to `out`; false when it cannot.
using ReadDevice = std::function<bool(void* out, uint64_t address, size_t bytes)>;

// The NUL-terminated string at `address` (at most 64 KiB; "(null)" for 0).
std::string read_device_string(uint64_t address, const ReadDevice& read);

// What printf prints for `format` and vprintf's packed `args` (`bytes` of them): each
// argument at the next multiple of its size, integers 4 bytes unless long, floating point 8,
// %s and %p 8 (device addresses).
std::string format_device_printf(const std::string& format, const uint8_t* args, size_t bytes,
                                 const ReadDevice& read);

struct DecodedLog {
  std::string printed; // printf output, in record order (stdout)
  std::string asserts; // assert reports as CUDA writes them (stderr)
  bool asserted = false;
  std::string traps; // why texture and surface instructions trapped (stderr)
  bool trapped = false;
  std::string problem; // a malformed record, when there is one
  // What the launch did: an assert wins over a trap (CUDA_ERROR_ASSERT).
  enum class Outcome { Ran, Asserted, Trapped };
  Outcome outcome() const {
    return asserted ? Outcome::Asserted : trapped ? Outcome::Trapped : Outcome::Ran;
  }
};

// The records of a log whose header said `used` bytes (those present: `bytes`).
DecodedLog decode_device_log(const uint8_t* records, size_t bytes, const ReadDevice& read);

} // namespace mimic::amdgpu
