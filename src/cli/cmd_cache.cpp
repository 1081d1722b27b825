// mimic cache [show] | clear | warm FILE...
//
// The CPU backend's JIT cache (backends/cpu/code_cache.h): where it is and what it holds,
// emptying it, and compiling a program's or library's kernels ahead of its first run.
// `warm` selects each module's PTX as the driver would for this machine (same compute
// capability, same options), so the entries it writes are the ones a run looks up.
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "backends/cpu/code_cache.h"
#include "backends/cpu/jit.h"
#include "cli/commands.h"
#include "fatbin/binary.h"
#include "fatbin/select.h"
#include "runtime/program.h"
#include "support/config.h"
#include "support/file.h"

namespace mimic::cli {

namespace {

int usage(FILE* out) {
  fprintf(out, "usage: mimic cache [show]          where the JIT cache is and what it holds\n"
               "       mimic cache clear         remove every entry\n"
               "       mimic cache warm FILE...  compile the kernels of programs, libraries or PTX files now,\n"
               "                                 so that their first run finds them compiled\n"
               "The cache lives in MIMIC_CACHE_DIR, else $XDG_CACHE_HOME/mimic, else ~/.cache/mimic;\n"
               "MIMIC_CACHE=0 turns it off.\n");
  return out == stdout ? 0 : 2;
}

std::string size_text(uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30))
    snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(1ull << 30));
  else if (bytes >= (1ull << 20))
    snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1ull << 20));
  else
    snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024.0);
  return buf;
}

int show() {
  cpu::CacheSummary s = cpu::cache_summary();
  if (s.directory.empty()) {
    printf("JIT cache: off (MIMIC_CACHE=0, or no MIMIC_CACHE_DIR, XDG_CACHE_HOME or HOME to put it in)\n");
    return 0;
  }
  printf("JIT cache: %s\n", s.directory.c_str());
  printf("  %zu entries, %s\n", s.entries, size_text(s.bytes).c_str());
  if (s.unreadable)
    printf("  %zu other files (interrupted writes); `mimic cache clear` removes them\n", s.unreadable);
  return 0;
}

// One module to compile: a fatbin in a mapped file, or a PTX file's text.
struct Work {
  std::string file;
  std::string what;            // "fatbin 3" / "PTX"
  const uint8_t* image = nullptr; // a fatbin
  std::string ptx;
};

class Progress {
public:
  explicit Progress(size_t total) : total_(total), tty_(isatty(2)) {}
  void step(size_t done, const std::string& label) {
    if (!tty_)
      return;
    constexpr int kWidth = 30;
    int filled = total_ ? int(done * kWidth / total_) : kWidth;
    std::string bar(size_t(filled), '#');
    bar.resize(kWidth, '.');
    std::string shown = label.size() > 40 ? "..." + label.substr(label.size() - 37) : label;
    fprintf(stderr, "\r[%s] %zu/%zu %-40s", bar.c_str(), done, total_, shown.c_str());
    fflush(stderr);
  }
  void finish() {
    if (tty_)
      fprintf(stderr, "\r%*s\r", 90, "");
  }

private:
  size_t total_;
  bool tty_;
};

int warm(const Args& files) {
  if (files.empty())
    return usage(stderr);
  if (cpu::cache_directory().empty()) {
    fprintf(stderr, "mimic cache warm: the cache is off (MIMIC_CACHE=0 or no home for it); nothing to do\n");
    return 1;
  }
  std::vector<MappedFile> mapped;
  mapped.reserve(files.size());
  std::vector<Work> work;
  int status = 0;
  for (const std::string& path : files) {
    auto file = MappedFile::open(path);
    if (!file) {
      fprintf(stderr, "%s: %s\n", path.c_str(), file.error().message().c_str());
      status = 1;
      continue;
    }
    mapped.push_back(std::move(file.value()));
    const MappedFile& m = mapped.back();
    auto scan = fatbin::scan_file(m.bytes());
    if (!scan) {
      fprintf(stderr, "%s: %s\n", path.c_str(), scan.error().message().c_str());
      status = 1;
      continue;
    }
    if (scan->format == fatbin::ImageFormat::Ptx) {
      work.push_back({path, "PTX", nullptr, std::string(reinterpret_cast<const char*>(scan->image.data()), scan->image.size())});
      continue;
    }
    size_t relocatable = 0, with_ptx = 0;
    for (size_t i = 0; i < scan->fatbins.size(); ++i) {
      const fatbin::LocatedFatbin& lf = scan->fatbins[i];
      // -rdc programs' modules are linked together when the program starts: compiled then.
      if (lf.section == "__nv_relfatbin") {
        ++relocatable;
        continue;
      }
      if (fatbin::ptx_candidates(lf.fatbin).empty()) // machine code only (nvcc's SASS companion)
        continue;
      ++with_ptx;
      work.push_back({path, "fatbin " + std::to_string(i), m.bytes().data() + lf.fatbin.offset, {}});
    }
    if (!with_ptx && !relocatable)
      printf("%s: no PTX to compile (%zu fatbins)\n", path.c_str(), scan->fatbins.size());
    if (relocatable)
      printf("%s: %zu relocatable (-rdc) fatbins are linked and compiled at the program's first run\n", path.c_str(),
             relocatable);
  }
  auto [major, minor] = config::compute_capability();
  const unsigned sm = unsigned(major * 10 + minor);
  const bool check = config::check_memory();
  size_t compiled = 0, cached = 0, failed = 0, kernels = 0;
  Progress progress(work.size());
  std::vector<std::string> errors;
  static uint8_t dummy_global[64]; // code is cached before it is linked: any address will do
  for (size_t i = 0; i < work.size(); ++i) {
    const Work& w = work[i];
    progress.step(i, w.file + " " + w.what);
    auto program = w.image ? runtime::load_program(w.image, sm) : runtime::load_program_from_ptx(w.ptx, w.file);
    if (!program) {
      ++failed;
      errors.push_back(w.file + " " + w.what + ": " + program.error().message());
      continue;
    }
    kernels += program.value()->kernels.size();
    if (cpu::cache_load(cpu::cache_key(*program.value(), check))) {
      ++cached;
      continue;
    }
    std::map<std::string, void*, std::less<>> globals;
    for (const runtime::GlobalInfo& g : program.value()->globals)
      globals[g.name] = dummy_global;
    auto code = cpu::compile_for_cpu(*program.value(), globals, cpu::CompileMode::Eager);
    if (!code) {
      ++failed;
      errors.push_back(w.file + " " + w.what + ": " + code.error().message());
      continue;
    }
    ++compiled;
  }
  progress.step(work.size(), "done");
  progress.finish();
  for (const std::string& e : errors)
    fprintf(stderr, "%s\n", e.c_str());
  printf("warm: %zu modules (%zu kernels): %zu compiled, %zu already cached, %zu failed\n", work.size(), kernels,
         compiled, cached, failed);
  return failed || status ? 1 : 0;
}

} // namespace

int cmd_cache(const Args& args) {
  if (args.empty() || args[0] == "show")
    return args.size() > 1 ? usage(stderr) : show();
  if (args[0] == "-h" || args[0] == "--help")
    return usage(stdout);
  if (args[0] == "clear") {
    size_t removed = cpu::cache_clear();
    printf("JIT cache: removed %zu files\n", removed);
    return 0;
  }
  if (args[0] == "warm")
    return warm(Args(args.begin() + 1, args.end()));
  return usage(stderr);
}

} // namespace mimic::cli
