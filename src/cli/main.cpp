#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const mimic::cli::Args&);
  const char* summary;
};

const Command kCommands[] = {
    {"run", mimic::cli::cmd_run, "run a CUDA program on Mimic"},
    {"info", mimic::cli::cmd_info, "what device code binaries carry, and whether it parses"},
    {"extract", mimic::cli::cmd_extract, "write the device code entries of binaries to files"},
    {"ptx", mimic::cli::cmd_ptx, "parse, print and round-trip PTX files"},
    {"doctor", mimic::cli::cmd_doctor, "check the installation: driver, CUDA runtime, libraries, backends, cache"},
    {"bench", mimic::cli::cmd_bench, "benchmarks: CUDA kernels on Mimic against OpenMP and PoCL"},
#ifdef MIMIC_HAVE_CODEGEN
    {"cache", mimic::cli::cmd_cache, "the JIT cache: show, clear, warm (compile a program's kernels ahead)"},
    {"compile", mimic::cli::cmd_compile, "compile a PTX file for the CPU or an AMD GPU (a code object)"},
#endif
};

void usage(FILE* out) {
  fprintf(out, "usage: mimic <command> [options]\n\ncommands:\n");
  for (const Command& c : kCommands)
    fprintf(out, "  %-10s %s\n", c.name, c.summary);
  fprintf(out, "\n'mimic <command> --help' describes a command.\n");
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  mimic::cli::Args args(argv + 2, argv + argc);
  for (const Command& c : kCommands)
    if (argv[1] == std::string(c.name))
      return c.run(args);
  fprintf(stderr, "mimic: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
