// mimic info [--check] [--roundtrip] [--json] [-j N] FILE...
//
// Says what device code each binary carries: every fatbin entry (kind, arch,
// compression, sizes) and, per PTX module, its ISA version, target and kernels with their
// parameters and whether each parses. --check parses every PTX entry and ends with
// `ptx: N entries, P parsed, F failed` (exit status 1 when F > 0).
#include <atomic>
#include <cstdio>
#include <cxxabi.h>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "fatbin/binary.h"
#include "fatbin/select.h"
#include "ptx/parser.h"
#include "ptx/summary.h"
#include "runtime/program.h"
#ifdef MIMIC_HAVE_CODEGEN
#include "codegen/lower.h"
#endif
#include "support/file.h"
#include "support/json.h"

namespace mimic::cli {

namespace {

struct Options {
  bool compile = false;
  bool check = false;
  bool roundtrip = false;
  bool json = false;
  unsigned jobs = 0;
  std::vector<std::string> files;
};

struct EntryReport {
  size_t fatbin = 0, index = 0;
  std::string section;
  const fatbin::Entry* entry = nullptr; // null for a plain PTX file
  std::string error;                    // decompression failure
  bool is_ptx = false;
  uint64_t text_size = 0;
  ptx::ModuleSummary module;
  bool analysed = false;
  std::string roundtrip_error;
  struct Verdict {
    std::string name;
    bool translates;
    std::string error;
  };
  std::vector<Verdict> compiled; // --compile
};

struct FileReport {
  std::string path;
  std::string error;
  fatbin::ScannedFile scan;
  MappedFile file;
  std::vector<EntryReport> entries;
};

std::string count(size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string demangle(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d)
    return name;
  std::string out(d);
  free(d);
  return out;
}

std::string flags_text(uint64_t flags) {
  std::string s;
  auto add = [&](const char* t) { s += s.empty() ? t : std::string(",") + t; };
  if (flags & fatbin::kFlag64Bit)
    add("64bit");
  if (flags & fatbin::kFlagDebug)
    add("debug");
  if (flags & fatbin::kFlagLinux)
    add("linux");
  if (flags & fatbin::kFlagMac)
    add("mac");
  if (flags & fatbin::kFlagWindows)
    add("windows");
  if (flags & fatbin::kFlagArchSpecific)
    add("arch-specific");
  if (flags & fatbin::kFlagFamilySpecific)
    add("family-specific");
  uint64_t known = fatbin::kFlag64Bit | fatbin::kFlagDebug | fatbin::kFlagLinux | fatbin::kFlagMac |
                   fatbin::kFlagWindows | fatbin::kFlagCompressedLz4 | fatbin::kFlagCompressedZstd |
                   fatbin::kFlagArchSpecific | fatbin::kFlagFamilySpecific;
  if (flags & ~known) {
    char buf[32];
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)(flags & ~known));
    add(buf);
  }
  return s;
}

// --compile: translate for the CPU backend, or (--target amdgpu) in the AMD GPU form.
bool compile_for_amdgpu = false;

void compile_kernels(EntryReport& r, const std::string& text, const std::string& origin) {
#ifdef MIMIC_HAVE_CODEGEN
  auto program = runtime::load_program_from_ptx(text, origin);
  if (!program)
    return; // the parse/verify failure is reported by the check itself
  for (const auto& v : codegen::check_kernels(*program.value(), compile_for_amdgpu ? codegen::Target::Amdgpu
                                                                                  : codegen::Target::Cpu))
    r.compiled.push_back({v.name, v.translates, v.error});
#else
  (void)r;
  (void)text;
  (void)origin;
#endif
}

void analyse(EntryReport& r, std::string text, const std::string& origin, bool roundtrip, bool compile) {
  r.text_size = text.size();
  if (compile)
    compile_kernels(r, text, origin);
  if (roundtrip) {
    if (auto err = ptx_roundtrip(text, origin))
      r.roundtrip_error = *err;
  }
  ptx::ParseOptions opts;
  opts.origin = origin;
  auto parsed = ptx::parse_module(std::move(text), opts);
  r.module = ptx::summarize(parsed);
  r.analysed = true;
}

