#include <gtest/gtest.h>

#include "fatbin/binary.h"
#include "fatbin/fatbin.h"
#include "fatbin_builder.h"

using namespace mimic;
using namespace mimic::test;
using fatbin::Compression;

namespace {

const char* kPtx = ".version 9.0\n.target sm_75\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";

std::string repeated_ptx() {
  std::string s = kPtx;
  for (int i = 0; i < 200; ++i)
    s += "// padding line to make the text compressible " + std::to_string(i) + "\n";
  return s;
}

} // namespace

TEST(Fatbin, ParsesUncompressedPtxAndElfEntries) {
  Bytes fb = build_fatbin({{1, 75, 9, 0, Compression::None, kPtx, ""},
                           {2, 80, 1, 8, Compression::None, std::string("\x7f" "ELF....", 8), ""}});
  auto parsed = fatbin::parse_fatbin(fb);
  ASSERT_TRUE(parsed) << parsed.error().message();
  ASSERT_EQ(parsed->entries.size(), 2u);
  EXPECT_TRUE(parsed->entries[0].is_ptx());
  EXPECT_EQ(parsed->entries[0].sm_arch, 75u);
  EXPECT_EQ(parsed->entries[0].version_major, 9);
  EXPECT_TRUE(parsed->entries[1].is_elf());
  auto text = fatbin::entry_contents(parsed->entries[0]);
  ASSERT_TRUE(text);
  EXPECT_EQ(text.value(), kPtx); // trailing padding NULs are stripped from PTX
}

TEST(Fatbin, DecompressesLz4AndZstd) {
  std::string ptx = repeated_ptx();
  for (Compression c : {Compression::Lz4, Compression::Zstd}) {
    Bytes fb = build_fatbin({{1, 120, 9, 0, c, ptx, ""}});
    auto parsed = fatbin::parse_fatbin(fb);
    ASSERT_TRUE(parsed) << parsed.error().message();
    const auto& e = parsed->entries.at(0);
    EXPECT_EQ(e.compression(), c);
    EXPECT_LT(e.payload.size(), ptx.size());
    auto text = fatbin::entry_contents(e);
    ASSERT_TRUE(text) << text.error().message();
    EXPECT_EQ(text.value(), ptx);
  }
}

TEST(Fatbin, ReadsOptionsFromExtendedHeader) {
  Bytes fb = build_fatbin({{1, 120, 9, 0, Compression::None, kPtx, "-maxrregcount=96 --compile-only"}});
  auto parsed = fatbin::parse_fatbin(fb);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->entries[0].options, "-maxrregcount=96 --compile-only");
}

TEST(Fatbin, RejectsBadMagicAndTruncation) {
  Bytes fb = build_fatbin({{1, 75, 9, 0, Compression::None, kPtx, ""}});
  Bytes bad = fb;
  bad[0] ^= 0xff;
  auto r = fatbin::parse_fatbin(bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("bad magic"), std::string::npos);

  for (size_t cut : {size_t(8), size_t(40), fb.size() - 1}) {
    Bytes truncated(fb.begin(), fb.begin() + long(cut));
    auto t = fatbin::parse_fatbin(truncated);
    EXPECT_FALSE(t) << "cut at " << cut;
  }
}

TEST(Fatbin, RejectsEntryPayloadPastEnd) {
  Bytes fb = build_fatbin({{1, 75, 9, 0, Compression::None, kPtx, ""}});
  uint64_t huge = 1ull << 40;
  std::memcpy(fb.data() + 16 + 8, &huge, 8); // entry payload size
  auto r = fatbin::parse_fatbin(fb);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("runs past the end"), std::string::npos) << r.error().message();
}

TEST(Fatbin, ReportsCorruptCompressedData) {
  Bytes fb = build_fatbin({{1, 75, 9, 0, Compression::Zstd, repeated_ptx(), ""}});
  fb[16 + 64 + 6] ^= 0x5a; // inside the ZSTD frame
  auto parsed = fatbin::parse_fatbin(fb);
  ASSERT_TRUE(parsed);
  auto text = fatbin::entry_contents(parsed->entries[0]);
  EXPECT_FALSE(text);

  Bytes lz = build_fatbin({{1, 75, 9, 0, Compression::Lz4, repeated_ptx(), ""}});
  uint64_t wrong = 5; // uncompressed size too small for the data
  std::memcpy(lz.data() + 16 + 56, &wrong, 8);
  auto p2 = fatbin::parse_fatbin(lz);
  ASSERT_TRUE(p2);
  EXPECT_FALSE(fatbin::entry_contents(p2->entries[0]));
}

TEST(Fatbin, RefusesImplausibleUncompressedSize) {
  Bytes fb = build_fatbin({{1, 75, 9, 0, Compression::Zstd, repeated_ptx(), ""}});
  uint64_t huge = 1ull << 50;
  std::memcpy(fb.data() + 16 + 56, &huge, 8);
  auto r = fatbin::parse_fatbin(fb);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("implausible"), std::string::npos);
}

