// libFuzzer target for the PTX front end: parses the bytes as PTX text; when the parse
// succeeds, prints the tree, parses the printed text and requires the same tree.
// A crash, sanitizer report, or round-trip mismatch is a bug in src/ptx.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ptx/compare.h"
#include "ptx/parser.h"
#include "ptx/printer.h"

using namespace mimic::ptx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  ParseOptions opts;
  opts.origin = "<fuzz>";
  ParseResult first = parse_module(text, opts);
  for (const Diagnostic& d : first.errors)
    (void)d.format();
  if (!first.ok())
    return 0;

  std::string printed = print_module(*first.module);
  opts.origin = "<fuzz printed>";
  ParseResult second = parse_module(printed, opts);
  if (!second.ok()) {
    fprintf(stderr, "round trip: printed PTX does not parse: %s\n--- printed ---\n%s\n",
            second.errors.empty() ? "(no diagnostic)" : second.errors.front().format().c_str(),
            printed.c_str());
    abort();
  }
  if (auto diff = first_difference(*first.module, *second.module)) {
    fprintf(stderr, "round trip: printed PTX parses to a different tree: %s\n--- printed ---\n%s\n",
            diff->c_str(), printed.c_str());
    abort();
  }
  // The canonical text must be a fixed point of printing.
  std::string again = print_module(*second.module);
  if (again != printed) {
    fprintf(stderr, "round trip: printing is not idempotent\n--- first ---\n%s\n--- second ---\n%s\n",
            printed.c_str(), again.c_str());
    abort();
  }
  return 0;
}
