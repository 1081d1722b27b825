#include "fatbin/select.h"

#include <charconv>

namespace mimic::fatbin {

std::string PtxTarget::name() const {
  std::string s = "sm_" + std::to_string(sm);
  if (variant)
    s += variant;
  return s;
}

std::optional<PtxTarget> parse_target_name(std::string_view name) {
  std::string_view digits;
  if (name.starts_with("sm_"))
    digits = name.substr(3);
  else if (name.starts_with("compute_"))
    digits = name.substr(8);
  else
    return std::nullopt;
  PtxTarget t;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), t.sm);
  if (ec != std::errc() || ptr == digits.data())
    return std::nullopt;
  std::string_view rest(ptr, digits.data() + digits.size() - ptr);
  if (rest == "a" || rest == "f")
    t.variant = rest[0];
  else if (!rest.empty())
    return std::nullopt;
  return t;
}

PtxHeader scan_ptx_header(std::string_view text) {
  PtxHeader h;
  auto word_after = [&](size_t pos) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t'))
      ++pos;
    size_t end = pos;
    while (end < text.size() && (isalnum((unsigned char)text[end]) || text[end] == '_' || text[end] == '.'))
      ++end;
    return text.substr(pos, end - pos);
  };
  // Directives come before any function; scanning the first 64 KiB is plenty.
  std::string_view head = text.substr(0, 65536);
  if (size_t v = head.find(".version"); v != std::string_view::npos) {
    std::string_view w = word_after(v + 8);
    if (size_t dot = w.find('.'); dot != std::string_view::npos) {
      std::from_chars(w.data(), w.data() + dot, h.version_major);
      std::from_chars(w.data() + dot + 1, w.data() + w.size(), h.version_minor);
    }
  }
  if (size_t t = head.find(".target"); t != std::string_view::npos)
    h.target = parse_target_name(word_after(t + 7));
  return h;
}

bool target_runs_on(const PtxTarget& target, unsigned device_sm) {
  switch (target.variant) {
  case 'a':
    return target.sm == device_sm;
  case 'f':
    return target.sm <= device_sm && target.sm / 10 == device_sm / 10;
  default:
    return target.sm <= device_sm;
  }
}

PtxTarget entry_target(const Entry& entry) { return PtxTarget{entry.sm_arch, entry.arch_variant()}; }

std::vector<PtxCandidate> ptx_candidates(const Fatbin& fatbin) {
  std::vector<PtxCandidate> out;
  for (size_t i = 0; i < fatbin.entries.size(); ++i) {
    const Entry& e = fatbin.entries[i];
    if (e.is_ptx())
      out.push_back({i, entry_target(e), e.version_major, e.version_minor});
  }
  return out;
}

static int variant_rank(char v) { return v == 0 ? 2 : v == 'f' ? 1 : 0; }

Result<PtxChoice> select_ptx(std::span<const PtxCandidate> candidates, unsigned device_sm) {
  const PtxCandidate* best = nullptr;
  auto better = [](const PtxCandidate& a, const PtxCandidate& b) {
    if (a.target.sm != b.target.sm)
      return a.target.sm > b.target.sm;
    if (variant_rank(a.target.variant) != variant_rank(b.target.variant))
      return variant_rank(a.target.variant) > variant_rank(b.target.variant);
    if (a.version_major != b.version_major)
      return a.version_major > b.version_major;
    return a.version_minor > b.version_minor;
  };
  for (const PtxCandidate& c : candidates)
    if (target_runs_on(c.target, device_sm) && (!best || better(c, *best)))
      best = &c;
  if (best)
    return PtxChoice{best->index, best->target, false};

  // Nothing a device of this capability would run: the CPU emulates every architecture, so
  // take the lowest generic PTX, or failing that the lowest family- or architecture-specific
  // one (the caller warns that it is above the device).
  const PtxCandidate* fallback = nullptr;
  auto lower = [](const PtxCandidate& a, const PtxCandidate& b) {
    if (variant_rank(a.target.variant) != variant_rank(b.target.variant))
      return variant_rank(a.target.variant) > variant_rank(b.target.variant);
    return a.target.sm < b.target.sm;
  };
  for (const PtxCandidate& c : candidates)
    if (!fallback || lower(c, *fallback))
      fallback = &c;
  if (fallback)
    return PtxChoice{fallback->index, fallback->target, true};

  std::string present;
  for (const PtxCandidate& c : candidates)
    present += (present.empty() ? "" : ", ") + c.target.name();
  return Error("no PTX usable on a device of compute capability " + std::to_string(device_sm / 10) +
               "." + std::to_string(device_sm % 10) +
               (present.empty() ? std::string(": the binary carries no PTX")
                                : " (PTX present for: " + present + ")"));
}

} // namespace mimic::fatbin
