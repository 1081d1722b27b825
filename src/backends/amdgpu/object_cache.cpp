#include "backends/amdgpu/object_cache.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include <llvm/Config/llvm-config.h>
#include <llvm/Support/BLAKE3.h>

#include "code_id.h"
#include "support/file.h"
#include "support/log.h"

namespace mimic::amdgpu {

namespace {

constexpr char kMagic[8] = {'M', 'I', 'M', 'I', 'C', 'A', 'M', 'D'};
constexpr uint64_t kFormat = 1;
constexpr size_t kDigest = 32;

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
    if (end - p < 8) return ok = false, 0;
    uint64_t v;
    std::memcpy(&v, p, 8);
    p += 8;
    return v;
  }
  std::string str() {
    uint64_t n = u64();
    if (!ok || uint64_t(end - p) < n) return ok = false, std::string();
    std::string s(p, n);
    p += n;
    return s;
  }
};

std::string hex(const uint8_t* bytes, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 15];
  }
  return s;
}

std::array<uint8_t, kDigest> digest(const char* data, size_t size) {
  llvm::BLAKE3 h;
  h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(data), size));
  return h.final();
}

std::filesystem::path entry_path(const std::string& key) {
  return object_cache_directory() / (key + ".mco");
}

} // namespace

std::filesystem::path object_cache_directory() {
  const char* off = std::getenv("MIMIC_CACHE");
  if (off && (std::strcmp(off, "0") == 0 || std::strcmp(off, "off") == 0)) return {};
  std::filesystem::path base;
  if (const char* d = std::getenv("MIMIC_CACHE_DIR"); d && *d)
    base = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    base = std::filesystem::path(x) / "mimic";
  else if (const char* h = std::getenv("HOME"); h && *h)
    base = std::filesystem::path(h) / ".cache" / "mimic";
  else
    return {};
  return base / "amdgpu";
}

std::string object_cache_key(const runtime::Program& program, std::string_view gfx) {
  llvm::BLAKE3 h;
  auto add = [&](std::string_view s) {
    uint64_t n = s.size();
    h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&n), 8));
    h.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
  };
  add("mimic amdgpu code, format " + std::to_string(kFormat));
  add(MIMIC_CODE_ID);
  add(LLVM_VERSION_STRING);
  add(gfx);
  add(std::to_string(program.modules.size()));
  for (const auto& m : program.modules)
    add(m->source);
  auto d = h.final();
  return hex(d.data(), d.size());
}

std::optional<CachedObject> object_cache_load(const std::string& key) {
  if (object_cache_directory().empty()) return std::nullopt;
  std::filesystem::path path = entry_path(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto reject = [&](const char* why) -> std::optional<CachedObject> {
    warn_once("amdgpu-cache-bad:" + path.string(),
              "AMDGPU code cache entry " + path.string() + " is " + why + "; compiling it again");
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return std::nullopt;
  };
  if (bytes.size() < sizeof kMagic + 8 + kDigest ||
      std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return reject("not a Mimic cache entry");
  size_t body = bytes.size() - kDigest;
  auto check = digest(bytes.data(), body);
  if (std::memcmp(check.data(), bytes.data() + body, kDigest) != 0)
    return reject("damaged (its checksum does not match)");
  Reader r{bytes.data() + sizeof kMagic, bytes.data() + body};
  if (r.u64() != kFormat || r.str() != key) return reject("for another format or key");
  CachedObject e;
  uint64_t flags = r.u64();
  e.device_log = flags & 1;
  e.device_heap = flags & 2;
  e.grid_workspace = flags & 4;
  for (uint64_t i = 0, n = r.u64(); r.ok && i < n; ++i)
    e.globals.push_back(r.str());
  for (char c : r.str())
    e.grid_sync.push_back(c != 0);
  e.object = r.str();
  if (!r.ok || r.p != r.end) return reject("truncated");
  return e;
}

void object_cache_store(const std::string& key, const CachedObject& e) {
  std::filesystem::path dir = object_cache_directory();
  if (dir.empty()) return;
  Writer w;
  w.out.append(kMagic, sizeof kMagic);
  w.u64(kFormat);
  w.str(key);
  w.u64((e.device_log ? 1 : 0) | (e.device_heap ? 2 : 0) | (e.grid_workspace ? 4 : 0));
  w.u64(e.globals.size());
  for (const std::string& g : e.globals)
    w.str(g);
  std::string grid;
  for (bool g : e.grid_sync)
    grid += char(g ? 1 : 0);
  w.str(grid);
  w.str(e.object);
  auto sum = digest(w.out.data(), w.out.size());
  w.out.append(reinterpret_cast<const char*>(sum.data()), sum.size());
  auto fail = [&](const std::string& what) {
    warn_once("amdgpu-cache-store",
              "cannot write the AMDGPU code cache in " + dir.string() + " (" + what +
                  "); kernels will be compiled again next time (set MIMIC_CACHE_DIR to a "
                  "writable folder, or MIMIC_CACHE=0 to turn the cache off)");
  };
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail(ec.message());
  // Written whole under a temporary name, then renamed: readers never see a partial entry.
  if (auto error = write_file_atomically(entry_path(key).string(), w.out)) return fail(*error);
}

} // namespace mimic::amdgpu
