// mimic extract [--ptx|--elf|--all] -o DIR FILE...: writes each device code entry,
// decompressed, as DIR/<file>.<fatbin>.<entry>.<arch>.{ptx,cubin}.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/commands.h"
#include "fatbin/binary.h"
#include "support/file.h"

namespace mimic::cli {

int cmd_extract(const Args& args) {
  std::string out_dir;
  bool want_ptx = true, want_elf = false;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-o" && i + 1 < args.size())
      out_dir = args[++i];
    else if (a == "--ptx")
      want_ptx = true, want_elf = false;
    else if (a == "--elf")
      want_ptx = false, want_elf = true;
    else if (a == "--all")
      want_ptx = want_elf = true;
    else if (a == "--help") {
      printf("usage: mimic extract [--ptx|--elf|--all] -o DIR FILE...\n"
             "Writes every PTX (default) or cubin entry of each binary, decompressed, into DIR.\n");
      return 0;
    } else
      files.push_back(a);
  }
  if (out_dir.empty() || files.empty()) {
    fprintf(stderr, "mimic extract: need -o DIR and at least one FILE\n");
    return 2;
  }
  std::filesystem::create_directories(out_dir);
  int failures = 0;
  for (const std::string& path : files) {
    auto file = MappedFile::open(path);
    if (!file) {
      fprintf(stderr, "mimic extract: %s\n", file.error().message().c_str());
      ++failures;
      continue;
    }
    auto scan = fatbin::scan_file(file->bytes());
    if (!scan) {
      fprintf(stderr, "mimic extract: %s: %s\n", path.c_str(), scan.error().message().c_str());
      ++failures;
      continue;
    }
    std::string base = std::filesystem::path(path).filename().string();
    for (size_t f = 0; f < scan->fatbins.size(); ++f) {
      const auto& fb = scan->fatbins[f].fatbin;
      for (size_t e = 0; e < fb.entries.size(); ++e) {
        const auto& entry = fb.entries[e];
        if ((entry.is_ptx() && !want_ptx) || (entry.is_elf() && !want_elf) ||
            (!entry.is_ptx() && !entry.is_elf()))
          continue;
        auto contents = fatbin::entry_contents(entry);
        if (!contents) {
          fprintf(stderr, "mimic extract: %s: %s\n", path.c_str(), contents.error().message().c_str());
          ++failures;
          continue;
        }
        char name[512];
        snprintf(name, sizeof name, "%s.%zu.%zu.sm_%u.%s", base.c_str(), f, e, entry.sm_arch,
                 entry.is_ptx() ? "ptx" : "cubin");
        std::ofstream(std::filesystem::path(out_dir) / name, std::ios::binary)
            .write(contents->data(), std::streamsize(contents->size()));
      }
    }
  }
  return failures ? 1 : 0;
}

} // namespace mimic::cli
