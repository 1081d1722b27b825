#include "fatbin/binary.h"

#include <cstring>
#include <elf.h>

namespace mimic::fatbin {

namespace {

constexpr uint16_t kEmCuda = 190;
constexpr uint64_t kMaxMemoryImage = uint64_t(4) << 30;

std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

bool has_prefix(std::span<const uint8_t> b, const void* magic, size_t n) {
  return b.size() >= n && std::memcmp(b.data(), magic, n) == 0;
}

bool is_elf(std::span<const uint8_t> b) { return has_prefix(b, ELFMAG, SELFMAG); }

bool is_fatbin(std::span<const uint8_t> b) {
  uint32_t m = kFatbinMagic;
  return has_prefix(b, &m, 4);
}

// PTX text starts, after blank space and comments, with a directive.
bool looks_like_ptx(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = p[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++i;
    } else if (c == '/' && i + 1 < n && p[i + 1] == '/') {
      while (i < n && p[i] != '\n')
        ++i;
    } else if (c == '/' && i + 1 < n && p[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(p[i] == '*' && p[i + 1] == '/'))
        ++i;
      i += 2;
    } else {
      return c == '.';
    }
  }
  return false;
}

template <typename T> bool read_at(std::span<const uint8_t> b, uint64_t off, T& out) {
  if (off > b.size() || b.size() - off < sizeof(T))
    return false;
  std::memcpy(&out, b.data() + off, sizeof(T));
  return true;
}

Result<ScannedFile> scan_host_elf(std::span<const uint8_t> bytes) {
  Elf64_Ehdr eh;
  if (!read_at(bytes, 0, eh))
    return Error("truncated ELF header");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64)
    return Error("only 64-bit ELF files carry CUDA device code (EI_CLASS is " +
                 std::to_string(eh.e_ident[EI_CLASS]) + ")");
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return Error("big-endian ELF files are not supported");
  ScannedFile out;
  if (eh.e_machine == kEmCuda) {
    out.format = ImageFormat::Cubin;
    out.image = bytes;
    return out;
  }
  out.format = ImageFormat::HostElf;
  if (eh.e_shoff == 0 || eh.e_shnum == 0)
    return out; // stripped of section headers: nothing to find by name
  if (eh.e_shentsize != sizeof(Elf64_Shdr))
    return Error("ELF section header size " + std::to_string(eh.e_shentsize) + " is not " +
                 std::to_string(sizeof(Elf64_Shdr)));
  uint64_t table_size = uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr);
  if (eh.e_shoff > bytes.size() || bytes.size() - eh.e_shoff < table_size)
    return Error("ELF section header table at " + hex(eh.e_shoff) + " runs past the end of the file");
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), bytes.data() + eh.e_shoff, table_size);
  if (eh.e_shstrndx >= sections.size())
    return Error("ELF section name table index " + std::to_string(eh.e_shstrndx) + " is out of range");
  const Elf64_Shdr& strtab = sections[eh.e_shstrndx];
  if (strtab.sh_offset > bytes.size() || bytes.size() - strtab.sh_offset < strtab.sh_size)
    return Error("ELF section name table runs past the end of the file");
  auto names = bytes.subspan(strtab.sh_offset, strtab.sh_size);
  auto section_name = [&](uint32_t off) -> std::string {
    if (off >= names.size())
      return {};
    const char* s = reinterpret_cast<const char*>(names.data() + off);
    return std::string(s, strnlen(s, names.size() - off));
  };
  for (const Elf64_Shdr& sh : sections) {
    std::string name = section_name(sh.sh_name);
    bool fat = name == ".nv_fatbin" || name == "__nv_relfatbin";
    if (name == ".nvFatBinSegment") {
      out.wrapper_count = sh.sh_size / 24;
      continue;
    }
    if (!fat || sh.sh_type == SHT_NOBITS)
      continue;
    if (sh.sh_offset > bytes.size() || bytes.size() - sh.sh_offset < sh.sh_size)
      return Error("section " + name + " at " + hex(sh.sh_offset) + " (size " + hex(sh.sh_size) +
                   ") runs past the end of the file");
    auto seq = parse_fatbin_sequence(bytes.subspan(sh.sh_offset, sh.sh_size), sh.sh_offset);
    if (!seq)
      return seq.error().context("section " + name);
    for (Fatbin& fb : seq.value())
      out.fatbins.push_back({name, std::move(fb)});
  }
  return out;
}

} // namespace

std::string_view image_format_name(ImageFormat f) {
  switch (f) {
  case ImageFormat::HostElf:
    return "host-elf";
  case ImageFormat::Cubin:
    return "cubin";
  case ImageFormat::Fatbin:
    return "fatbin";
  case ImageFormat::Wrapper:
    return "fatbin-wrapper";
  case ImageFormat::Ptx:
    return "ptx";
  }
  return "?";
}

