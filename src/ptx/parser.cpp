// Module structure: directives, declarations, functions and their bodies.
#include <charconv>
#include <cstring>

#include "ptx/parser_impl.h"

namespace mimic::ptx {

std::string Diagnostic::format() const {
  std::string out = origin + ":" + std::to_string(line) + ":" + std::to_string(column) +
                    ": error: " + message;
  if (!function.empty())
    out += " (in function '" + function + "')";
  if (!source_line.empty()) {
    out += "\n  " + source_line + "\n  ";
    for (uint32_t i = 1; i < column && i <= source_line.size(); ++i)
      out += source_line[i - 1] == '\t' ? '\t' : ' ';
    out += '^';
  }
  return out;
}

namespace detail {

std::string quote(std::string_view text) {
  if (text.size() > 60)
    return "'" + std::string(text.substr(0, 57)) + "...'";
  return "'" + std::string(text) + "'";
}

void Parser::fail(const Token& at, const std::string& message) {
  Diagnostic d;
  d.origin = options_.origin;
  d.line = at.line;
  d.column = at.column;
  d.function = current_function_;
  d.message = message;
  // The source line: from the token back to the previous newline, forward to the next.
  std::string_view src = m_.source;
  size_t pos = at.text.data() ? size_t(at.text.data() - src.data()) : src.size();
  if (pos > src.size())
    pos = src.size();
  size_t begin = src.rfind('\n', pos == 0 ? 0 : pos - 1);
  begin = (begin == std::string_view::npos || pos == 0) ? 0 : begin + 1;
  if (pos > 0 && src[pos - 1] == '\n')
    begin = pos;
  size_t end = src.find('\n', pos);
  if (end == std::string_view::npos)
    end = src.size();
  std::string_view text = src.substr(begin, std::min<size_t>(end - begin, 200));
  d.source_line.assign(text.begin(), text.end());
  for (char& c : d.source_line)
    if ((unsigned char)c < 0x20 && c != '\t')
      c = ' ';
  result_.errors.push_back(std::move(d));
  throw SyntaxError{};
}

// How a message names a token: quoted text, or what is wrong with it.
std::string describe(const Token& t) {
  if (t.kind == TokenKind::End)
    return "the end of the input";
  if (t.kind != TokenKind::Invalid)
    return quote(t.text);
  if (t.text.starts_with('"'))
    return "an unterminated string (a string must close on its line)";
  if (t.text.starts_with("/*"))
    return "an unterminated comment ('*/' missing)";
  return "the malformed text " + quote(t.text);
}

void Parser::fail_expected(const std::string& expected) {
  const Token& t = lex_.peek();
  fail(t, "expected " + expected + ", found " + describe(t));
}

Token Parser::expect_punct(char c, const char* context) {
  if (!lex_.peek().is_punct(c))
    fail_expected(std::string("'") + c + "' " + context);
  return lex_.next();
}

Token Parser::expect_identifier(const char* context) {
  if (lex_.peek().kind != TokenKind::Identifier)
    fail_expected(std::string("a name ") + context);
  return lex_.next();
}

Modifier Parser::dot_word(const Token& t) {
  if (auto m = lookup_modifier(t.text.substr(1)))
    return *m;
  fail(t, "unknown directive or modifier " + quote(t.text));
}

Name Parser::intern_copy(std::string_view s) {
  char* p = static_cast<char*>(arena_.allocate(s.size() + 1, 1));
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = 0;
  return {p, s.size()};
}

uint64_t Parser::parse_uint(const Token& t, const char* what) {
  if (t.kind != TokenKind::Integer)
    fail(t, std::string("expected ") + what + ", found " + describe(t));
  Operand v = make_integer(t);
  if (v.i < 0 && !v.unsigned_literal)
    fail(t, std::string(what) + " must not be negative");
  return v.u;
}

void Parser::parse_module() {
  while (lex_.peek().kind != TokenKind::End)
    parse_top_level();
}

void Parser::parse_top_level() {
  const Token& t = lex_.peek();
  if (t.kind != TokenKind::DotWord)
    fail_expected("a directive (.version, .target, .entry, .func, a variable declaration ...)");
  switch (dot_word(t)) {
  case Modifier::Version:
    return parse_version();
  case Modifier::Target:
    return parse_target();
  case Modifier::AddressSize: {
    lex_.next();
    Token n = lex_.next();
    uint64_t v = parse_uint(n, "an address size");
    if (v != 32 && v != 64)
      fail(n, "address size must be 32 or 64, not " + std::to_string(v));
    m_.address_size = uint32_t(v);
    return;
  }
  case Modifier::File:
    return parse_file();
  case Modifier::Section:
    return parse_section();
  case Modifier::Alias:
    return parse_alias();
  case Modifier::Loc: {
    TopLevel item;
    item.kind = DirectiveKind::Loc;
    item.loc = parse_loc();
    m_.items.push_back(item);
    return;
  }
  case Modifier::Pragma: {
    lex_.next();
    if (lex_.peek().kind != TokenKind::String)
      fail_expected("a string after .pragma");
    Token s = lex_.next();
    expect_punct(';', "after .pragma");
    TopLevel item;
    item.kind = DirectiveKind::Pragma;
    item.text = {s.text.data(), uint32_t(s.text.size())};
    m_.items.push_back(item);
    return;
  }
  default:
    return parse_declaration_or_function();
  }
}

void Parser::parse_version() {
  lex_.next();
  Token v = lex_.next();
  std::string_view text = v.text;
  size_t dot = text.find('.');
  if (v.kind != TokenKind::Float || dot == std::string_view::npos)
    fail(v, "expected a version such as 9.0 after .version, found " + quote(text));
  auto major = std::from_chars(text.data(), text.data() + dot, m_.version_major);
  auto minor = std::from_chars(text.data() + dot + 1, text.data() + text.size(), m_.version_minor);
  if (major.ec != std::errc() || minor.ec != std::errc() || minor.ptr != text.data() + text.size())
    fail(v, "malformed .version " + quote(text));
  if (m_.version_major == 0 || m_.version_major > 9)
    fail(v, "PTX ISA version " + std::string(text) + " is not supported (1.0 to 9.x are)");
}

void Parser::parse_target() {
  lex_.next();
  m_.target.push_back(expect_identifier("after .target").text);
  while (accept_punct(','))
    m_.target.push_back(expect_identifier("in the .target list").text);
}

void Parser::parse_file() {
  lex_.next();
  auto* f = arena_.make<FileDirective>();
  f->index = uint32_t(parse_uint(lex_.next(), "a file number"));
  if (lex_.peek().kind != TokenKind::String)
    fail_expected("a quoted file name after .file");
  Token s = lex_.next();
  f->path = s.text.substr(1, s.text.size() - 2);
  if (accept_punct(',')) {
    f->has_timestamp = true;
    f->timestamp = parse_uint(lex_.next(), "a timestamp");
    expect_punct(',', "between the timestamp and the size in .file");
    f->size = parse_uint(lex_.next(), "a file size");
  }
  TopLevel item;
  item.kind = DirectiveKind::File;
  item.file = f;
  m_.items.push_back(item);
}

void Parser::parse_alias() {
  lex_.next();
  Token a = expect_identifier("after .alias");
  expect_punct(',', "between the names of .alias");
  Token b = expect_identifier("after ',' in .alias");
  expect_punct(';', "after .alias");
  TopLevel item;
  item.kind = DirectiveKind::Alias;
  item.alias = {a.text.data(), uint32_t(a.text.size()), b.text.data(), uint32_t(b.text.size())};
  m_.items.push_back(item);
}

const Loc* Parser::parse_loc() {
  lex_.next();
  auto* loc = arena_.make<Loc>();
  loc->file = uint32_t(parse_uint(lex_.next(), "a file number in .loc"));
  loc->line = uint32_t(parse_uint(lex_.next(), "a line number in .loc"));
  loc->column = uint32_t(parse_uint(lex_.next(), "a column number in .loc"));
  while (lex_.peek().is_punct(',')) {
    lex_.next();
    Token key = expect_identifier("(function_name or inlined_at) in .loc");
    if (key.text == "function_name") {
      loc->has_function_name = true;
      loc->function_name = parse_expression();
      check_printed_depth(loc->function_name, key);
    } else if (key.text == "inlined_at") {
      loc->has_inlined_at = true;
      loc->inlined_file = uint32_t(parse_uint(lex_.next(), "a file number after inlined_at"));
      loc->inlined_line = uint32_t(parse_uint(lex_.next(), "a line number after inlined_at"));
      loc->inlined_column = uint32_t(parse_uint(lex_.next(), "a column number after inlined_at"));
    } else {
      fail(key, "unknown .loc attribute " + quote(key.text) + " (function_name or inlined_at expected)");
    }
  }
  return loc;
}

void Parser::parse_section() {
  lex_.next();
  Token name = lex_.next();
  if (name.kind != TokenKind::DotWord && name.kind != TokenKind::Identifier)
    fail(name, "expected a section name after .section, found " + describe(name));
  expect_punct('{', "to open the .section body");
  std::vector<SectionItem> items;
  while (!lex_.peek().is_punct('}')) {
    Token t = lex_.next();
    SectionItem item{};
    if (t.kind == TokenKind::Identifier) {
      expect_punct(':', "after a label in a section");
      item.kind = SectionItem::Kind::Label;
      item.label = t.text;
    } else if (t.kind == TokenKind::DotWord) {
      Modifier type = dot_word(t);
      if (type != Modifier::B8 && type != Modifier::B16 && type != Modifier::B32 && type != Modifier::B64)
        fail(t, "section data must be .b8, .b16, .b32 or .b64, not " + quote(t.text));
      item.kind = SectionItem::Kind::Data;
      item.type = type;
      std::vector<Operand> values{parse_section_value()};
      while (accept_punct(','))
        values.push_back(parse_section_value());
      item.values = store(values);
    } else {
      fail(t, "expected a label or .b8/.b16/.b32/.b64 data in a section, found " + describe(t));
    }
    items.push_back(item);
  }
  lex_.next();
  auto* sec = arena_.make<Section>();
  sec->name = name.text;
  sec->items = arena_.copy(std::span<const SectionItem>(items));
  TopLevel item;
  item.kind = DirectiveKind::Section;
  item.section = sec;
  m_.items.push_back(item);
}

static bool is_linkage(Modifier m) {
  return m == Modifier::Visible || m == Modifier::Extern || m == Modifier::Weak || m == Modifier::Common;
}

static Linkage to_linkage(Modifier m) {
  switch (m) {
  case Modifier::Visible:
    return Linkage::Visible;
  case Modifier::Extern:
    return Linkage::Extern;
  case Modifier::Weak:
    return Linkage::Weak;
  case Modifier::Common:
    return Linkage::Common;
  default:
    return Linkage::None;
  }
}

void Parser::parse_declaration_or_function() {
  Linkage linkage = Linkage::None;
  SourceLoc loc{lex_.peek().line, lex_.peek().column};
  while (lex_.peek().kind == TokenKind::DotWord) {
    Modifier m = dot_word(lex_.peek());
    if (!is_linkage(m))
      break;
    if (linkage != Linkage::None)
      fail(lex_.peek(), "a declaration takes one linkage directive, found a second: " + quote(lex_.peek().text));
    linkage = to_linkage(m);
    lex_.next();
  }
  const Token& t = lex_.peek();
  if (t.kind != TokenKind::DotWord)
    fail_expected(".entry, .func or a variable declaration");
  Modifier m = dot_word(t);
  if (m == Modifier::Entry || m == Modifier::Func)
    return parse_function(linkage, loc);
  if (!is_state_space(m))
    fail(t, "unexpected " + quote(t.text) + " at module level");
  std::vector<VarDecl> decls;
  parse_var_declarations(linkage, decls);
  for (const VarDecl& d : decls) {
    TopLevel item;
    item.kind = DirectiveKind::Var;
    item.var = arena_.make<VarDecl>(d);
    m_.items.push_back(item);
  }
}

std::span<const VarAttribute> Parser::parse_attributes() {
  std::vector<VarAttribute> attrs;
  while (lex_.peek().kind == TokenKind::DotWord && dot_word(lex_.peek()) == Modifier::Attribute) {
    lex_.next();
    expect_punct('(', "after .attribute");
    do {
      Token a = lex_.next();
      if (a.kind != TokenKind::DotWord)
        fail(a, "expected an attribute such as .managed or .unified, found " + describe(a));
      VarAttribute attr{dot_word(a), {}};
      if (accept_punct('(')) {
        std::vector<uint64_t> args{parse_uint(lex_.next(), "an attribute argument")};
        while (accept_punct(','))
          args.push_back(parse_uint(lex_.next(), "an attribute argument"));
        expect_punct(')', "to close the attribute arguments");
        attr.args = arena_.copy(std::span<const uint64_t>(args));
      }
      attrs.push_back(attr);
    } while (accept_punct(','));
    expect_punct(')', "to close .attribute");
  }
  return arena_.copy(std::span<const VarAttribute>(attrs));
}

VarDecl Parser::parse_decl_prefix(Linkage linkage, bool in_param_list) {
  VarDecl d;
  d.linkage = linkage;
  d.loc = {lex_.peek().line, lex_.peek().column};
  std::vector<VarAttribute> attrs;
  while (lex_.peek().kind == TokenKind::DotWord) {
    Token t = lex_.peek();
    Modifier m = dot_word(t);
    if (m == Modifier::Attribute) {
      auto more = parse_attributes();
      attrs.insert(attrs.end(), more.begin(), more.end());
      continue;
    }
    lex_.next();
    if (m == Modifier::Align) {
      uint64_t a = parse_uint(lex_.next(), "an alignment after .align");
      if (a == 0 || (a & (a - 1)) || a > (1u << 30))
        fail(t, "alignment must be a power of two, not " + std::to_string(a));
      (d.ptr ? d.ptr_align : d.align) = uint32_t(a);
    } else if (m == Modifier::Ptr) {
      if (d.ptr)
        fail(t, "duplicate .ptr");
      d.ptr = true;
    } else if (is_state_space(m)) {
      if (d.ptr && d.ptr_space == Modifier::None && d.space != Modifier::None)
        d.ptr_space = m;
      else if (d.space == Modifier::None)
        d.space = m;
      else
        fail(t, "a declaration takes one state space, found a second: " + quote(t.text));
    } else if (is_vector(m)) {
      if (d.vector != Modifier::None)
        fail(t, "duplicate vector width " + quote(t.text));
      d.vector = m;
    } else if (is_type(m)) {
      if (d.type != Modifier::None)
        fail(t, "a declaration takes one type, found a second: " + quote(t.text));
      d.type = m;
    } else {
      fail(t, quote(t.text) + " cannot appear in a declaration");
    }
  }
  if (d.space == Modifier::None)
    fail_expected("a state space (.reg, .param, .global, .shared ...)");
  if (d.type == Modifier::None)
    fail_expected("a type (.b32, .f32, .u64 ...) in the declaration");
  d.attributes = arena_.copy(std::span<const VarAttribute>(attrs));
  (void)in_param_list;
  return d;
}

void Parser::parse_decl_rest(VarDecl& d, bool in_param_list) {
  Token name = lex_.peek();
  if (name.kind != TokenKind::Identifier)
    fail_expected("a name in the declaration");
  lex_.next();
  d.name = name.text;
  d.loc = {name.line, name.column};
  if (!in_param_list && lex_.peek().is_punct('<')) {
    lex_.next();
    d.has_range = true;
    uint64_t n = parse_uint(lex_.next(), "a register count");
    if (n > (1u << 24))
      fail(name, "register range of " + std::to_string(n) + " is too large");
    d.range = uint32_t(n);
    expect_punct('>', "to close the register range");
  }
  std::vector<int64_t> dims;
  while (lex_.peek().is_punct('[')) {
    Token open = lex_.next();
    if (accept_punct(']')) {
      dims.push_back(-1);
      continue;
    }
    Operand n = parse_expression();
    if (n.kind != OperandKind::Int || n.i < 0)
      fail(open, "array size must be a non-negative integer constant");
    dims.push_back(n.i);
    expect_punct(']', "to close the array size");
  }
  d.dims = arena_.copy(std::span<const int64_t>(dims));
  if (!in_param_list && lex_.peek().is_punct('=')) {
    lex_.next();
    Operand init = parse_initializer();
    d.init = arena_.make<Operand>(init);
  }
}

void Parser::parse_var_declarations(Linkage linkage, std::vector<VarDecl>& out) {
  VarDecl prefix = parse_decl_prefix(linkage, false);
  do {
    VarDecl d = prefix;
    parse_decl_rest(d, false);
    out.push_back(d);
  } while (accept_punct(','));
  expect_punct(';', "to end the declaration");
}

std::span<const VarDecl> Parser::parse_param_list() {
  expect_punct('(', "to open the parameter list");
  std::vector<VarDecl> params;
  if (!lex_.peek().is_punct(')')) {
    do {
      VarDecl d = parse_decl_prefix(Linkage::None, true);
      parse_decl_rest(d, true);
      params.push_back(d);
    } while (accept_punct(','));
  }
  expect_punct(')', "to close the parameter list");
  return arena_.copy(std::span<const VarDecl>(params));
}

std::span<const FunctionDirective> Parser::parse_function_directives() {
  std::vector<FunctionDirective> dirs;
  while (lex_.peek().kind == TokenKind::DotWord) {
    Token t = lex_.peek();
    Modifier m = dot_word(t);
    FunctionDirective d{m, {}, {}};
    std::vector<uint64_t> values;
    switch (m) {
    case Modifier::Maxntid:
    case Modifier::Reqntid:
    case Modifier::Reqnctapercluster:
      lex_.next();
      values.push_back(parse_uint(lex_.next(), "a dimension"));
      while (accept_punct(','))
        values.push_back(parse_uint(lex_.next(), "a dimension"));
      if (values.size() > 3)
        fail(t, quote(t.text) + " takes at most three dimensions");
      break;
    case Modifier::Minnctapersm:
    case Modifier::Maxnctapersm:
    case Modifier::Maxnreg:
    case Modifier::Maxclusterrank:
    case Modifier::AbiPreserve:
    case Modifier::AbiPreserveControl:
      lex_.next();
      values.push_back(parse_uint(lex_.next(), "a count"));
      break;
    case Modifier::Noreturn:
    case Modifier::Explicitcluster:
    case Modifier::Blocksareclusters:
      lex_.next();
      break;
    case Modifier::Pragma: {
      lex_.next();
      if (lex_.peek().kind != TokenKind::String)
        fail_expected("a string after .pragma");
      d.text = lex_.next().text;
      expect_punct(';', "after .pragma");
      break;
    }
    default:
      return arena_.copy(std::span<const FunctionDirective>(dirs));
    }
    d.values = arena_.copy(std::span<const uint64_t>(values));
    dirs.push_back(d);
  }
  return arena_.copy(std::span<const FunctionDirective>(dirs));
}

void Parser::parse_function(Linkage linkage, SourceLoc loc) {
  Token kw = lex_.next();
  auto* f = arena_.make<Function>();
  f->is_entry = dot_word(kw) == Modifier::Entry;
  f->linkage = linkage;
  f->loc = loc;
  if (!f->is_entry) {
    f->attributes = parse_attributes();
    if (lex_.peek().is_punct('(')) {
      f->has_returns = true;
      f->returns = parse_param_list();
    }
  }
  Token name = expect_identifier(f->is_entry ? "after .entry" : "after .func");
  f->name = name.text;
  current_function_ = std::string(name.text);
  if (lex_.peek().is_punct('(')) {
    f->has_params = true;
    f->params = parse_param_list();
  }
  f->directives = parse_function_directives();
  if (accept_punct(';')) {
    current_function_.clear();
    TopLevel item;
    item.kind = DirectiveKind::Function;
    item.function = f;
    m_.items.push_back(item);
    return;
  }
  if (!lex_.peek().is_punct('{'))
    fail_expected("'{' to open the body of '" + current_function_ + "' or ';' for a declaration");
  Lexer body_start = lex_;
  lex_.next();
  try {
    f->body = parse_block();
  } catch (const SyntaxError&) {
    FailedFunction failed{current_function_, f->is_entry, result_.errors.back()};
    result_.failed_functions.push_back(std::move(failed));
    // Resynchronise: find the brace that closes the body, counting from its start.
    lex_ = body_start;
    skip_function_body();
    current_function_.clear();
    return;
  }
  current_function_.clear();
  TopLevel item;
  item.kind = DirectiveKind::Function;
  item.function = f;
  m_.items.push_back(item);
}

void Parser::skip_function_body() {
  int depth = 0;
  for (;;) {
    Token t = lex_.next();
    if (t.kind == TokenKind::End) {
      current_function_.clear();
      fail(t, "the body of the function that failed to parse is never closed");
    }
    if (t.is_punct('{'))
      ++depth;
    else if (t.is_punct('}') && --depth == 0)
      return;
  }
}

const Block* Parser::parse_block() {
  DepthGuard guard(*this, lex_.peek());
  std::vector<Statement> statements;
  statements.reserve(64);
  for (;;) {
    const Token& t = lex_.peek();
    if (t.is_punct('}')) {
      lex_.next();
      break;
    }
    if (t.kind == TokenKind::End)
      fail(t, "the function body is not closed ('}' missing)");
    parse_statement(statements);
  }
  auto* b = arena_.make<Block>();
  b->statements = arena_.copy(std::span<const Statement>(statements));
  return b;
}

void Parser::parse_label_directive(Statement& s, Token label) {
  Token t = lex_.peek();
  Modifier m = dot_word(t);
  auto* labeled = arena_.make<LabeledDirective>();
  labeled->label = label.text;
  s.labeled = labeled;
  if (m == Modifier::Branchtargets || m == Modifier::Calltargets) {
    lex_.next();
    s.kind = m == Modifier::Branchtargets ? StatementKind::BranchTargets : StatementKind::CallTargets;
    std::vector<Name> targets{expect_identifier("in the target list").text};
    while (accept_punct(','))
      targets.push_back(expect_identifier("in the target list").text);
    expect_punct(';', "to end the target list");
    labeled->targets = arena_.copy(std::span<const Name>(targets));
    return;
  }
  if (m == Modifier::Callprototype) {
    lex_.next();
    s.kind = StatementKind::CallPrototype;
    auto* proto = arena_.make<CallPrototype>();
    if (lex_.peek().is_punct('(')) {
      proto->has_returns = true;
      proto->returns = parse_param_list();
    }
    Token underscore = expect_identifier("('_') in .callprototype");
    if (underscore.text != "_")
      fail(underscore, "a .callprototype names no function: expected '_', found " + quote(underscore.text));
    proto->params = parse_param_list();
    if (lex_.peek().kind == TokenKind::DotWord && dot_word(lex_.peek()) == Modifier::Noreturn) {
      lex_.next();
      proto->noreturn = true;
    }
    expect_punct(';', "to end the .callprototype");
    labeled->prototype = proto;
    return;
  }
  fail(t, quote(t.text) + " cannot follow a label (.branchtargets, .calltargets or .callprototype can)");
}

void Parser::parse_statement(std::vector<Statement>& out) {
  Token t = lex_.peek();
  Statement s;
  s.loc = {t.line, t.column};
  switch (t.kind) {
  case TokenKind::Punct:
    if (t.is_punct('{')) {
      lex_.next();
      s.kind = StatementKind::Block;
      s.block = parse_block();
      out.push_back(s);
      return;
    }
    if (t.is_punct('@')) {
      lex_.next();
      bool negated = accept_punct('!');
      Token guard = expect_identifier("(a predicate) after '@'");
      Token op = lex_.next();
      if (op.kind != TokenKind::Identifier)
        fail(op, "expected an instruction after the guard, found " + describe(op));
      s.kind = StatementKind::Instruction;
      s.instruction = parse_instruction(op, guard.text, negated, s.loc);
      out.push_back(s);
      return;
    }
    if (t.is_punct(';')) { // an empty statement
      lex_.next();
      return;
    }
    fail(t, "expected an instruction, a label or a declaration, found " + describe(t));
  case TokenKind::Identifier: {
    lex_.next();
    if (lex_.peek().is_punct(':')) {
      lex_.next();
      if (lex_.peek().kind == TokenKind::DotWord) {
        Modifier m = dot_word(lex_.peek());
        if (m == Modifier::Branchtargets || m == Modifier::Calltargets || m == Modifier::Callprototype) {
          parse_label_directive(s, t);
          out.push_back(s);
          return;
        }
      }
      s.kind = StatementKind::Label;
      s.text = {t.text.data(), uint32_t(t.text.size())};
      out.push_back(s);
      return;
    }
    s.kind = StatementKind::Instruction;
    s.instruction = parse_instruction(t, {}, false, s.loc);
    out.push_back(s);
    return;
  }
  case TokenKind::DotWord: {
    Modifier m = dot_word(t);
    if (m == Modifier::Pragma) {
      lex_.next();
      if (lex_.peek().kind != TokenKind::String)
        fail_expected("a string after .pragma");
      Token str = lex_.next();
      expect_punct(';', "after .pragma");
      s.kind = StatementKind::Pragma;
      s.text = {str.text.data(), uint32_t(str.text.size())};
      out.push_back(s);
      return;
    }
    if (m == Modifier::Loc) {
      s.kind = StatementKind::Loc;
      s.loc_directive = parse_loc();
      out.push_back(s);
      return;
    }
    if (is_state_space(m) || is_linkage(m)) {
      Linkage linkage = Linkage::None;
      if (is_linkage(m)) {
        linkage = to_linkage(m);
        lex_.next();
      }
      std::vector<VarDecl> decls;
      parse_var_declarations(linkage, decls);
      for (const VarDecl& d : decls) {
        Statement v;
        v.kind = StatementKind::Var;
        v.loc = d.loc;
        v.var = arena_.make<VarDecl>(d);
        out.push_back(v);
      }
      return;
    }
    fail(t, quote(t.text) + " cannot appear inside a function body");
  }
  default:
    fail_expected("an instruction, a label or a declaration");
  }
}

} // namespace detail

ParseResult parse_module(std::string source, const ParseOptions& options) {
  ParseResult result;
  auto module = std::make_unique<Module>();
  module->source = std::move(source);
  module->origin = options.origin;
  detail::Parser parser(*module, options, result);
  try {
    parser.parse_module();
  } catch (const detail::SyntaxError&) {
    return result; // module-level error: no module
  }
  result.module = std::move(module);
  return result;
}

} // namespace mimic::ptx
