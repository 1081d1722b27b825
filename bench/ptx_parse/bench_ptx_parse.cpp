// bench_ptx_parse: PTX parser throughput and tree memory.
//
//   bench_ptx_parse [-v] [FILE...]
//
// FILEs are PTX text or binaries carrying fatbins (their PTX entries are used). Without
// FILEs, the PTX of libcublas.so.13 and libcusparse.so.12 (MIMIC_CUDA_LIB_DIR, default
// /usr/local/cuda/lib64) is used. For each text, on one thread:
//   - parse time: best of 3 (copying the text in and destroying the tree are not timed);
//   - memory: arena bytes + source text + top-level vectors, relative to the text size;
// and around the parse of the largest text, the growth of the peak RSS (VmHWM).
// Ends with a line `ptx parse: X.X MB/s (N files, T MB), memory Y.Yx text` for tracking.
// Targets: >= 50 MB/s, memory < 10x. Always exits 0 unless it finds no input at all.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "fatbin/binary.h"
#include "fatbin/fatbin.h"
#include "ptx/parser.h"
#include "support/file.h"

using namespace mimic;

namespace {

constexpr double kMB = 1e6;
constexpr double kTargetMBps = 50;
constexpr double kTargetMemory = 10;

// A PTX text to parse: either read from a file or an entry of a mapped binary.
struct Input {
  std::string name;
  size_t size = 0;
  std::string text;                  // for text files
  const fatbin::Entry* entry = nullptr; // for fatbin entries (decompressed on demand)

  Result<std::string> load() const {
    if (!entry)
      return text;
    return fatbin::entry_contents(*entry);
  }
};

struct Row {
  std::string name;
  size_t size = 0;
  double best_s = 0;
  size_t memory = 0;
  size_t arena = 0;
  size_t functions = 0;
  size_t errors = 0;
};

// Binaries stay mapped while their entries are used.
std::vector<std::unique_ptr<MappedFile>> g_mapped;
std::vector<std::unique_ptr<fatbin::ScannedFile>> g_scanned;

bool add_file(const std::string& path, std::vector<Input>& inputs) {
  auto file = MappedFile::open(path);
  if (!file) {
    fprintf(stderr, "bench_ptx_parse: %s\n", file.error().message().c_str());
    return false;
  }
  auto mapped = std::make_unique<MappedFile>(std::move(file.value()));
  auto scan = fatbin::scan_file(mapped->bytes());
  if (!scan) {
    fprintf(stderr, "bench_ptx_parse: %s: %s\n", path.c_str(), scan.error().message().c_str());
    return false;
  }
  std::string base = path.substr(path.find_last_of('/') + 1);
  if (scan->format == fatbin::ImageFormat::Ptx) {
    Input in;
    in.name = base;
    in.text.assign(reinterpret_cast<const char*>(scan->image.data()), scan->image.size());
    in.size = in.text.size();
    inputs.push_back(std::move(in));
    return true;
  }
  auto scanned = std::make_unique<fatbin::ScannedFile>(std::move(scan.value()));
  size_t found = 0;
  for (size_t f = 0; f < scanned->fatbins.size(); ++f) {
    const auto& entries = scanned->fatbins[f].fatbin.entries;
    for (size_t e = 0; e < entries.size(); ++e) {
      if (!entries[e].is_ptx())
        continue;
      Input in;
      in.name = base + "." + std::to_string(f) + "." + std::to_string(e) + ".sm_" +
                std::to_string(entries[e].sm_arch);
      in.entry = &entries[e];
      in.size = entries[e].contents_size();
      inputs.push_back(std::move(in));
      ++found;
    }
  }
  if (!found)
    fprintf(stderr, "bench_ptx_parse: %s: no PTX entries\n", path.c_str());
  g_mapped.push_back(std::move(mapped));
  g_scanned.push_back(std::move(scanned));
  return found > 0;
}

// VmHWM / VmRSS in bytes, 0 when unavailable.
size_t proc_status_kb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  size_t klen = strlen(key);
  while (std::getline(in, line))
    if (line.compare(0, klen, key) == 0 && line.size() > klen && line[klen] == ':')
      return size_t(strtoull(line.c_str() + klen + 1, nullptr, 10)) * 1024;
  return 0;
}

// Resets VmHWM to the current RSS (Linux >= 4.0); false when not possible.
bool reset_peak_rss() {
  FILE* f = fopen("/proc/self/clear_refs", "w");
  if (!f)
    return false;
  bool ok = fputs("5", f) >= 0;
  ok &= fclose(f) == 0;
  return ok;
}

size_t tree_memory(const ptx::Module& m) {
  return m.arena.bytes_allocated() + m.source.capacity() + m.origin.capacity() +
         m.items.capacity() * sizeof(ptx::TopLevel) + m.target.capacity() * sizeof(ptx::Name) +
         sizeof(ptx::Module);
}

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

