// The fatbin container: the device code nvcc embeds in host binaries.
// Layout facts are in shared/notes/fatbin-and-ptx-corpus.md; every size and offset read
// from a container is checked against the bytes actually present.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"

namespace mimic::fatbin {

inline constexpr uint32_t kFatbinMagic = 0xBA55ED50;
inline constexpr uint32_t kWrapperMagic = 0x466243B1;
inline constexpr size_t kFatbinHeaderSize = 16;
inline constexpr size_t kEntryHeaderMinSize = 64;

enum class EntryKind : uint16_t {
  Ptx = 1,
  Elf = 2, // SASS in a cubin
};

std::string_view entry_kind_name(uint16_t kind);

// Bits of an entry's flags word.
enum EntryFlag : uint64_t {
  kFlag64Bit = 0x1,
  kFlagDebug = 0x2,
  kFlagLinux = 0x10,
  kFlagMac = 0x20,
  kFlagWindows = 0x40,
  kFlagCompressedLz4 = 0x2000,
  kFlagCompressedZstd = 0x8000,
  kFlagArchSpecific = 0x100000,   // code for sm_XXa
  kFlagFamilySpecific = 0x200000, // code for sm_XXf
};

enum class Compression { None, Lz4, Zstd };
std::string_view compression_name(Compression c);

struct Entry {
  uint16_t kind = 0;
  uint32_t header_size = 0;
  uint64_t payload_size = 0;    // bytes reserved after the header (padded)
  uint32_t compressed_size = 0; // exact compressed length, 0 when not compressed
  uint16_t version_major = 0;   // PTX ISA version for PTX entries
  uint16_t version_minor = 0;
  uint32_t sm_arch = 0; // e.g. 75, 120
  uint64_t flags = 0;
  uint64_t uncompressed_size = 0; // 0 when not compressed
  std::string options;            // compiler options carried in the extended header
  uint64_t offset = 0;            // of the entry header, from the start of the container's source
  std::span<const uint8_t> payload; // the stored bytes (compressed ones when compressed)

  bool is_ptx() const { return kind == uint16_t(EntryKind::Ptx); }
  bool is_elf() const { return kind == uint16_t(EntryKind::Elf); }
  Compression compression() const;
  // 0, 'a' (architecture-specific) or 'f' (family-specific), as in sm_90a / sm_100f.
  char arch_variant() const {
    return (flags & kFlagArchSpecific) ? 'a' : (flags & kFlagFamilySpecific) ? 'f' : 0;
  }
  // The size of the contents once decompressed.
  uint64_t contents_size() const;
};

struct Fatbin {
  uint64_t offset = 0; // where its header starts in the source it was read from
  uint16_t version = 0;
  uint64_t total_size = 0; // header + entries
  std::vector<Entry> entries;
};

// Parses one fatbin at the start of `bytes`. `base_offset` is added to every offset
// reported (so messages point into the enclosing file).
Result<Fatbin> parse_fatbin(std::span<const uint8_t> bytes, uint64_t base_offset = 0);

// Parses consecutive fatbins (as in an ELF `.nv_fatbin` section: aligned, possibly
// zero-padded between them).
Result<std::vector<Fatbin>> parse_fatbin_sequence(std::span<const uint8_t> bytes,
                                                  uint64_t base_offset = 0);

// The entry's contents, decompressed. PTX text loses its trailing NULs.
Result<std::string> entry_contents(const Entry& entry);

// Refuses decompressed sizes above this (a corrupt header must not exhaust memory).
inline constexpr uint64_t kMaxContentsSize = uint64_t(2) << 30;

} // namespace mimic::fatbin