Result<ScannedFile> scan_file(std::span<const uint8_t> bytes) {
  if (is_elf(bytes))
    return scan_host_elf(bytes);
  if (is_fatbin(bytes)) {
    auto seq = parse_fatbin_sequence(bytes, 0);
    if (!seq)
      return seq.error();
    ScannedFile out;
    out.format = ImageFormat::Fatbin;
    for (Fatbin& fb : seq.value())
      out.fatbins.push_back({"", std::move(fb)});
    return out;
  }
  if (looks_like_ptx(bytes.data(), bytes.size())) {
    ScannedFile out;
    out.format = ImageFormat::Ptx;
    size_t n = bytes.size();
    while (n > 0 && bytes[n - 1] == 0)
      --n;
    out.image = bytes.first(n);
    return out;
  }
  return Error("not an ELF file, a fatbin or PTX text");
}

Result<MemoryImage> classify_memory_image(const void* image) {
  if (!image)
    return Error("image pointer is null");
  const auto* p = static_cast<const uint8_t*>(image);
  uint32_t magic;
  std::memcpy(&magic, p, 4);
  MemoryImage out;

  auto fatbin_at = [&](const uint8_t* fb) -> Result<std::span<const uint8_t>> {
    uint32_t m;
    uint16_t header_size;
    uint64_t entries;
    std::memcpy(&m, fb, 4);
    if (m != kFatbinMagic)
      return Error("fatbin has bad magic " + hex(m));
    std::memcpy(&header_size, fb + 6, 2);
    std::memcpy(&entries, fb + 8, 8);
    if (header_size < kFatbinHeaderSize || entries > kMaxMemoryImage)
      return Error("fatbin header is implausible (header size " + std::to_string(header_size) +
                   ", entries " + std::to_string(entries) + " bytes)");
    return std::span<const uint8_t>(fb, header_size + entries);
  };

  if (magic == kWrapperMagic) {
    uint32_t version;
    const uint8_t* fatbin;
    const void* const* prelinked;
    std::memcpy(&version, p + 4, 4);
    std::memcpy(&fatbin, p + 8, sizeof(void*));
    std::memcpy(&prelinked, p + 16, sizeof(void*));
    if (version != 1 && version != 2)
      return Error("fatbin wrapper version " + std::to_string(version) + " is unknown (1 or 2 expected)");
    if (!fatbin)
      return Error("fatbin wrapper points at no fatbin");
    auto span = fatbin_at(fatbin);
    if (!span)
      return span.error().context("fatbin wrapper");
    out.format = ImageFormat::Wrapper;
    out.bytes = span.value();
    out.wrapper_version = version;
    out.prelinked = version == 2 ? prelinked : nullptr;
    return out;
  }
  if (magic == kFatbinMagic) {
    auto span = fatbin_at(p);
    if (!span)
      return span.error();
    out.format = ImageFormat::Fatbin;
    out.bytes = span.value();
    return out;
  }
  if (std::memcmp(p, ELFMAG, SELFMAG) == 0) {
    Elf64_Ehdr eh;
    std::memcpy(&eh, p, sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != kEmCuda)
      return Error("ELF image is not a 64-bit CUDA cubin (e_machine " + std::to_string(eh.e_machine) + ")");
    uint64_t size = sizeof(Elf64_Ehdr);
    size = std::max<uint64_t>(size, eh.e_shoff + uint64_t(eh.e_shnum) * eh.e_shentsize);
    size = std::max<uint64_t>(size, eh.e_phoff + uint64_t(eh.e_phnum) * eh.e_phentsize);
    if (size > kMaxMemoryImage)
      return Error("cubin header is implausible");
    if (eh.e_shentsize == sizeof(Elf64_Shdr))
      for (unsigned i = 0; i < eh.e_shnum; ++i) {
        Elf64_Shdr sh;
        std::memcpy(&sh, p + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
        if (sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size <= kMaxMemoryImage)
          size = std::max<uint64_t>(size, sh.sh_offset + sh.sh_size);
      }
    out.format = ImageFormat::Cubin;
    out.bytes = {p, size};
    return out;
  }
  size_t n = strnlen(reinterpret_cast<const char*>(p), kMaxMemoryImage);
  if (!looks_like_ptx(p, n))
    return Error("image is neither a fatbin, a fatbin wrapper, a cubin nor PTX text (first bytes " +
                 hex(magic) + ")");
  out.format = ImageFormat::Ptx;
  out.bytes = {p, n};
  return out;
}

} // namespace mimic::fatbin
