#include <gtest/gtest.h>

#include "fatbin/select.h"
#include "fatbin_builder.h"

using namespace mimic::fatbin;
using mimic::fatbin::Compression;

namespace {

PtxCandidate cand(size_t index, const char* target, unsigned major = 9, unsigned minor = 0) {
  return {index, *parse_target_name(target), major, minor};
}

} // namespace

TEST(Select, ParsesTargetNames) {
  auto t = parse_target_name("sm_90a");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->sm, 90u);
  EXPECT_EQ(t->variant, 'a');
  EXPECT_EQ(parse_target_name("compute_75")->sm, 75u);
  EXPECT_EQ(parse_target_name("sm_100f")->variant, 'f');
  EXPECT_FALSE(parse_target_name("sm_"));
  EXPECT_FALSE(parse_target_name("sm_90x"));
  EXPECT_FALSE(parse_target_name("gfx1100"));
}

TEST(Select, PicksHighestTargetNotAboveDevice) {
  std::vector<PtxCandidate> c{cand(0, "sm_75"), cand(1, "sm_86"), cand(2, "sm_90"), cand(3, "sm_120")};
  auto r = select_ptx(c, 89);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->index, 1u);
  EXPECT_FALSE(r->above_device);
  EXPECT_EQ(select_ptx(c, 120)->index, 3u);
}

TEST(Select, ArchSpecificOnlyOnExactMatch) {
  std::vector<PtxCandidate> c{cand(0, "sm_80"), cand(1, "sm_90a")};
  EXPECT_EQ(select_ptx(c, 100)->index, 0u);
  EXPECT_EQ(select_ptx(c, 90)->index, 1u);
}

TEST(Select, FamilyWithinMajorVersion) {
  std::vector<PtxCandidate> c{cand(0, "sm_80"), cand(1, "sm_100f")};
  EXPECT_EQ(select_ptx(c, 103)->index, 1u);
  EXPECT_EQ(select_ptx(c, 120)->index, 0u);
}

TEST(Select, GenericBeatsSpecificOnTieThenNewerIsa) {
  std::vector<PtxCandidate> c{cand(0, "sm_90a"), cand(1, "sm_90", 8, 0), cand(2, "sm_90", 8, 5)};
  EXPECT_EQ(select_ptx(c, 90)->index, 2u);
}

TEST(Select, FallsBackToLowestGenericAboveDevice) {
  std::vector<PtxCandidate> c{cand(0, "sm_120"), cand(1, "sm_100"), cand(2, "sm_90a")};
  auto r = select_ptx(c, 86);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->index, 1u);
  EXPECT_TRUE(r->above_device);
}

TEST(Select, FallsBackToArchSpecificWhenNothingElse) {
  std::vector<PtxCandidate> c{cand(0, "sm_100a"), cand(1, "sm_90a"), cand(2, "sm_100f")};
  auto r = select_ptx(c, 86);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->index, 2u); // family-specific before architecture-specific
  EXPECT_TRUE(r->above_device);
  std::vector<PtxCandidate> a{cand(0, "sm_100a"), cand(1, "sm_90a")};
  EXPECT_EQ(select_ptx(a, 86)->index, 1u);
}

TEST(Select, FailsClearlyWhenNothingFits) {
  auto none = select_ptx({}, 86);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("no PTX"), std::string::npos);
}

TEST(Select, ScansHeaderWithoutFullParse) {
  auto h = scan_ptx_header("//\n// Generated\n.version 8.5\n.target sm_90a, texmode_independent\n");
  EXPECT_EQ(h.version_major, 8u);
  EXPECT_EQ(h.version_minor, 5u);
  ASSERT_TRUE(h.target);
  EXPECT_EQ(h.target->sm, 90u);
  EXPECT_EQ(h.target->variant, 'a');
}

TEST(Select, CandidatesComeFromEntryHeaders) {
  using namespace mimic::test;
  const char* ptx = ".version 9.0\n.target sm_90a\n";
  Bytes fb = build_fatbin({{2, 90, 1, 8, Compression::None, "\x7f" "ELF", ""},
                           {1, 80, 9, 0, Compression::None, ptx, ""},
                           {1, 90, 9, 0, Compression::None, ptx, ""}});
  // Mark the last entry architecture-specific, as nvcc does for sm_90a.
  auto parsed = parse_fatbin(fb);
  ASSERT_TRUE(parsed);
  Fatbin f = parsed.value();
  f.entries[2].flags |= kFlagArchSpecific;
  auto c = ptx_candidates(f);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].index, 1u);
  EXPECT_EQ(c[1].target.name(), "sm_90a");
  EXPECT_EQ(select_ptx(c, 90)->index, 2u);
  EXPECT_EQ(select_ptx(c, 89)->index, 1u);
}
