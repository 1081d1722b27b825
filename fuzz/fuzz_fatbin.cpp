// libFuzzer target for the fatbin reader: classifies the bytes as a file (scan_file), reads
// them as a bare fatbin and as a fatbin sequence, and decompresses every entry found.
// Any crash, sanitizer report or unbounded allocation is a bug in src/fatbin.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fatbin/binary.h"
#include "fatbin/fatbin.h"

using namespace mimic::fatbin;

static void touch_entries(const Fatbin& fb) {
  for (const Entry& e : fb.entries) {
    (void)e.contents_size();
    auto contents = entry_contents(e);
    if (contents && !contents->empty()) {
      // Read the data so that a bad length is noticed by ASan.
      volatile char sink = contents->front() ^ contents->back();
      (void)sink;
    }
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);

  if (auto scanned = scan_file(bytes)) {
    for (const LocatedFatbin& located : scanned->fatbins)
      touch_entries(located.fatbin);
  }
  if (auto fb = parse_fatbin(bytes, 0x1000))
    touch_entries(*fb);
  if (auto seq = parse_fatbin_sequence(bytes))
    for (const Fatbin& fb : *seq)
      touch_entries(fb);
  return 0;
}
