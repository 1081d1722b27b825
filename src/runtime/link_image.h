// Linked images: what cuLinkComplete hands back. Mimic links PTX, not machine code, so a
// linked image is the PTX modules that went into the link, kept apart in one buffer and
// loaded (cuModuleLoadData, cuLibraryLoadData) as one program, the way the modules of an
// -rdc program are: each module's .extern declarations resolve against the others'
// .visible definitions.
//
// Layout (little-endian, no padding; the buffer is self-describing so that a bare pointer
// is enough to find its end):
//   offset 0   char     magic[8]     "MIMICLNK"
//          8   uint32   version      1
//         12   uint32   count        number of modules
//         16   uint64   total_bytes  size of the whole image, header included
//   then `count` times:
//              uint32   name_bytes   the module's name for messages (input name or path)
//              uint32   reserved     0
//              uint64   text_bytes   its PTX text, without a terminating NUL
//              char     name[name_bytes], char text[text_bytes]
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/error.h"

namespace mimic::runtime {

struct PtxSource {
  std::string name; // for messages: "kernels.ptx", a file path, "input 2"
  std::string text;
};

inline constexpr char kLinkedImageMagic[8] = {'M', 'I', 'M', 'I', 'C', 'L', 'N', 'K'};
inline constexpr uint32_t kLinkedImageVersion = 1;

std::vector<uint8_t> make_linked_image(const std::vector<PtxSource>& modules);

// True when `image` starts with the magic (reads no byte past the first that differs, so
// a short PTX string is safe to test).
bool is_linked_image(const void* image);

// The modules of a linked image; an error when its sizes do not add up.
Result<std::vector<PtxSource>> read_linked_image(const void* image);

} // namespace mimic::runtime