void process_entry(FileReport& f, EntryReport& r, bool roundtrip, bool compile) {
  if (!r.entry) { // a PTX file
    auto bytes = f.scan.image;
    analyse(r, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), f.path, roundtrip, compile);
    return;
  }
  auto contents = fatbin::entry_contents(*r.entry);
  if (!contents) {
    r.error = contents.error().message();
    return;
  }
  std::string origin = f.path + "[fatbin " + std::to_string(r.fatbin) + ", entry " + std::to_string(r.index) + "]";
  analyse(r, std::move(contents.value()), origin, roundtrip, compile);
}

bool module_ok(const EntryReport& r) {
  return r.error.empty() && r.analysed && r.module.parsed && r.roundtrip_error.empty();
}

void print_text(const FileReport& f, const Options& o) {
  if (!f.error.empty()) {
    printf("%s: error: %s\n", f.path.c_str(), f.error.c_str());
    return;
  }
  size_t ptx = 0, elf = 0;
  for (const auto& e : f.entries)
    (e.is_ptx ? ptx : elf)++;
  if (o.check) {
    for (const auto& e : f.entries) {
      if (!e.is_ptx || module_ok(e))
        continue;
      std::string where = e.entry ? "fatbin " + std::to_string(e.fatbin) + " entry " + std::to_string(e.index) : "";
      if (!e.error.empty())
        printf("%s: %s: error: %s\n", f.path.c_str(), where.c_str(), e.error.c_str());
      else if (!e.module.module_error.empty())
        printf("%s\n", e.module.module_error.c_str());
      for (const auto& fn : e.module.functions)
        if (!fn.parsed)
          printf("%s\n  %s '%s' does not parse\n", fn.error.c_str(), fn.is_entry ? "kernel" : "function",
                 fn.name.c_str());
      if (!e.roundtrip_error.empty())
        printf("%s: %s: round trip: %s\n", f.path.c_str(), where.c_str(), e.roundtrip_error.c_str());
    }
    return;
  }
  printf("%s: %s, %s, %zu PTX and %zu cubin entries\n", f.path.c_str(),
         std::string(fatbin::image_format_name(f.scan.format)).c_str(), count(f.scan.fatbins.size(), "fatbin").c_str(),
         ptx, elf);
  size_t last_fatbin = SIZE_MAX;
  for (const auto& e : f.entries) {
    if (e.entry && e.fatbin != last_fatbin) {
      last_fatbin = e.fatbin;
      const auto& lf = f.scan.fatbins[e.fatbin];
      printf("  fatbin %zu at 0x%llx%s%s: %s, %llu bytes\n", e.fatbin, (unsigned long long)lf.fatbin.offset,
             lf.section.empty() ? "" : " in ", lf.section.c_str(), (lf.fatbin.entries.size() == 1 ? std::string("1 entry") : std::to_string(lf.fatbin.entries.size()) + " entries").c_str(),
             (unsigned long long)lf.fatbin.total_size);
    }
    if (e.entry) {
      const auto& en = *e.entry;
      std::string kind(fatbin::entry_kind_name(en.kind));
      std::string arch = "sm_" + std::to_string(en.sm_arch);
      if (char v = en.arch_variant())
        arch += v;
      printf("    [%zu] %-4s %-7s %-5s %llu bytes", e.index, kind.c_str(), arch.c_str(),
             std::string(fatbin::compression_name(en.compression())).c_str(),
             (unsigned long long)en.payload.size());
      if (en.compression() != fatbin::Compression::None)
        printf(" -> %llu", (unsigned long long)en.uncompressed_size);
      printf("  flags %s", flags_text(en.flags).c_str());
      if (!en.options.empty())
        printf("  options \"%s\"", en.options.c_str());
      printf("\n");
    }
    if (!e.error.empty()) {
      printf("      error: %s\n", e.error.c_str());
      continue;
    }
    if (!e.is_ptx || !e.analysed)
      continue;
    const auto& m = e.module;
    if (!m.module_error.empty()) {
      printf("      PTX does not parse: %s\n", m.module_error.c_str());
      continue;
    }
    printf("      PTX %u.%u, .target %s, %u-bit addresses, %s, %s%s\n", m.version_major, m.version_minor,
           m.target.c_str(), m.address_size ? m.address_size : 32, count(m.kernel_count(), "kernel").c_str(),
           count(m.functions.size() - m.kernel_count(), "function").c_str(),
           m.failed_count() ? (", " + std::to_string(m.failed_count()) + " FAILED").c_str() : "");
    for (const auto& fn : m.functions) {
      if (!fn.is_entry && fn.parsed)
        continue;
      printf("        %s %s", fn.is_entry ? "kernel" : "function", demangle(fn.name).c_str());
      if (!fn.parsed) {
        printf("  FAILS TO PARSE\n          %s\n", fn.error.c_str());
        continue;
      }
      printf("  (");
      for (size_t i = 0; i < fn.params.size(); ++i)
        printf("%s%s", i ? ", " : "", fn.params[i].text.c_str());
      printf(")  parses\n");
    }
    if (!e.roundtrip_error.empty())
      printf("      round trip: %s\n", e.roundtrip_error.c_str());
  }
}

