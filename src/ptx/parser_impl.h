// The parser's internals, shared by its translation units (module structure in
// parser.cpp, instructions and operands in parse_operands.cpp).
#pragma once

#include <string>
#include <vector>

#include "ptx/ast.h"
#include "ptx/lexer.h"
#include "ptx/parser.h"

namespace mimic::ptx::detail {

// Thrown inside the parser only; parse_module catches it.
struct SyntaxError {};

class Parser {
public:
  Parser(Module& module, const ParseOptions& options, ParseResult& result)
      : m_(module), arena_(module.arena), lex_(module.source), options_(options), result_(result) {}

  void parse_module();

private:
  // ---- module structure (parser.cpp)
  void parse_top_level();
  void parse_version();
  void parse_target();
  void parse_file();
  void parse_section();
  void parse_alias();
  const Loc* parse_loc();
  void parse_declaration_or_function();
  void parse_function(Linkage linkage, SourceLoc loc);
  void skip_function_body();
  std::span<const VarAttribute> parse_attributes();
  std::span<const FunctionDirective> parse_function_directives();
  std::span<const VarDecl> parse_param_list();
  VarDecl parse_decl_prefix(Linkage linkage, bool in_param_list);
  void parse_decl_rest(VarDecl& decl, bool in_param_list);
  void parse_var_declarations(Linkage linkage, std::vector<VarDecl>& out);
  const Block* parse_block(); // after '{'
  void parse_statement(std::vector<Statement>& out);
  void parse_label_directive(Statement& s, Token label);

  // ---- instructions and operands (parse_operands.cpp)
public:
  const Instruction* parse_instruction(Token opcode_token, Name guard, bool guard_negated, SourceLoc loc);
  Operand parse_operand(Opcode opcode);
  Operand parse_expression(int min_precedence = 0, bool allow_bitor = true);
  Operand parse_pair_tail(Operand first, Opcode opcode);
  Operand parse_unary();
  Operand parse_primary();
  Operand parse_initializer();
  Operand parse_section_value();
  Operand make_integer(const Token& t);
  Operand make_float(const Token& t);
  Operand make_name(Name n);
  Operand fold_binary(ExprOp op, Operand lhs, Operand rhs, const Token& at);
  Operand fold_unary(ExprOp op, Operand v, const Token& at);
  uint64_t parse_uint(const Token& t, const char* what);
  void check_printed_depth(const Operand& expr, const Token& at); // after a whole expression
  std::span<const Operand> store(const std::vector<Operand>& items) {
    return arena_.copy(std::span<const Operand>(items));
  }

  // ---- shared helpers
  [[noreturn]] void fail(const Token& at, const std::string& message);
  [[noreturn]] void fail_expected(const std::string& expected);
  Token expect_punct(char c, const char* context);
  Token expect_identifier(const char* context);
  bool accept_punct(char c) {
    if (lex_.peek().is_punct(c)) {
      lex_.next();
      return true;
    }
    return false;
  }
  Modifier dot_word(const Token& t);
  Name intern_copy(std::string_view s); // copy into the arena (for synthesized names)
  std::string_view source_line(uint32_t line_start_hint, const Token& at) const;
  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, const Token& at) : p(parser) {
      if (++p.depth_ > p.options_.max_nesting)
        p.fail(at, "nesting deeper than " + std::to_string(p.options_.max_nesting) + " levels");
    }
    ~DepthGuard() { --p.depth_; }
  };

  Module& m_;
  Arena& arena_;
  Lexer lex_;
  const ParseOptions& options_;
  ParseResult& result_;
  std::string current_function_;
  unsigned depth_ = 0;
  bool in_operands_ = false; // parsing an instruction's operands (lane selectors allowed)
};

std::string quote(std::string_view text);
std::string describe(const Token& t); // for messages: 'text', or what is wrong with the token

} // namespace mimic::ptx::detail