Row measure(const Input& in, const std::string& text) {
  Row row;
  row.name = in.name;
  row.size = text.size();
  row.best_s = 1e30;
  ptx::ParseOptions opts;
  opts.origin = in.name;
  for (int rep = 0; rep < 3; ++rep) {
    std::string copy = text; // not timed
    double t0 = now_s();
    ptx::ParseResult r = ptx::parse_module(std::move(copy), opts);
    double t = now_s() - t0;
    row.best_s = std::min(row.best_s, t);
    if (rep == 0) {
      row.errors = r.errors.size();
      if (r.module) {
        row.memory = tree_memory(*r.module);
        row.arena = r.module->arena.bytes_allocated();
        row.functions = r.module->functions().size();
      }
    }
  } // trees are destroyed outside the timed region
  return row;
}

} // namespace

int main(int argc, char** argv) {
  bool verbose = false;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-v"))
      verbose = true;
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf("usage: bench_ptx_parse [-v] [FILE...]  (FILE: PTX text or a binary with fatbins)\n");
      return 0;
    } else
      paths.push_back(argv[i]);
  }
  if (paths.empty()) {
    const char* dir = getenv("MIMIC_CUDA_LIB_DIR");
    std::string lib = dir ? dir : "/usr/local/cuda/lib64";
    paths = {lib + "/libcublas.so.13", lib + "/libcusparse.so.12"};
  }
  std::vector<Input> inputs;
  for (const std::string& p : paths)
    add_file(p, inputs);
  if (inputs.empty()) {
    fprintf(stderr, "bench_ptx_parse: no PTX to parse\n");
    return 1;
  }

  // Peak RSS growth around the largest parse, measured first so that earlier parses
  // have not already raised the high-water mark.
  size_t largest = 0;
  for (size_t i = 1; i < inputs.size(); ++i)
    if (inputs[i].size > inputs[largest].size)
      largest = i;
  size_t rss_growth = 0, largest_size = 0;
  bool rss_reset = false;
  {
    auto text = inputs[largest].load();
    if (text) {
      largest_size = text->size();
      std::string copy = text.value();
      rss_reset = reset_peak_rss();
      size_t before = proc_status_kb(rss_reset ? "VmRSS" : "VmHWM");
      {
        ptx::ParseOptions opts;
        ptx::ParseResult r = ptx::parse_module(std::move(copy), opts);
        size_t after = proc_status_kb("VmHWM");
        rss_growth = after > before ? after - before : 0;
      }
    }
  }

  std::vector<Row> rows;
  size_t load_failures = 0;
  for (const Input& in : inputs) {
    auto text = in.load();
    if (!text) {
      fprintf(stderr, "bench_ptx_parse: %s: %s\n", in.name.c_str(), text.error().message().c_str());
      ++load_failures;
      continue;
    }
    rows.push_back(measure(in, text.value()));
  }

  // Table: every file with -v or when there are few, otherwise the largest ones.
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rows[a].size > rows[b].size; });
  size_t shown = verbose || rows.size() <= 25 ? rows.size() : 20;
  printf("%-44s %10s %9s %8s %10s %7s %6s %5s\n", "file", "text MB", "best ms", "MB/s", "tree MB",
         "memory", "funcs", "errs");
  double total_s = 0, total_mem = 0, total_text = 0, worst_ratio = 0, slowest = 1e30;
  size_t total_errors = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const Row& r = rows[order[k]];
    double mbps = r.best_s > 0 ? r.size / kMB / r.best_s : 0;
    double ratio = r.size ? double(r.memory) / r.size : 0;
    total_s += r.best_s;
    total_mem += r.memory;
    total_text += r.size;
    total_errors += r.errors;
    if (r.size >= 1 << 20) { // small texts are dominated by fixed costs
      worst_ratio = std::max(worst_ratio, ratio);
      slowest = std::min(slowest, mbps);
    }
    if (k < shown)
      printf("%-44s %10.2f %9.2f %8.1f %10.2f %6.1fx %6zu %5zu\n", r.name.c_str(), r.size / kMB,
             r.best_s * 1e3, mbps, r.memory / kMB, ratio, r.functions, r.errors);
  }
  if (shown < rows.size())
    printf("... and %zu smaller files (-v lists them)\n", rows.size() - shown);

  double mbps = total_s > 0 ? total_text / kMB / total_s : 0;
  double ratio = total_text > 0 ? total_mem / total_text : 0;
  printf("\n");
  if (slowest < 1e30)
    printf("files of 1 MB or more: slowest %.1f MB/s, highest memory %.1fx text\n", slowest, worst_ratio);
  if (largest_size)
    printf("peak RSS growth parsing the largest text (%s, %.1f MB): %.1f MB = %.1fx text%s\n",
           inputs[largest].name.c_str(), largest_size / kMB, rss_growth / kMB,
           double(rss_growth) / largest_size, rss_reset ? "" : " (VmHWM could not be reset)");
  if (total_errors || load_failures)
    printf("%zu parse errors, %zu entries not loaded\n", total_errors, load_failures);
  printf("targets: >= %.0f MB/s %s, memory < %.0fx %s\n", kTargetMBps, mbps >= kTargetMBps ? "met" : "MISSED",
         kTargetMemory, ratio < kTargetMemory ? "met" : "MISSED");
  printf("ptx parse: %.1f MB/s (%zu files, %.1f MB), memory %.1fx text\n", mbps, rows.size(),
         total_text / kMB, ratio);
  return 0;
}