void write_json(JsonWriter& j, const FileReport& f) {
  j.begin_object();
  j.field("path", f.path);
  if (!f.error.empty()) {
    j.field("error", f.error);
    j.end_object();
    return;
  }
  j.field("format", fatbin::image_format_name(f.scan.format));
  j.key("entries").begin_array();
  for (const auto& e : f.entries) {
    j.begin_object();
    j.field("kind", e.is_ptx ? "ptx" : "elf");
    if (e.entry) {
      const auto& en = *e.entry;
      j.field("fatbin", uint64_t(e.fatbin)).field("index", uint64_t(e.index)).field("section", f.scan.fatbins[e.fatbin].section);
      j.field("offset", en.offset).field("sm", en.sm_arch).field("arch", "sm_" + std::to_string(en.sm_arch) + (en.arch_variant() ? std::string(1, en.arch_variant()) : "")).field("compression", fatbin::compression_name(en.compression()));
      j.field("stored_size", uint64_t(en.payload.size())).field("size", en.contents_size()).field("flags", en.flags);
      if (!en.options.empty())
        j.field("options", en.options);
    }
    if (!e.error.empty())
      j.field("error", e.error);
    if (e.is_ptx && e.analysed) {
      const auto& m = e.module;
      j.field("parsed", m.parsed);
      if (!m.module_error.empty())
        j.field("parse_error", m.module_error);
      j.field("ptx_version", std::to_string(m.version_major) + "." + std::to_string(m.version_minor));
      j.field("target", m.target).field("address_size", m.address_size);
      if (!e.roundtrip_error.empty())
        j.field("roundtrip_error", e.roundtrip_error);
      j.key("functions").begin_array();
      for (const auto& fn : m.functions) {
        j.begin_object();
        j.field("name", fn.name).field("demangled", demangle(fn.name)).field("kernel", fn.is_entry);
        j.field("defined", fn.defined).field("parsed", fn.parsed);
        if (!fn.parsed)
          j.field("error", fn.error);
        j.key("params").begin_array();
        for (const auto& p : fn.params) {
          j.begin_object().field("type", p.type).field("size", p.size).field("align", p.align);
          j.field("pointer", p.pointer);
          if (!p.pointee_space.empty())
            j.field("space", p.pointee_space);
          j.end_object();
        }
        j.end_array();
        j.end_object();
      }
      j.end_array();
    }
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

int usage(FILE* out) {
  fprintf(out, "usage: mimic info [--check] [--roundtrip] [--compile [--target cpu|amdgpu]] [--json] [-j N] FILE...\n"
               "  Lists the device code in executables, shared libraries, fatbins, cubins and PTX files.\n"
               "  --check      parse every PTX entry; report only failures and end with\n"
               "               'ptx: N entries, P parsed, F failed' (exit status 1 when F > 0)\n"
               "  --roundtrip  also print each module and check that it parses back to the same tree\n"
               "  --compile    translate every kernel for the CPU backend; report failures by kernel and\n"
               "               end with 'compile: N kernels, T translate, F fail' (exit status 1 when F > 0)\n"
               "  --target     with --compile: cpu (default), or amdgpu for the AMD GPU lowering\n"
               "  --json       machine-readable output\n"
               "  -j N         parse with N threads (default: all cores)\n");
  return out == stdout ? 0 : 2;
}

} // namespace

int cmd_info(const Args& args) {
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--check")
      o.check = true;
    else if (a == "--roundtrip")
      o.roundtrip = o.check = true;
    else if (a == "--json")
      o.json = true;
    else if (a == "--compile")
      o.compile = true;
    else if (a == "--target" && i + 1 < args.size()) {
      std::string t = args[++i];
      if (t != "cpu" && t != "amdgpu") {
        fprintf(stderr, "mimic info: --target is cpu or amdgpu, not '%s'\n", t.c_str());
        return 2;
      }
      compile_for_amdgpu = t == "amdgpu";
    }
    else if (a == "-j" && i + 1 < args.size())
      o.jobs = unsigned(std::stoul(args[++i]));
    else if (a == "--help" || a == "-h")
      return usage(stdout);
    else if (!a.empty() && a[0] == '-') {
      fprintf(stderr, "mimic info: unknown option '%s'\n", a.c_str());
      return usage(stderr);
    } else
      o.files.push_back(a);
  }
  if (o.files.empty())
    return usage(stderr);

  // The same file reached through symlinks (libfoo.so -> libfoo.so.13) is reported once.
  std::vector<FileReport> reports;
  std::set<std::string> seen;
  for (const std::string& path : o.files) {
    std::error_code ec;
    std::string canonical = std::filesystem::canonical(path, ec).string();
    if (!ec && !seen.insert(canonical).second)
      continue;
    FileReport& f = reports.emplace_back();
    f.path = path;
    auto file = MappedFile::open(path);
    if (!file) {
      f.error = file.error().message();
      continue;
    }
    f.file = std::move(file.value());
    auto scan = fatbin::scan_file(f.file.bytes());
    if (!scan) {
      f.error = scan.error().message();
      continue;
    }
    f.scan = std::move(scan.value());
    if (f.scan.format == fatbin::ImageFormat::Ptx) {
      EntryReport& r = f.entries.emplace_back();
      r.is_ptx = true;
    } else if (f.scan.format == fatbin::ImageFormat::Cubin) {
      f.entries.emplace_back();
    }
    for (size_t fi = 0; fi < f.scan.fatbins.size(); ++fi) {
      const auto& fb = f.scan.fatbins[fi];
      for (size_t ei = 0; ei < fb.fatbin.entries.size(); ++ei) {
        EntryReport& r = f.entries.emplace_back();
        r.fatbin = fi;
        r.index = ei;
        r.section = fb.section;
        r.entry = &fb.fatbin.entries[ei];
        r.is_ptx = r.entry->is_ptx();
      }
    }
  }

  // Parse PTX entries on a pool of threads.
  std::vector<std::pair<FileReport*, EntryReport*>> work;
  for (auto& f : reports)
    for (auto& e : f.entries)
      if (e.is_ptx)
        work.emplace_back(&f, &e);
  unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < work.size();)
      process_entry(*work[i].first, *work[i].second, o.roundtrip, o.compile);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < jobs && t < work.size(); ++t)
    threads.emplace_back(worker);
  worker();
  for (auto& t : threads)
    t.join();

  size_t total = 0, parsed = 0, file_errors = 0;
  for (const auto& f : reports) {
    file_errors += !f.error.empty();
    for (const auto& e : f.entries)
      if (e.is_ptx) {
        ++total;
        parsed += module_ok(e);
      }
  }
  size_t kernels = 0, translated = 0;
  for (const auto& f : reports)
    for (const auto& e : f.entries)
      for (const auto& v : e.compiled) {
        ++kernels;
        translated += v.translates;
      }
  if (o.json) {
    JsonWriter j;
    j.begin_object();
    j.key("files").begin_array();
    for (const auto& f : reports)
      write_json(j, f);
    j.end_array();
    j.field("ptx_entries", uint64_t(total)).field("ptx_parsed", uint64_t(parsed)).field("ptx_failed", uint64_t(total - parsed));
    j.end_object();
    printf("%s\n", j.str().c_str());
  } else {
    for (const auto& f : reports)
      print_text(f, o);
    if (o.compile) {
      for (const auto& f : reports)
        for (const auto& e : f.entries)
          for (const auto& v : e.compiled)
            if (!v.translates)
              printf("%s: kernel %s cannot be translated: %s\n", f.path.c_str(), demangle(v.name).c_str(),
                     v.error.c_str());
#ifndef MIMIC_HAVE_CODEGEN
      printf("mimic info --compile: this build has no code generator (LLVM was not found)\n");
#endif
      printf("compile: %zu kernels, %zu translate, %zu fail\n", kernels, translated, kernels - translated);
    }
    if (o.check)
      printf("ptx: %zu entries, %zu parsed, %zu failed\n", total, parsed, total - parsed);
  }
  if (file_errors)
    return 1;
  if (o.compile && translated != kernels)
    return 1;
  return o.check && parsed != total ? 1 : 0;
}

} // namespace mimic::cli
