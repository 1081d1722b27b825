// Read-only views of whole files: memory-mapped, so that scanning a 500 MB library for
// its device code touches only the pages that are read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <optional>
#include <string>
#include <string_view>

#include "support/error.h"

namespace mimic {

class MappedFile {
public:
  static Result<MappedFile> open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

// Reads a whole file into a string (for PTX text files).
Result<std::string> read_text_file(const std::string& path);

// Writes `bytes` to `path` under a temporary name in the same folder, then renames it into
// place: readers see the old file or the whole new one, never a part. On failure returns
// the reason (strerror) and leaves no temporary file.
std::optional<std::string> write_file_atomically(const std::string& path, std::string_view bytes);

} // namespace mimic
