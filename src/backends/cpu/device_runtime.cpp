// The CUDA device runtime's functions as the CPU backend provides them: printf (vprintf
// with CUDA's argument packing), the failure report of assert, and the device heap.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <string>

#include "backends/cpu/check.h"
#include "codegen/block_state.h"
#include "support/log.h"

namespace mimic::codegen {

namespace {

// One argument of CUDA's packed printf buffer: each value at the next multiple of its
// size; integers narrower than int are ints, float is promoted to double.
template <typename T> T next_argument(const unsigned char*& at) {
  uintptr_t p = reinterpret_cast<uintptr_t>(at);
  p = (p + sizeof(T) - 1) & ~(uintptr_t(sizeof(T)) - 1);
  T v;
  std::memcpy(&v, reinterpret_cast<const void*>(p), sizeof(T));
  at = reinterpret_cast<const unsigned char*>(p + sizeof(T));
  return v;
}

void append_formatted(std::string& out, const char* spec, ...) {
  char small[256];
  va_list ap;
  va_start(ap, spec);
  int n = std::vsnprintf(small, sizeof small, spec, ap);
  va_end(ap);
  if (n < 0)
    return;
  if (size_t(n) < sizeof small) {
    out.append(small, size_t(n));
    return;
  }
  std::string big(size_t(n) + 1, '\0');
  va_start(ap, spec);
  std::vsnprintf(big.data(), big.size(), spec, ap);
  va_end(ap);
  out.append(big.data(), size_t(n));
}

} // namespace

extern "C" int32_t mimic_vprintf(const char* format, const void* args) {
  if (!format)
    return -1;
  std::string out;
  const unsigned char* at = static_cast<const unsigned char*>(args);
  for (const char* p = format; *p;) {
    if (*p != '%') {
      out.push_back(*p++);
      continue;
    }
    if (p[1] == '%') {
      out.push_back('%');
      p += 2;
      continue;
    }
    // %[flags][width][.precision][length]conversion
    const char* start = p++;
    while (*p && std::strchr("-+ #0", *p))
      ++p;
    while (*p >= '0' && *p <= '9')
      ++p;
    if (*p == '.') {
      ++p;
      while (*p >= '0' && *p <= '9')
        ++p;
    }
    int longs = 0;
    bool wide = false;
    while (*p && std::strchr("hlLqjzt", *p)) {
      if (*p == 'l' || *p == 'q')
        ++longs;
      if (*p == 'j' || *p == 'z' || *p == 't' || *p == 'q')
        wide = true;
      ++p;
    }
    char conversion = *p ? *p++ : '\0';
    // The spec without its length modifiers, with the one printf needs for the value.
    std::string spec(start, size_t(p - start));
    std::string bare;
    for (char ch : spec)
      if (!std::strchr("hlLqjzt", ch))
        bare.push_back(ch);
    auto with_length = [&](const char* length) {
      std::string s = bare;
      s.insert(s.size() - 1, length);
      return s;
    };
    if (!args && conversion && conversion != '%') {
      out += spec;
      continue;
    }
    switch (conversion) {
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o':
    case 'c':
      if (longs >= 1 || wide)
        append_formatted(out, with_length("ll").c_str(), next_argument<long long>(at));
      else
        append_formatted(out, bare.c_str(), next_argument<int>(at));
      break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
      append_formatted(out, bare.c_str(), next_argument<double>(at));
      break;
    case 's': {
      const char* text = reinterpret_cast<const char*>(next_argument<uint64_t>(at));
      append_formatted(out, bare.c_str(), text ? text : "(null)");
      break;
    }
    case 'p':
      append_formatted(out, bare.c_str(), reinterpret_cast<void*>(next_argument<uint64_t>(at)));
      break;
    default: // not a conversion CUDA knows: printed as written
      out += spec;
      break;
    }
  }
  flockfile(stdout);
  fwrite(out.data(), 1, out.size(), stdout);
  funlockfile(stdout);
  return int32_t(out.size());
}

extern "C" void mimic_assert_fail(const BlockState* block, uint32_t t, const char* message, const char* file,
                                  uint32_t line, const char* function) {
  using R = SpecialRegister;
  const uint32_t nx = block->block_dim[0], ny = block->block_dim[1];
  std::fprintf(stderr, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n",
               file ? file : "?", line, function ? function : "?", block->sreg[size_t(R::CtaidX)],
               block->sreg[size_t(R::CtaidY)], block->sreg[size_t(R::CtaidZ)], t % nx, (t / nx) % ny, t / (nx * ny),
               message ? message : "?");
}

namespace {

// An mbarrier object: pending arrivals (20 bits), expected arrivals (20), pending
// transaction bytes (signed, 23), phase parity (1). A block's threads run on one host
// thread, but an mbarrier in global memory may be shared: updates are atomic.
struct Mbarrier {
  uint32_t pending, expected;
  int32_t tx;
  uint32_t phase;
  static Mbarrier unpack(uint64_t w) {
    Mbarrier m;
    m.pending = uint32_t(w & 0xfffff);
    m.expected = uint32_t((w >> 20) & 0xfffff);
    m.tx = int32_t(uint32_t((w >> 40) & 0x7fffff) << 9) >> 9;
    m.phase = uint32_t(w >> 63);
    return m;
  }
  uint64_t pack() const {
    return uint64_t(pending & 0xfffff) | uint64_t(expected & 0xfffff) << 20 | uint64_t(uint32_t(tx) & 0x7fffff) << 40 |
           uint64_t(phase & 1) << 63;
  }
  void complete_if_done() {
    if (pending == 0 && tx <= 0) {
      phase ^= 1;
      pending = expected;
      tx = 0;
    }
  }
};

template <typename F> uint64_t update(void* bar, F&& change) {
  auto* word = static_cast<uint64_t*>(bar);
  uint64_t old = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  for (;;) {
    Mbarrier m = Mbarrier::unpack(old);
    change(m);
    if (__atomic_compare_exchange_n(word, &old, m.pack(), false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return old;
  }
}

} // namespace

extern "C" uint64_t mimic_clock64() { return __builtin_ia32_rdtsc(); }

extern "C" uint64_t mimic_globaltimer() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

extern "C" void mimic_mbarrier_init(void* bar, uint32_t count) {
  Mbarrier m{count, count, 0, 0};
  __atomic_store_n(static_cast<uint64_t*>(bar), m.pack(), __ATOMIC_RELEASE);
}

extern "C" uint64_t mimic_mbarrier_arrive(void* bar, uint32_t count, uint32_t drop) {
  uint64_t old = update(bar, [&](Mbarrier& m) {
    m.pending = m.pending > count ? m.pending - count : 0;
    if (drop)
      m.expected = m.expected > count ? m.expected - count : 0;
    m.complete_if_done();
  });
  return Mbarrier::unpack(old).phase; // the token: the phase this arrival belongs to
}

extern "C" void mimic_mbarrier_tx(void* bar, int32_t delta) {
  update(bar, [&](Mbarrier& m) {
    m.tx += delta;
    if (delta < 0)
      m.complete_if_done();
  });
}

extern "C" uint32_t mimic_mbarrier_phase(const void* bar) {
  return Mbarrier::unpack(__atomic_load_n(static_cast<const uint64_t*>(bar), __ATOMIC_ACQUIRE)).phase;
}

namespace {

// Blocks of the device heap, so that MIMIC_CHECK=memory accepts accesses to them.
std::mutex& heap_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::map<uintptr_t, size_t>& heap_blocks() {
  static auto* m = new std::map<uintptr_t, size_t>;
  return *m;
}

} // namespace

extern "C" void* mimic_device_malloc(uint64_t bytes) {
  void* p = std::malloc(bytes ? bytes : 1);
  if (p) {
    std::lock_guard lock(heap_mutex());
    heap_blocks()[reinterpret_cast<uintptr_t>(p)] = bytes ? bytes : 1;
  }
  return p;
}

extern "C" void mimic_device_free(void* pointer) {
  if (!pointer)
    return;
  {
    std::lock_guard lock(heap_mutex());
    heap_blocks().erase(reinterpret_cast<uintptr_t>(pointer));
  }
  std::free(pointer);
}

extern "C" uint32_t mimic_check_access(const BlockState* block, uint32_t t, const void* p, uint64_t bytes,
                                       uint32_t line, uint32_t flags) {
  const bool is_store = flags & 1, shared_space = flags & 2;
  auto* check = static_cast<cpu::LaunchCheck*>(block->check);
  const uint8_t* a = static_cast<const uint8_t*>(p);
  // Accesses are aligned to their size on a GPU (vectors to the whole vector).
  if (bytes && (bytes & (bytes - 1)) == 0 && (reinterpret_cast<uintptr_t>(p) & (bytes - 1))) {
    if (check && !check->reported.exchange(true)) {
      char text[384];
      std::snprintf(text, sizeof text, "MIMIC_CHECK: kernel '%s', PTX line %u: misaligned %s of %llu bytes at %p",
                    check->kernel, line, (flags & 1) ? "write" : "read", (unsigned long long)bytes, p);
      log_error(text);
    }
    return 2;
  }
  auto inside = [&](const uint8_t* base, uint64_t size) { return a >= base && a + bytes <= base + size; };
  if (inside(block->shared, block->shared_bytes))
    return 0;
  if (inside(block->local, block->local_stride * block->nthreads))
    return 0;
  if (check && check->accessible && check->accessible(p, bytes))
    return 0;
  if (cpu::device_heap_contains(p, bytes))
    return 0;
  if (check && !check->reported.exchange(true)) {
    using R = SpecialRegister;
    const uint32_t nx = block->block_dim[0], ny = block->block_dim[1];
    char text[512];
    std::snprintf(text, sizeof text,
                  "MIMIC_CHECK: kernel '%s', PTX line %u: invalid %s of %llu bytes at %p%s by block (%u, %u, %u) "
                  "thread (%u, %u, %u)",
                  check->kernel, line, is_store ? "write" : "read", (unsigned long long)bytes, p,
                  shared_space ? " (outside the block's shared memory)" : "", block->sreg[size_t(R::CtaidX)],
                  block->sreg[size_t(R::CtaidY)], block->sreg[size_t(R::CtaidZ)], t % nx, (t / nx) % ny,
                  t / (nx * ny));
    log_error(text);
  }
  return 1;
}

} // namespace mimic::codegen

namespace mimic::cpu {

bool device_heap_contains(const void* p, size_t bytes) {
  std::lock_guard lock(codegen::heap_mutex());
  auto& blocks = codegen::heap_blocks();
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = blocks.upper_bound(a);
  if (it == blocks.begin())
    return false;
  --it;
  return a + bytes <= it->first + it->second;
}

} // namespace mimic::cpu