TEST(Fatbin, SequenceSkipsPaddingBetweenContainers) {
  Bytes a = build_fatbin({{1, 75, 9, 0, Compression::None, kPtx, ""}});
  Bytes b = build_fatbin({{1, 80, 9, 0, Compression::None, kPtx, ""}});
  Bytes seq = a;
  seq.resize(seq.size() + 16, 0);
  seq.insert(seq.end(), b.begin(), b.end());
  auto r = fatbin::parse_fatbin_sequence(seq);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].entries[0].sm_arch, 80u);
  EXPECT_EQ((*r)[1].offset, a.size() + 16);
}

TEST(Fatbin, SequenceRejectsGarbageBetweenContainers) {
  Bytes a = build_fatbin({{1, 75, 9, 0, Compression::None, kPtx, ""}});
  a.insert(a.end(), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  EXPECT_FALSE(fatbin::parse_fatbin_sequence(a));
}

TEST(Binary, FindsFatbinsInElfSections) {
  Bytes fb = build_fatbin({{1, 75, 9, 0, Compression::Zstd, kPtx, ""}});
  Bytes rel = build_fatbin({{1, 90, 9, 0, Compression::None, kPtx, ""}});
  Bytes elf = build_elf({{".text", Bytes(32, 0x90)}, {".nv_fatbin", fb}, {"__nv_relfatbin", rel}});
  auto scan = fatbin::scan_file(elf);
  ASSERT_TRUE(scan) << scan.error().message();
  EXPECT_EQ(scan->format, fatbin::ImageFormat::HostElf);
  ASSERT_EQ(scan->fatbins.size(), 2u);
  EXPECT_EQ(scan->fatbins[0].section, ".nv_fatbin");
  EXPECT_EQ(scan->fatbins[1].section, "__nv_relfatbin");
  EXPECT_EQ(scan->fatbins[1].fatbin.entries[0].sm_arch, 90u);
}

TEST(Binary, ReportsSectionPastEndOfFile) {
  Bytes fb = build_fatbin({{1, 75, 9, 0, Compression::None, kPtx, ""}});
  Bytes elf = build_elf({{".nv_fatbin", fb}});
  // Grow the section's size beyond the file.
  Elf64_Ehdr eh;
  std::memcpy(&eh, elf.data(), sizeof eh);
  Elf64_Shdr sh;
  std::memcpy(&sh, elf.data() + eh.e_shoff + sizeof(Elf64_Shdr), sizeof sh);
  sh.sh_size = 1 << 30;
  std::memcpy(elf.data() + eh.e_shoff + sizeof(Elf64_Shdr), &sh, sizeof sh);
  auto scan = fatbin::scan_file(elf);
  ASSERT_FALSE(scan);
  EXPECT_NE(scan.error().message().find(".nv_fatbin"), std::string::npos);
}

TEST(Binary, ClassifiesFilesByContent) {
  std::string ptx = std::string("// comment\n") + kPtx;
  auto p = fatbin::scan_file({reinterpret_cast<const uint8_t*>(ptx.data()), ptx.size()});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->format, fatbin::ImageFormat::Ptx);

  Bytes fb = build_fatbin({{1, 75, 9, 0, Compression::None, kPtx, ""}});
  auto f = fatbin::scan_file(fb);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->format, fatbin::ImageFormat::Fatbin);

  std::string junk = "hello world";
  EXPECT_FALSE(fatbin::scan_file({reinterpret_cast<const uint8_t*>(junk.data()), junk.size()}));
}

TEST(Binary, ClassifiesMemoryImages) {
  Bytes fb = build_fatbin({{1, 75, 9, 0, Compression::None, kPtx, ""}});
  struct Wrapper {
    uint32_t magic, version;
    const void* fatbin;
    const void* prelinked;
  } wrapper{fatbin::kWrapperMagic, 1, fb.data(), nullptr};

  auto w = fatbin::classify_memory_image(&wrapper);
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(w->format, fatbin::ImageFormat::Wrapper);
  EXPECT_EQ(w->bytes.data(), fb.data());
  EXPECT_EQ(w->bytes.size(), fb.size());

  auto b = fatbin::classify_memory_image(fb.data());
  ASSERT_TRUE(b);
  EXPECT_EQ(b->format, fatbin::ImageFormat::Fatbin);

  auto t = fatbin::classify_memory_image(kPtx);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->format, fatbin::ImageFormat::Ptx);
  EXPECT_EQ(t->bytes.size(), strlen(kPtx));

  wrapper.version = 7;
  EXPECT_FALSE(fatbin::classify_memory_image(&wrapper));
  EXPECT_FALSE(fatbin::classify_memory_image(nullptr));
  const char junk[] = "\x01\x02\x03\x04garbage";
  EXPECT_FALSE(fatbin::classify_memory_image(junk));
}
