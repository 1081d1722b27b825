#include "backends/cpu/code_cache.h"

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/BLAKE3.h>
#include <llvm/TargetParser/Host.h>

#include "backends/cpu/vector_width.h"
#include "code_id.h"
#include "codegen/parallel_loops.h"
#include "codegen/row_guards.h"
#include "codegen/edge_threads.h"
#include "codegen/row_unswitch.h"
#include "codegen/shared_store_select.h"
#include "codegen/thread_interchange.h"
#include "codegen/block_prefetch.h"
#include "codegen/loop_prefetch.h"
#include "codegen/interleaved_scatter.h"
#include "codegen/contiguous_gathers.h"
#include "codegen/lane_steps.h"
#include "codegen/store_masks.h"
#include "codegen/uniform_scatter.h"
#include "support/file.h"
#include "support/log.h"

namespace mimic::cpu {

namespace {

constexpr char kMagic[8] = {'M', 'I', 'M', 'I', 'C', 'J', 'I', 'T'};
constexpr uint32_t kFormat = 2; // 2: flag 8, LoweredKernel::calls
constexpr size_t kDigest = 32;

bool cache_enabled() {
  const char* env = std::getenv("MIMIC_CACHE");
  return !(env && (std::strcmp(env, "0") == 0 || std::strcmp(env, "off") == 0));
}

// ---- a little binary writer and reader (little-endian host, lengths before strings)

struct Writer {
  std::string out;
  void u64(uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
  void str(const std::string& s) {
    u64(s.size());
    out += s;
  }
};

struct Reader {
  const char* p;
  const char* end;
  bool ok = true;
  uint64_t u64() {
    if (end - p < 8) {
      ok = false;
      return 0;
    }
    uint64_t v;
    std::memcpy(&v, p, 8);
    p += 8;
    return v;
  }
  std::string str() {
    uint64_t n = u64();
    if (!ok || uint64_t(end - p) < n) {
      ok = false;
      return {};
    }
    std::string s(p, n);
    p += n;
    return s;
  }
};

std::array<uint8_t, kDigest> digest(const char* data, size_t size) {
  llvm::BLAKE3 h;
  h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(data), size));
  return h.final();
}

std::string hex(const uint8_t* bytes, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 15];
  }
  return s;
}

std::filesystem::path entry_path(const std::string& key) { return cache_directory() / (key + ".mco"); }

// The host's CPU and features, as LLJIT's target detection sees them (computed once).
const std::string& host_description() {
  static const std::string text = [] {
    std::string s = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    std::vector<std::string> on;
    for (const auto& f : features)
      if (f.second)
        on.push_back(f.first().str());
    std::sort(on.begin(), on.end());
    for (const std::string& f : on)
      s += "," + f;
    return s;
  }();
  return text;
}

} // namespace

std::string kernel_cache_key(const std::string& program_key, const std::string& kernel_symbol) {
  std::string text = program_key + '\0' + kernel_symbol;
  auto d = digest(text.data(), text.size());
  return hex(d.data(), d.size());
}

std::filesystem::path cache_directory() {
  if (!cache_enabled())
    return {};
  std::filesystem::path base;
  if (const char* d = std::getenv("MIMIC_CACHE_DIR"); d && *d)
    base = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    base = std::filesystem::path(x) / "mimic";
  else if (const char* h = std::getenv("HOME"); h && *h)
    base = std::filesystem::path(h) / ".cache" / "mimic";
  else
    return {};
  return base / "cpu";
}

std::string cache_key(const runtime::Program& program, bool check_memory) {
  llvm::BLAKE3 h;
  auto add = [&](std::string_view s) {
    uint64_t n = s.size();
    h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&n), 8));
    h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
  };
  add("mimic cpu code, format " + std::to_string(kFormat));
  add(MIMIC_CODE_ID);
  add(LLVM_VERSION_STRING);
  add(host_description());
  add(check_memory ? "check=memory" : "check=none");
  add(codegen::interchange_enabled() ? "interchange=on" : "interchange=off");
  add(codegen::warp_chains_enabled() ? "warp-chains=on" : "warp-chains=off");
  add(codegen::lane0_chains_enabled() ? "lane0-chains=on" : "lane0-chains=off");
  add(codegen::lazy_stops_enabled() ? "lazy-stops=on" : "lazy-stops=off");
  add(codegen::stop_counts_enabled() ? "stop-counts=on" : "stop-counts=off");
  add(codegen::full_rows_enabled() ? "full-rows=on" : "full-rows=off");
  add(codegen::parallel_loops_enabled() ? "parallel-loops=on" : "parallel-loops=off");
  add(codegen::prefetch_enabled() ? "prefetch=on" : "prefetch=off");
  add(codegen::full_rounds_enabled() ? "full-rounds=on" : "full-rounds=off");
  add(codegen::counted_rounds_enabled() ? "counted-rounds=on" : "counted-rounds=off");
  add(codegen::row_unswitch_enabled() ? "row-unswitch=on" : "row-unswitch=off");
  add(codegen::row_guards_enabled() ? "row-guards=on" : "row-guards=off");
  add(codegen::edge_threads_enabled() ? "edge-threads=on" : "edge-threads=off");
  add(codegen::uniform_scatter_enabled() ? "uniform-scatter=on" : "uniform-scatter=off");
  add(std::string("store-masks=") + codegen::store_masks_setting());
  add(codegen::shared_store_select_enabled() ? "shared-store-select=on" : "shared-store-select=off");
  add(codegen::lane_steps_enabled() ? "lane-steps=on" : "lane-steps=off");
  add(codegen::store_prefetch_enabled() ? "store-prefetch=on" : "store-prefetch=off");
  add(codegen::load_prefetch_enabled() ? "load-prefetch=on" : "load-prefetch=off");
  add(codegen::loop_prefetch_enabled() ? "loop-prefetch=on" : "loop-prefetch=off");
  add(codegen::interleaved_scatter_enabled() ? "interleaved-scatter=on" : "interleaved-scatter=off");
  add(codegen::contiguous_gathers_enabled() ? "contiguous-gathers=on" : "contiguous-gathers=off");
  add("vector-bits=" + std::to_string(preferred_vector_bits()));
  add(std::to_string(program.modules.size()));
  for (const auto& m : program.modules)
    add(m->source);
  auto d = h.final();
  return hex(d.data(), d.size());
}

