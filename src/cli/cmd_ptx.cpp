// mimic ptx print FILE.ptx        parse and print the canonical PTX
// mimic ptx roundtrip FILE...     parse, print, re-parse and compare the trees
#include <cstdio>
#include <cstring>

#include "cli/commands.h"
#include "ptx/compare.h"
#include "ptx/parser.h"
#include "ptx/printer.h"
#include "support/file.h"

namespace mimic::cli {

namespace {

void print_errors(const ptx::ParseResult& r) {
  for (const auto& d : r.errors)
    fprintf(stderr, "%s\n", d.format().c_str());
}

int ptx_print(const Args& args) {
  std::string out_path;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o" && i + 1 < args.size())
      out_path = args[++i];
    else
      files.push_back(args[i]);
  }
  if (files.size() != 1) {
    fprintf(stderr, "usage: mimic ptx print FILE.ptx [-o OUT.ptx]\n");
    return 2;
  }
  auto text = read_text_file(files[0]);
  if (!text) {
    fprintf(stderr, "mimic ptx print: %s\n", text.error().message().c_str());
    return 1;
  }
  ptx::ParseOptions opts;
  opts.origin = files[0];
  auto r = ptx::parse_module(std::move(text.value()), opts);
  if (!r.ok()) {
    print_errors(r);
    return 1;
  }
  std::string printed = ptx::print_module(*r.module);
  FILE* out = out_path.empty() ? stdout : fopen(out_path.c_str(), "wb");
  if (!out) {
    fprintf(stderr, "mimic ptx print: cannot write '%s'\n", out_path.c_str());
    return 1;
  }
  fwrite(printed.data(), 1, printed.size(), out);
  if (out != stdout)
    fclose(out);
  return 0;
}

} // namespace

// Shared with `mimic info --check`: parse, print, parse again, compare.
std::optional<std::string> ptx_roundtrip(const std::string& text, const std::string& origin) {
  ptx::ParseOptions opts;
  opts.origin = origin;
  auto first = ptx::parse_module(text, opts);
  if (!first.ok())
    return first.errors.empty() ? "parse failed" : first.errors.front().format();
  std::string printed = ptx::print_module(*first.module);
  opts.origin = origin + " (printed)";
  auto second = ptx::parse_module(printed, opts);
  if (!second.ok())
    return "printed PTX does not parse: " +
           (second.errors.empty() ? std::string("?") : second.errors.front().format());
  if (auto diff = ptx::first_difference(*first.module, *second.module))
    return "printed PTX parses to a different tree: " + *diff;
  return std::nullopt;
}

static int ptx_roundtrip_cmd(const Args& args) {
  int failed = 0;
  for (const std::string& path : args) {
    auto text = read_text_file(path);
    if (!text) {
      fprintf(stderr, "%s\n", text.error().message().c_str());
      ++failed;
      continue;
    }
    if (auto err = ptx_roundtrip(text.value(), path)) {
      fprintf(stderr, "%s: %s\n", path.c_str(), err->c_str());
      ++failed;
    }
  }
  printf("roundtrip: %zu files, %d failed\n", args.size(), failed);
  return failed ? 1 : 0;
}

int cmd_ptx(const Args& args) {
  if (args.empty() || args[0] == "--help") {
    printf("usage: mimic ptx print FILE.ptx [-o OUT.ptx]\n"
           "       mimic ptx roundtrip FILE.ptx...\n");
    return args.empty() ? 2 : 0;
  }
  Args rest(args.begin() + 1, args.end());
  if (args[0] == "print")
    return ptx_print(rest);
  if (args[0] == "roundtrip")
    return ptx_roundtrip_cmd(rest);
  fprintf(stderr, "mimic ptx: unknown subcommand '%s'\n", args[0].c_str());
  return 2;
}

} // namespace mimic::cli
