#include "ptx/lexer.h"

namespace mimic::ptx {

namespace {

// Character classes, one table lookup each.
enum : uint8_t { kIdentStart = 1, kIdentFollow = 2, kDigit = 4, kHex = 8, kSpace = 16 };

struct CharTable {
  uint8_t bits[256] = {};
  constexpr CharTable() {
    for (int c = 'a'; c <= 'z'; ++c)
      bits[c] |= kIdentStart | kIdentFollow;
    for (int c = 'A'; c <= 'Z'; ++c)
      bits[c] |= kIdentStart | kIdentFollow;
    for (int c = '0'; c <= '9'; ++c)
      bits[c] |= kIdentFollow | kDigit | kHex;
    for (int c = 'a'; c <= 'f'; ++c)
      bits[c] |= kHex;
    for (int c = 'A'; c <= 'F'; ++c)
      bits[c] |= kHex;
    bits['_'] |= kIdentStart | kIdentFollow;
    bits['$'] |= kIdentStart | kIdentFollow;
    bits['%'] |= kIdentStart;
    bits[' '] |= kSpace;
    bits['\t'] |= kSpace;
    bits['\r'] |= kSpace;
    bits['\n'] |= kSpace;
    bits['\f'] |= kSpace;
    bits['\v'] |= kSpace;
  }
};
constexpr CharTable kChars;

inline bool is(uint8_t c, uint8_t cls) { return kChars.bits[c] & cls; }

} // namespace

std::string_view token_kind_name(TokenKind k) {
  switch (k) {
  case TokenKind::End:
    return "end of input";
  case TokenKind::Identifier:
    return "identifier";
  case TokenKind::DotWord:
    return "directive or modifier";
  case TokenKind::Integer:
    return "integer";
  case TokenKind::Float:
    return "floating-point constant";
  case TokenKind::String:
    return "string";
  case TokenKind::Punct:
    return "punctuation";
  case TokenKind::Invalid:
    return "invalid character";
  }
  return "?";
}

void Lexer::skip_space_and_comments() {
  const size_t n = src_.size();
  newline_before_ = false;
  while (pos_ < n) {
    uint8_t c = src_[pos_];
    if (c == '\n') {
      ++pos_;
      ++line_;
      line_start_ = pos_;
      newline_before_ = true;
    } else if (is(c, kSpace) || c == 0) {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < n && src_[pos_ + 1] == '/') {
      pos_ += 2;
      while (pos_ < n && src_[pos_] != '\n')
        ++pos_;
    } else if (c == '/' && pos_ + 1 < n && src_[pos_ + 1] == '*') {
      size_t end = src_.find("*/", pos_ + 2);
      if (end == std::string_view::npos)
        return; // unterminated: advance() makes it an Invalid token, reported where it starts
      for (size_t p = pos_; p < end; ++p) {
        if (src_[p] == '\n') {
          ++line_;
          line_start_ = p + 1;
          newline_before_ = true;
        }
      }
      pos_ = end + 2;
    } else {
      return;
    }
  }
}

void Lexer::lex_number(size_t start) {
  const size_t n = src_.size();
  size_t p = start;
  TokenKind kind = TokenKind::Integer;
  auto hex_run = [&](size_t q) {
    while (q < n && is(src_[q], kHex))
      ++q;
    return q;
  };
  if (src_[p] == '0' && p + 1 < n && (src_[p + 1] == 'x' || src_[p + 1] == 'X')) {
    p = hex_run(p + 2);
  } else if (src_[p] == '0' && p + 1 < n &&
             (src_[p + 1] == 'f' || src_[p + 1] == 'F' || src_[p + 1] == 'd' || src_[p + 1] == 'D') &&
             p + 2 < n && is(src_[p + 2], kHex)) {
    p = hex_run(p + 2);
    kind = TokenKind::Float;
  } else if (src_[p] == '0' && p + 1 < n && (src_[p + 1] == 'b' || src_[p + 1] == 'B') && p + 2 < n &&
             (src_[p + 2] == '0' || src_[p + 2] == '1')) {
    p += 2;
    while (p < n && (src_[p] == '0' || src_[p] == '1'))
      ++p;
  } else {
    while (p < n && is(src_[p], kDigit))
      ++p;
    if (p < n && src_[p] == '.' && !(p + 1 < n && is(src_[p + 1], kIdentStart))) {
      kind = TokenKind::Float;
      ++p;
      while (p < n && is(src_[p], kDigit))
        ++p;
    }
    if (p < n && (src_[p] == 'e' || src_[p] == 'E')) {
      size_t q = p + 1;
      if (q < n && (src_[q] == '+' || src_[q] == '-'))
        ++q;
      if (q < n && is(src_[q], kDigit)) {
        kind = TokenKind::Float;
        p = q;
        while (p < n && is(src_[p], kDigit))
          ++p;
      }
    }
  }
  if (kind == TokenKind::Integer && p < n && src_[p] == 'U')
    ++p;
  // A number glued to letters (12abc) is one malformed token, not two.
  while (p < n && is(src_[p], kIdentFollow)) {
    kind = TokenKind::Invalid;
    ++p;
  }
  current_.kind = kind;
  current_.text = src_.substr(start, p - start);
  pos_ = p;
}

void Lexer::advance() {
  skip_space_and_comments();
  const size_t n = src_.size();
  current_.line = line_;
  current_.column = uint32_t(pos_ - line_start_ + 1);
  if (pos_ >= n) {
    current_.kind = TokenKind::End;
    current_.text = {};
    return;
  }
  size_t start = pos_;
  uint8_t c = src_[pos_];

  if (is(c, kIdentStart)) {
    size_t p = pos_ + 1;
    while (p < n && is(src_[p], kIdentFollow))
      ++p;
    if (c == '%' && p == pos_ + 1) { // a lone '%' is the remainder operator
      current_.kind = TokenKind::Punct;
      current_.text = src_.substr(start, 1);
      pos_ = p;
      return;
    }
    current_.kind = TokenKind::Identifier;
    current_.text = src_.substr(start, p - start);
    pos_ = p;
    return;
  }
  if (c == '.' && pos_ + 1 < n && is(src_[pos_ + 1], kIdentFollow)) {
    size_t p = pos_ + 1;
    for (;;) {
      while (p < n && is(src_[p], kIdentFollow))
        ++p;
      if (p + 2 < n && src_[p] == ':' && src_[p + 1] == ':' && is(src_[p + 2], kIdentFollow)) {
        p += 2;
        continue;
      }
      break;
    }
    current_.kind = TokenKind::DotWord;
    current_.text = src_.substr(start, p - start);
    pos_ = p;
    return;
  }
  if (is(c, kDigit)) {
    lex_number(start);
    return;
  }
  if (c == '"') {
    size_t p = pos_ + 1;
    while (p < n && src_[p] != '"' && src_[p] != '\n') {
      if (src_[p] == '\\' && p + 1 < n)
        ++p;
      ++p;
    }
    if (p < n && src_[p] == '"') {
      current_.kind = TokenKind::String;
      current_.text = src_.substr(start, p + 1 - start);
      pos_ = p + 1;
    } else {
      current_.kind = TokenKind::Invalid; // unterminated string
      current_.text = src_.substr(start, p - start);
      pos_ = p;
    }
    return;
  }
  if (c == '/' && pos_ + 1 < n && src_[pos_ + 1] == '*') { // a comment that never ends
    current_.kind = TokenKind::Invalid;
    current_.text = src_.substr(start);
    pos_ = n;
    return;
  }
  // Punctuation, two-character operators first.
  if (pos_ + 1 < n) {
    char d = src_[pos_ + 1];
    bool two = (c == '<' && d == '<') || (c == '>' && d == '>') || (c == '&' && d == '&') ||
               (c == '|' && d == '|') || (c == '=' && d == '=') || (c == '!' && d == '=') ||
               (c == '<' && d == '=') || (c == '>' && d == '=');
    if (two) {
      current_.kind = TokenKind::Punct;
      current_.text = src_.substr(start, 2);
      pos_ += 2;
      return;
    }
  }
  switch (c) {
  case ',': case ';': case ':': case '(': case ')': case '[': case ']': case '{': case '}':
  case '<': case '>': case '+': case '-': case '*': case '/': case '!': case '~': case '&':
  case '|': case '^': case '@': case '=': case '?': case '.':
    current_.kind = TokenKind::Punct;
    current_.text = src_.substr(start, 1);
    pos_ += 1;
    return;
  default:
    current_.kind = TokenKind::Invalid;
    current_.text = src_.substr(start, 1);
    pos_ += 1;
    return;
  }
}

} // namespace mimic::ptx
