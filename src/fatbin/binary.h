// Locating device code: in files (host ELF executables and shared libraries, cubins,
// bare fatbins, PTX text) and in memory (what the driver API receives as a `const void*`).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fatbin/fatbin.h"
#include "support/error.h"

namespace mimic::fatbin {

enum class ImageFormat {
  HostElf, // an executable or shared library with fatbins in its sections
  Cubin,   // a device ELF (e_machine EM_CUDA)
  Fatbin,  // a bare fatbin
  Wrapper, // a __fatBinC_Wrapper_t (memory only)
  Ptx,     // PTX text
};
std::string_view image_format_name(ImageFormat f);

// A fatbin found in a host binary, and the section it came from.
struct LocatedFatbin {
  std::string section; // ".nv_fatbin" or "__nv_relfatbin" (the PTX of -rdc builds)
  Fatbin fatbin;
};

struct ScannedFile {
  ImageFormat format = ImageFormat::HostElf;
  std::vector<LocatedFatbin> fatbins;
  size_t wrapper_count = 0; // entries of .nvFatBinSegment
  std::span<const uint8_t> image; // for Cubin / Ptx: the whole file
};

// Classifies a file's bytes and finds its device code. Every offset is checked.
Result<ScannedFile> scan_file(std::span<const uint8_t> bytes);

// What a driver-API pointer points at. `bytes` covers exactly the image (for PTX:
// the text without its terminating NUL). For a wrapper, `bytes` is the fatbin it names
// and `prelinked` the NULL-terminated array of version-2 wrappers (may be null).
struct MemoryImage {
  ImageFormat format = ImageFormat::Fatbin;
  std::span<const uint8_t> bytes;
  uint32_t wrapper_version = 0;
  const void* const* prelinked = nullptr;
};

// Sizes in memory cannot be checked against anything: headers are validated for
// plausibility (sizes below 4 GiB, magic numbers, printable PTX) before use.
Result<MemoryImage> classify_memory_image(const void* image);

} // namespace mimic::fatbin
