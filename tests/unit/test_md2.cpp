#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "support/md2.h"

namespace {

std::string md2_hex(const std::string& s) {
  mimic::Md2 md;
  md.update(s.data(), s.size());
  auto d = md.finish();
  std::string out;
  char buf[3];
  for (uint8_t b : d) {
    snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

} // namespace

// The test suite of RFC 1319, appendix A.5.
TEST(Md2, MatchesRfc1319TestSuite) {
  EXPECT_EQ(md2_hex(""), "8350e5a3e24c153df2275c9f80692773");
  EXPECT_EQ(md2_hex("a"), "32ec01ec4a6dac72c0ab96fb34c0b5d1");
  EXPECT_EQ(md2_hex("abc"), "da853b0d3f88d99b30283a69e6ded6bb");
  EXPECT_EQ(md2_hex("message digest"), "ab4f496bfb2a530b219ff33031fe06b0");
  EXPECT_EQ(md2_hex("abcdefghijklmnopqrstuvwxyz"), "4e8ddff3650292ab5a4108c3aa47940b");
  EXPECT_EQ(md2_hex("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
            "da33def2a42df13975352846c30338cd");
  EXPECT_EQ(md2_hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
            "d5976f79d83d3a0dc9806c3c66f3efd8");
}

TEST(Md2, IncrementalUpdatesMatchOneShot) {
  mimic::Md2 a, b;
  std::string s = "The quick brown fox jumps over the lazy dog, in pieces of odd sizes.";
  a.update(s.data(), s.size());
  for (size_t i = 0; i < s.size(); i += 7)
    b.update(s.data() + i, std::min<size_t>(7, s.size() - i));
  EXPECT_EQ(a.finish(), b.finish());
}
