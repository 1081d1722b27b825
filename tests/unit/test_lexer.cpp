#include <gtest/gtest.h>

#include <vector>

#include "ptx/lexer.h"

using namespace mimic::ptx;

namespace {

std::vector<Token> lex_all(std::string_view s) {
  Lexer lx(s);
  std::vector<Token> out;
  while (lx.peek().kind != TokenKind::End)
    out.push_back(lx.next());
  return out;
}

} // namespace

TEST(Lexer, SplitsInstructionIntoOpcodeModifiersAndOperands) {
  auto t = lex_all("ld.global.nc.L2::128B.v4.f32 {%f1, %f2}, [%rd1+16];");
  ASSERT_GE(t.size(), 8u);
  EXPECT_EQ(t[0].kind, TokenKind::Identifier);
  EXPECT_EQ(t[0].text, "ld");
  EXPECT_EQ(t[1].text, ".global");
  EXPECT_EQ(t[3].text, ".L2::128B");
  EXPECT_EQ(t[3].kind, TokenKind::DotWord);
  EXPECT_EQ(t[5].text, ".f32");
  EXPECT_TRUE(t[6].is_punct('{'));
  EXPECT_EQ(t[7].text, "%f1");
}

TEST(Lexer, Numbers) {
  auto t = lex_all("0x1F 017 0b101 42U 0f3F800000 0d3FF0000000000000 1.5 2e10 9.0");
  std::vector<TokenKind> kinds{TokenKind::Integer, TokenKind::Integer, TokenKind::Integer, TokenKind::Integer,
                               TokenKind::Float,   TokenKind::Float,   TokenKind::Float,   TokenKind::Float,
                               TokenKind::Float};
  ASSERT_EQ(t.size(), kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i)
    EXPECT_EQ(t[i].kind, kinds[i]) << t[i].text;
}

TEST(Lexer, MalformedNumberIsOneInvalidToken) {
  auto t = lex_all("12abc ;");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].kind, TokenKind::Invalid);
  EXPECT_EQ(t[0].text, "12abc");
}

TEST(Lexer, SkipsCommentsAndTracksLinesAndColumns) {
  auto t = lex_all("// line one\n/* two\nthree */  mov.u32 %r1, 1;\n\tret;");
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t[0].text, "mov");
  EXPECT_EQ(t[0].line, 3u);
  EXPECT_EQ(t[0].column, 11u);
  EXPECT_EQ(t.back().line, 4u);
}

TEST(Lexer, TwoCharacterOperatorsAndRegisterRanges) {
  auto t = lex_all(".reg .b32 %r<10>; (1 << 3) != 2");
  std::vector<std::string_view> texts;
  for (auto& x : t)
    texts.push_back(x.text);
  std::vector<std::string_view> expect{".reg", ".b32", "%r", "<", "10", ">", ";", "(", "1", "<<", "3", ")", "!=", "2"};
  EXPECT_EQ(texts, expect);
}

TEST(Lexer, StringsAndUnterminatedStrings) {
  auto t = lex_all(".pragma \"nounroll\";");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1].kind, TokenKind::String);
  auto u = lex_all(".file 1 \"abc");
  EXPECT_EQ(u.back().kind, TokenKind::Invalid);
}

TEST(Lexer, LonePercentIsAnOperator) {
  auto t = lex_all("(7 % 3)");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_TRUE(t[2].kind == TokenKind::Punct && t[2].text == "%");
}
