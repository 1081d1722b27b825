#include "backends/amdgpu/device_log.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "backends/amdgpu/code_object.h"
#include "codegen/texture_abi.h"

namespace mimic::amdgpu {

namespace {

void append_formatted(std::string& out, const char* spec, ...) {
  va_list ap;
  va_start(ap, spec);
  va_list again;
  va_copy(again, ap);
  int n = std::vsnprintf(nullptr, 0, spec, ap);
  va_end(ap);
  if (n > 0) {
    std::string text(size_t(n) + 1, '\0');
    std::vsnprintf(text.data(), text.size(), spec, again);
    out.append(text.data(), size_t(n));
  }
  va_end(again);
}

// The packed arguments, read in order; past the end every value is 0.
class Arguments {
public:
  Arguments(const uint8_t* data, size_t bytes) : data_(data), bytes_(bytes) {}
  template <typename T> T next() {
    at_ = (at_ + sizeof(T) - 1) / sizeof(T) * sizeof(T);
    T v{};
    if (at_ + sizeof(T) <= bytes_) std::memcpy(&v, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }

private:
  const uint8_t* data_;
  size_t bytes_;
  size_t at_ = 0;
};

template <typename T> T field(const uint8_t* record, size_t offset) {
  T v;
  std::memcpy(&v, record + offset, sizeof v);
  return v;
}

} // namespace

std::string read_device_string(uint64_t address, const ReadDevice& read) {
  if (!address) return "(null)";
  std::string out;
  char chunk[256];
  while (out.size() < 65536) {
    // Never read past a 256-byte boundary: the string may end just before unmapped memory.
    size_t n = 256 - size_t((address + out.size()) % 256);
    if (!read(chunk, address + out.size(), n)) return out.empty() ? "(unreadable)" : out;
    size_t len = strnlen(chunk, n);
    out.append(chunk, len);
    if (len < n) break;
  }
  return out;
}

std::string format_device_printf(const std::string& format, const uint8_t* args, size_t bytes,
                                 const ReadDevice& read) {
  Arguments a(args, bytes);
  std::string out;
  for (size_t i = 0; i < format.size();) {
    if (format[i] != '%') {
      out.push_back(format[i++]);
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      out.push_back('%');
      i += 2;
      continue;
    }
    // %[flags][width][.precision][length]conversion; the spec is re-issued to the host's
    // printf without the length, with the one the value needs.
    size_t start = i++;
    while (i < format.size() && std::strchr("-+ #0123456789.", format[i]))
      ++i;
    bool wide = false;
    while (i < format.size() && std::strchr("hlLqjzt", format[i]))
      wide |= format[i++] != 'h';
    if (i >= format.size()) {
      out += format.substr(start);
      break;
    }
    char conversion = format[i++];
    std::string spec;
    for (size_t k = start; k < i; ++k)
      if (!std::strchr("hlLqjzt", format[k])) spec.push_back(format[k]);
    switch (conversion) {
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o':
    case 'c':
      if (wide) {
        spec.insert(spec.size() - 1, "ll");
        append_formatted(out, spec.c_str(), a.next<long long>());
      } else {
        append_formatted(out, spec.c_str(), a.next<int>());
      }
      break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
      append_formatted(out, spec.c_str(), a.next<double>());
      break;
    case 's':
      append_formatted(out, spec.c_str(), read_device_string(a.next<uint64_t>(), read).c_str());
      break;
    case 'p':
      append_formatted(out, spec.c_str(), reinterpret_cast<void*>(a.next<uint64_t>()));
      break;
    default: // not a conversion CUDA knows: printed as written
      out += format.substr(start, i - start);
      break;
    }
  }
  return out;
}

DecodedLog decode_device_log(const uint8_t* records, size_t bytes, const ReadDevice& read) {
  DecodedLog out;
  for (size_t at = 0; at + sizeof(DeviceLogRecord) <= bytes;) {
    auto kind = DeviceLogKind(field<uint32_t>(records + at, 0));
    uint32_t size = field<uint32_t>(records + at, 4);
    if (size < sizeof(DeviceLogRecord) || size % 8 || at + size > bytes) {
      out.problem = "a record at offset " + std::to_string(at) + " of the device log has size " +
                    std::to_string(size);
      return out;
    }
    const uint8_t* r = records + at;
    if (kind == DeviceLogKind::Printf && size >= 16) {
      std::string format = read_device_string(field<uint64_t>(r, 8), read);
      out.printed += format_device_printf(format, r + 16, size - 16, read);
    } else if (kind == DeviceLogKind::Assert && size >= 64) {
      std::string message = read_device_string(field<uint64_t>(r, 8), read);
      std::string file = read_device_string(field<uint64_t>(r, 16), read);
      std::string function = read_device_string(field<uint64_t>(r, 24), read);
      append_formatted(
          out.asserts, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n",
          file.c_str(), field<uint32_t>(r, 32), function.c_str(), field<uint32_t>(r, 36),
          field<uint32_t>(r, 40), field<uint32_t>(r, 44), field<uint32_t>(r, 48),
          field<uint32_t>(r, 52), field<uint32_t>(r, 56), message.c_str());
      out.asserted = true;
    } else if (kind == DeviceLogKind::Trap && size >= 64) {
      static const char* const instructions[] = {"tex", "tld4", "suld", "sust", "txq", "suq"};
      uint32_t reason = field<uint32_t>(r, 8), instruction = field<uint32_t>(r, 12);
      const char* name = instruction < 6 ? instructions[instruction] : "texture instruction";
      bool surface = instruction == uint32_t(codegen::TextureInstruction::Suld) ||
                     instruction == uint32_t(codegen::TextureInstruction::Sust) ||
                     instruction == uint32_t(codegen::TextureInstruction::Suq);
      char why[128];
      if (reason == codegen::kTexOutOfRange)
        std::snprintf(why, sizeof why, "a %s.trap access outside the surface", name);
      else
        std::snprintf(why, sizeof why, "handle 0x%llx is not a %s object",
                      (unsigned long long)field<uint64_t>(r, 16), surface ? "surface" : "texture");
      append_formatted(out.traps,
                       "mimic: %s at PTX line %u: %s (block [%u,%u,%u], thread [%u,%u,%u] traps; "
                       "the launch fails with CUDA_ERROR_LAUNCH_FAILED)\n",
                       name, field<uint32_t>(r, 24), why, field<uint32_t>(r, 36),
                       field<uint32_t>(r, 40), field<uint32_t>(r, 44), field<uint32_t>(r, 48),
                       field<uint32_t>(r, 52), field<uint32_t>(r, 56));
      out.trapped = true;
    } else {
      out.problem =
          "a record of unknown kind " + std::to_string(uint32_t(kind)) + " in the device log";
      return out;
    }
    at += size;
  }
  return out;
}

} // namespace mimic::amdgpu