std::optional<CachedCode> cache_load(const std::string& key) {
  if (cache_directory().empty())
    return std::nullopt;
  std::filesystem::path path = entry_path(key);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto reject = [&](const char* why) -> std::optional<CachedCode> {
    warn_once("cache-bad:" + path.string(), "JIT cache entry " + path.string() + " is " + why + "; recompiling it");
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return std::nullopt;
  };
  if (bytes.size() < sizeof kMagic + 8 + kDigest || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return reject("not a Mimic cache entry");
  size_t body = bytes.size() - kDigest;
  auto check = digest(bytes.data(), body);
  if (std::memcmp(check.data(), bytes.data() + body, kDigest) != 0)
    return reject("damaged (its checksum does not match)");
  Reader r{bytes.data() + sizeof kMagic, bytes.data() + body};
  if (r.u64() != kFormat || r.str() != key)
    return reject("for another format or key");
  CachedCode code;
  uint64_t kernels = r.u64();
  for (uint64_t i = 0; r.ok && i < kernels; ++i) {
    codegen::LoweredKernel k;
    k.symbol = r.str();
    std::string splits = r.str();
    for (char c : splits)
      k.splits.push_back(codegen::SplitKind(uint8_t(c)));
    k.local_bytes = r.u64();
    k.spill_slots = unsigned(r.u64());
    uint64_t flags = r.u64();
    k.grid_sync = flags & 1;
    k.cluster = flags & 2;
    k.plain_exit = flags & 4;
    k.calls = flags & 8;
    code.kernels.push_back(std::move(k));
  }
  uint64_t globals = r.u64();
  for (uint64_t i = 0; r.ok && i < globals; ++i)
    code.globals.push_back(r.str());
  uint64_t taken = r.u64();
  for (uint64_t i = 0; r.ok && i < taken; ++i) {
    std::string name = r.str();
    code.address_taken.emplace_back(name, r.str());
  }
  code.object = r.str();
  if (!r.ok || r.p != r.end)
    return reject("truncated");
  return code;
}

void cache_store(const std::string& key, const CachedCode& code) {
  std::filesystem::path dir = cache_directory();
  if (dir.empty())
    return;
  Writer w;
  w.out.append(kMagic, sizeof kMagic);
  w.u64(kFormat);
  w.str(key);
  w.u64(code.kernels.size());
  for (const codegen::LoweredKernel& k : code.kernels) {
    w.str(k.symbol);
    std::string splits;
    for (codegen::SplitKind s : k.splits)
      splits += char(uint8_t(s));
    w.str(splits);
    w.u64(k.local_bytes);
    w.u64(k.spill_slots);
    w.u64((k.grid_sync ? 1 : 0) | (k.cluster ? 2 : 0) | (k.plain_exit ? 4 : 0) | (k.calls ? 8 : 0));
  }
  w.u64(code.globals.size());
  for (const std::string& g : code.globals)
    w.str(g);
  w.u64(code.address_taken.size());
  for (const auto& [name, symbol] : code.address_taken) {
    w.str(name);
    w.str(symbol);
  }
  w.str(code.object);
  auto sum = digest(w.out.data(), w.out.size());
  w.out.append(reinterpret_cast<const char*>(sum.data()), sum.size());

  auto fail = [&](const std::string& what) {
    warn_once("cache-store", "cannot write the JIT cache in " + dir.string() + " (" + what +
                                 "); kernels will be compiled again next time (set MIMIC_CACHE_DIR to a "
                                 "writable folder, or MIMIC_CACHE=0 to turn the cache off)");
  };
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return fail(ec.message());
  // Written whole under a temporary name, then renamed: readers never see a partial entry.
  if (auto error = write_file_atomically(entry_path(key).string(), w.out)) return fail(*error);
}

CacheSummary cache_summary() {
  CacheSummary s;
  s.directory = cache_directory();
  std::error_code ec;
  if (s.directory.empty() || !std::filesystem::is_directory(s.directory, ec))
    return s;
  for (const auto& e : std::filesystem::directory_iterator(s.directory, ec)) {
    if (!e.is_regular_file(ec))
      continue;
    if (e.path().extension() == ".mco") {
      ++s.entries;
      s.bytes += e.file_size(ec);
    } else {
      ++s.unreadable;
    }
  }
  return s;
}

size_t cache_clear() {
  std::filesystem::path dir = cache_directory();
  std::error_code ec;
  size_t removed = 0;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec))
    return 0;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file(ec) && std::filesystem::remove(e.path(), ec))
      ++removed;
  return removed;
}

} // namespace mimic::cpu
