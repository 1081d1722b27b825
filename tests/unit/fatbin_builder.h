// Builds fatbins and minimal host ELF files in memory, for tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <elf.h>
#include <lz4.h>
#include <string>
#include <vector>
#include <zstd.h>

#include "fatbin/fatbin.h"

namespace mimic::test {

using Bytes = std::vector<uint8_t>;

template <typename T> void put(Bytes& b, T v) {
  size_t n = b.size();
  b.resize(n + sizeof(T));
  std::memcpy(b.data() + n, &v, sizeof(T));
}

inline void put_bytes(Bytes& b, const void* p, size_t n) {
  const auto* c = static_cast<const uint8_t*>(p);
  b.insert(b.end(), c, c + n);
}

struct EntrySpec {
  uint16_t kind = 1; // PTX
  uint32_t sm = 75;
  uint16_t major = 9, minor = 0;
  fatbin::Compression compression = fatbin::Compression::None;
  std::string contents;
  std::string options; // stored in an extended header when non-empty
};

inline Bytes build_entry(const EntrySpec& e) {
  std::string stored = e.contents;
  uint64_t flags = fatbin::kFlag64Bit | fatbin::kFlagLinux;
  if (e.compression == fatbin::Compression::Lz4) {
    stored.resize(LZ4_compressBound(int(e.contents.size())));
    int n = LZ4_compress_default(e.contents.data(), stored.data(), int(e.contents.size()), int(stored.size()));
    stored.resize(size_t(n));
    flags |= fatbin::kFlagCompressedLz4;
  } else if (e.compression == fatbin::Compression::Zstd) {
    stored.resize(ZSTD_compressBound(e.contents.size()));
    size_t n = ZSTD_compress(stored.data(), stored.size(), e.contents.data(), e.contents.size(), 3);
    stored.resize(n);
    flags |= fatbin::kFlagCompressedZstd;
  }
  bool compressed = e.compression != fatbin::Compression::None;
  size_t padded = (stored.size() + 7) & ~size_t(7);
  uint32_t header_size = 64;
  Bytes ext;
  if (!e.options.empty()) {
    put<uint32_t>(ext, 72);
    put<uint32_t>(ext, uint32_t(e.options.size()));
    put_bytes(ext, e.options.data(), e.options.size());
    while (ext.size() % 8)
      ext.push_back(0);
    header_size += uint32_t(ext.size());
  }
  Bytes b;
  put<uint16_t>(b, e.kind);
  put<uint16_t>(b, 0x0101);
  put<uint32_t>(b, header_size);
  put<uint64_t>(b, padded);
  put<uint32_t>(b, compressed ? uint32_t(stored.size()) : 0);
  put<uint32_t>(b, e.kind == 1 ? 0x40 : 0);
  put<uint16_t>(b, e.minor);
  put<uint16_t>(b, e.major);
  put<uint32_t>(b, e.sm);
  put<uint32_t>(b, 0);
  put<uint32_t>(b, 0);
  put<uint64_t>(b, flags);
  put<uint64_t>(b, 0);
  put<uint64_t>(b, compressed ? e.contents.size() : 0);
  put_bytes(b, ext.data(), ext.size());
  put_bytes(b, stored.data(), stored.size());
  b.resize(b.size() + (padded - stored.size()), 0);
  return b;
}

inline Bytes build_fatbin(const std::vector<EntrySpec>& entries) {
  Bytes body;
  for (const auto& e : entries) {
    Bytes eb = build_entry(e);
    body.insert(body.end(), eb.begin(), eb.end());
  }
  Bytes b;
  put<uint32_t>(b, fatbin::kFatbinMagic);
  put<uint16_t>(b, 1);
  put<uint16_t>(b, 16);
  put<uint64_t>(b, body.size());
  b.insert(b.end(), body.begin(), body.end());
  return b;
}

// A minimal 64-bit host ELF with the given named sections.
inline Bytes build_elf(const std::vector<std::pair<std::string, Bytes>>& sections) {
  Bytes file(sizeof(Elf64_Ehdr), 0);
  std::vector<Elf64_Shdr> headers(1); // null section
  std::string names(1, '\0');
  for (const auto& [name, data] : sections) {
    while (file.size() % 8)
      file.push_back(0);
    Elf64_Shdr sh{};
    sh.sh_name = uint32_t(names.size());
    names += name + '\0';
    sh.sh_type = SHT_PROGBITS;
    sh.sh_offset = file.size();
    sh.sh_size = data.size();
    sh.sh_addralign = 8;
    file.insert(file.end(), data.begin(), data.end());
    headers.push_back(sh);
  }
  Elf64_Shdr strtab{};
  strtab.sh_name = uint32_t(names.size());
  names += std::string(".shstrtab") + '\0';
  strtab.sh_type = SHT_STRTAB;
  strtab.sh_offset = file.size();
  strtab.sh_size = names.size();
  file.insert(file.end(), names.begin(), names.end());
  headers.push_back(strtab);
  while (file.size() % 8)
    file.push_back(0);
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = uint16_t(headers.size());
  eh.e_shstrndx = uint16_t(headers.size() - 1);
  eh.e_shoff = file.size();
  for (const auto& h : headers)
    put_bytes(file, &h, sizeof h);
  std::memcpy(file.data(), &eh, sizeof eh);
  return file;
}

} // namespace mimic::test
