#include "fatbin/fatbin.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <lz4.h>
#include <zstd.h>

#include "fatbin/bytes.h"

namespace mimic::fatbin {

std::string_view entry_kind_name(uint16_t kind) {
  switch (kind) {
  case uint16_t(EntryKind::Ptx):
    return "ptx";
  case uint16_t(EntryKind::Elf):
    return "elf";
  default:
    return "unknown";
  }
}

std::string_view compression_name(Compression c) {
  switch (c) {
  case Compression::None:
    return "none";
  case Compression::Lz4:
    return "lz4";
  case Compression::Zstd:
    return "zstd";
  }
  return "?";
}

Compression Entry::compression() const {
  if (flags & kFlagCompressedZstd)
    return Compression::Zstd;
  if (flags & kFlagCompressedLz4)
    return Compression::Lz4;
  return Compression::None;
}

uint64_t Entry::contents_size() const {
  return compression() == Compression::None ? payload.size() : uncompressed_size;
}

static std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

static Result<Entry> parse_entry(ByteReader& r, uint64_t end, uint64_t base_offset) {
  uint64_t start = r.position();
  std::string where = "fatbin entry at offset " + hex(base_offset + start);
  if (end - start < kEntryHeaderMinSize)
    return Error(where + ": header needs " + std::to_string(kEntryHeaderMinSize) +
                 " bytes, only " + std::to_string(end - start) + " remain");
  Entry e;
  e.offset = base_offset + start;
  e.kind = r.u16();
  (void)r.u16(); // 0x0101
  e.header_size = r.u32();
  e.payload_size = r.u64();
  e.compressed_size = r.u32();
  (void)r.u32(); // offset of the extended header (0x40) or 0
  e.version_minor = r.u16();
  e.version_major = r.u16();
  e.sm_arch = r.u32();
  uint32_t name_offset = r.u32();
  uint32_t name_length = r.u32();
  e.flags = r.u64();
  (void)r.u64();
  e.uncompressed_size = r.u64();
  (void)name_offset;
  (void)name_length;

  if (e.header_size < kEntryHeaderMinSize)
    return Error(where + ": header size " + std::to_string(e.header_size) + " is below the minimum " +
                 std::to_string(kEntryHeaderMinSize));
  if (e.header_size > end - start)
    return Error(where + ": header size " + std::to_string(e.header_size) +
                 " runs past the end of the fatbin");
  if (e.payload_size > end - start - e.header_size)
    return Error(where + ": payload of " + std::to_string(e.payload_size) +
                 " bytes runs past the end of the fatbin (" +
                 std::to_string(end - start - e.header_size) + " bytes left)");

  // Extended header: {u32 options offset (from the entry start), u32 options length}.
  if (e.header_size >= kEntryHeaderMinSize + 8) {
    ByteReader ext(r.data().subspan(start + kEntryHeaderMinSize, e.header_size - kEntryHeaderMinSize));
    uint32_t opt_off = ext.u32();
    uint32_t opt_len = ext.u32();
    if (opt_len > 0 && opt_off >= kEntryHeaderMinSize + 8 && uint64_t(opt_off) + opt_len <= e.header_size) {
      auto text = r.data().subspan(start + opt_off, opt_len);
      bool printable = true;
      for (uint8_t c : text)
        if (c != 0 && (c < 0x20 || c > 0x7e))
          printable = false;
      if (printable) {
        e.options.assign(reinterpret_cast<const char*>(text.data()), text.size());
        while (!e.options.empty() && (e.options.back() == '\0' || e.options.back() == ' '))
          e.options.pop_back();
      }
    }
  }

  uint64_t payload_start = start + e.header_size;
  uint64_t stored = e.payload_size;
  if (e.compression() != Compression::None) {
    if (e.compressed_size == 0 || e.compressed_size > e.payload_size)
      return Error(where + ": compressed size " + std::to_string(e.compressed_size) +
                   " does not fit the payload of " + std::to_string(e.payload_size) + " bytes");
    if (e.uncompressed_size == 0 || e.uncompressed_size > kMaxContentsSize)
      return Error(where + ": implausible uncompressed size " + std::to_string(e.uncompressed_size));
    if (e.compression() == Compression::Lz4 && e.flags & kFlagCompressedZstd)
      return Error(where + ": both LZ4 and ZSTD flags are set (" + hex(e.flags) + ")");
    stored = e.compressed_size;
  }
  e.payload = r.data().subspan(payload_start, stored);
  r.seek(payload_start + e.payload_size);
  return e;
}

Result<Fatbin> parse_fatbin(std::span<const uint8_t> bytes, uint64_t base_offset) {
  std::string where = "fatbin at offset " + hex(base_offset);
  if (bytes.size() < kFatbinHeaderSize)
    return Error(where + ": only " + std::to_string(bytes.size()) + " bytes, a header needs 16");
  ByteReader r(bytes);
  uint32_t magic = r.u32();
  if (magic != kFatbinMagic)
    return Error(where + ": bad magic " + hex(magic) + " (expected 0xba55ed50)");
  Fatbin fb;
  fb.offset = base_offset;
  fb.version = r.u16();
  uint16_t header_size = r.u16();
  uint64_t entries_size = r.u64();
  if (header_size < kFatbinHeaderSize || header_size > bytes.size())
    return Error(where + ": header size " + std::to_string(header_size) + " is invalid");
  if (entries_size > bytes.size() - header_size)
    return Error(where + ": declares " + std::to_string(entries_size) + " bytes of entries, only " +
                 std::to_string(bytes.size() - header_size) + " are present");
  fb.total_size = header_size + entries_size;
  uint64_t end = fb.total_size;
  r.seek(header_size);
  while (r.position() < end) {
    auto entry = parse_entry(r, end, base_offset);
    if (!entry)
      return entry.error();
    fb.entries.push_back(std::move(entry.value()));
  }
  return fb;
}

Result<std::vector<Fatbin>> parse_fatbin_sequence(std::span<const uint8_t> bytes,
                                                  uint64_t base_offset) {
  std::vector<Fatbin> out;
  uint64_t pos = 0;
  while (pos + kFatbinHeaderSize <= bytes.size()) {
    uint32_t magic;
    std::memcpy(&magic, bytes.data() + pos, 4);
    if (magic != kFatbinMagic) {
      // Containers are 8-byte aligned; anything else between them must be padding.
      bool zero = true;
      for (uint64_t i = pos; i < std::min<uint64_t>(pos + 8, bytes.size()); ++i)
        zero &= bytes[i] == 0;
      if (!zero)
        return Error("unexpected bytes at offset " + hex(base_offset + pos) +
                     " between fatbins (magic " + hex(magic) + ")");
      pos += 8;
      continue;
    }
    auto fb = parse_fatbin(bytes.subspan(pos), base_offset + pos);
    if (!fb)
      return fb.error();
    pos += fb->total_size;
    out.push_back(std::move(fb.value()));
  }
  return out;
}

// LZ4 block format: a sequence of n+3 bytes (token, n length bytes, offset) produces at
// most 19 + 255n bytes, so no input byte yields more than 255.
static constexpr uint64_t kMaxLz4Ratio = 255;

Result<std::string> entry_contents(const Entry& entry) {
  std::string where = std::string(entry_kind_name(entry.kind)) + " entry at offset " + hex(entry.offset);
  std::string out;
  switch (entry.compression()) {
  case Compression::None:
    out.assign(reinterpret_cast<const char*>(entry.payload.data()), entry.payload.size());
    break;
  case Compression::Lz4: {
    if (entry.payload.size() > uint64_t(INT32_MAX) || entry.uncompressed_size > uint64_t(INT32_MAX))
      return Error(where + ": LZ4 block too large");
    // An LZ4 byte expands to at most 255: refuse a header size the data cannot reach
    // before allocating it.
    if (entry.uncompressed_size > entry.payload.size() * kMaxLz4Ratio)
      return Error(where + ": header says " + std::to_string(entry.uncompressed_size) +
                   " bytes, more than " + std::to_string(entry.payload.size()) +
                   " bytes of LZ4 data can hold");
    out.resize(entry.uncompressed_size);
    int n = LZ4_decompress_safe(reinterpret_cast<const char*>(entry.payload.data()), out.data(),
                                int(entry.payload.size()), int(out.size()));
    if (n < 0)
      return Error(where + ": LZ4 data is corrupt (LZ4_decompress_safe returned " +
                   std::to_string(n) + ")");
    if (uint64_t(n) != entry.uncompressed_size)
      return Error(where + ": LZ4 data gave " + std::to_string(n) + " bytes, header says " +
                   std::to_string(entry.uncompressed_size));
    break;
  }
  case Compression::Zstd: {
    unsigned long long frame = ZSTD_getFrameContentSize(entry.payload.data(), entry.payload.size());
    if (frame == ZSTD_CONTENTSIZE_ERROR)
      return Error(where + ": not a ZSTD frame");
    if (frame != ZSTD_CONTENTSIZE_UNKNOWN && frame != entry.uncompressed_size)
      return Error(where + ": ZSTD frame holds " + std::to_string(frame) + " bytes, header says " +
                   std::to_string(entry.uncompressed_size));
    // A frame can claim any size in a few bytes: grow the output as data actually comes
    // out instead of allocating the claimed size up front.
    std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
    if (!dctx)
      return Error(where + ": out of memory for a ZSTD context");
    ZSTD_inBuffer in{entry.payload.data(), entry.payload.size(), 0};
    // One byte beyond the header's size, so that a longer stream is noticed.
    const uint64_t limit = entry.uncompressed_size + 1;
    out.resize(std::min<uint64_t>(limit, std::max<uint64_t>(uint64_t(1) << 20, entry.payload.size() * 8)));
    ZSTD_outBuffer ob{out.data(), out.size(), 0};
    for (;;) {
      size_t rc = ZSTD_decompressStream(dctx.get(), &ob, &in);
      if (ZSTD_isError(rc))
        return Error(where + ": ZSTD data is corrupt (" + ZSTD_getErrorName(rc) + ")");
      if (ob.pos > entry.uncompressed_size)
        return Error(where + ": ZSTD data holds more than the " +
                     std::to_string(entry.uncompressed_size) + " bytes the header says");
      if (rc == 0 && in.pos == in.size)
        break; // last frame complete
      if (ob.pos == ob.size) {
        out.resize(std::min<uint64_t>(limit, uint64_t(out.size()) * 2));
        ob = {out.data(), out.size(), ob.pos};
      } else if (in.pos == in.size) {
        return Error(where + ": ZSTD data is truncated");
      }
    }
    out.resize(ob.pos);
    if (ob.pos != entry.uncompressed_size)
      return Error(where + ": ZSTD data gave " + std::to_string(ob.pos) + " bytes, header says " +
                   std::to_string(entry.uncompressed_size));
    break;
  }
  }
  if (entry.is_ptx())
    while (!out.empty() && out.back() == '\0')
      out.pop_back();
  return out;
}

} // namespace mimic::fatbin
