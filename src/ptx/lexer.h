// PTX tokens. The lexer works on demand over the source text (no token array), tracks
// line and column for messages, and never reads past the end of its input.
#pragma once

#include <cstdint>
#include <string_view>

namespace mimic::ptx {

enum class TokenKind : uint8_t {
  End,
  Identifier, // mov, %r1, $L__BB0_1, _Z3fooPf, _
  DotWord,    // .u32, .shared::cta, .L2::128B, .1d (text includes the dot)
  Integer,    // 12, 0x1F, 017, 0b101, with optional U suffix
  Float,      // 0f3F800000, 0d..., 1.5, 2e10
  String,     // "text" (text includes the quotes)
  Punct,      // one of , ; : ( ) [ ] { } < > + - * / % ! ~ & | ^ @ = ? and << >> && || == != <= >=
  Invalid,    // a character that starts no token
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string_view text;
  uint32_t line = 0;
  uint32_t column = 0;

  bool is(TokenKind k, std::string_view t) const { return kind == k && text == t; }
  bool is_punct(char c) const { return kind == TokenKind::Punct && text.size() == 1 && text[0] == c; }
};

std::string_view token_kind_name(TokenKind k);

class Lexer {
public:
  explicit Lexer(std::string_view source) : src_(source), pos_(0) { advance(); }

  const Token& peek() const { return current_; }
  Token next() {
    Token t = current_;
    previous_end_ = t;
    previous_end_.text = t.text.substr(t.text.size()); // empty, just past the token
    previous_end_.column = t.column + uint32_t(t.text.size());
    advance();
    return t;
  }
  // An empty token just past the last one consumed, to report a missing ';' on the
  // line it belongs to rather than at the start of the next line.
  const Token& previous_end() const { return previous_end_; }
  // A second token of lookahead (computed on demand, not cached).
  Token peek2() const {
    Lexer copy = *this;
    copy.advance();
    return copy.current_;
  }
  // Byte offset just past the current token (for raw scans such as .loc tails).
  size_t offset() const { return pos_; }
  std::string_view source() const { return src_; }
  bool newline_before_current() const { return newline_before_; }

private:
  void advance();
  void skip_space_and_comments();
  void lex_number(size_t start);

  std::string_view src_;
  size_t pos_;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
  bool newline_before_ = false;
  Token current_;
  Token previous_end_;
};

} // namespace mimic::ptx
