// Which PTX a device uses. One policy, shared by every backend:
//   1. Compatible entries: a generic target sm_X with X <= the device's compute
//      capability; a family target sm_Xf when X <= CC within the same major version; an
//      architecture-specific target sm_Xa only when X equals the CC.
//   2. Among them, the highest X; on a tie generic beats family beats specific (the most
//      portable code for the same features), then the newest PTX ISA version.
//   3. Fallback when nothing is compatible: the lowest generic target above the CC,
//      marked `above_device` so the caller can warn or refuse (real hardware would refuse;
//      a translator can often still run it).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fatbin/fatbin.h"
#include "support/error.h"

namespace mimic::fatbin {

struct PtxTarget {
  unsigned sm = 0;   // 75, 90, 120, ...
  char variant = 0;  // 0, 'a' (architecture-specific) or 'f' (family)
  std::string name() const;
};

// "sm_90a" -> {90, 'a'}; "compute_75" is accepted as well.
std::optional<PtxTarget> parse_target_name(std::string_view name);

// The first `.target` and `.version` of a PTX text, found without a full parse.
struct PtxHeader {
  std::optional<PtxTarget> target;
  unsigned version_major = 0, version_minor = 0;
};
PtxHeader scan_ptx_header(std::string_view text);

struct PtxCandidate {
  size_t index = 0; // caller's identifier (e.g. entry index)
  PtxTarget target;
  unsigned version_major = 0, version_minor = 0;
};

struct PtxChoice {
  size_t index = 0;
  PtxTarget target;
  bool above_device = false;
};

bool target_runs_on(const PtxTarget& target, unsigned device_sm);

// The target an entry's header declares (sm and the a/f variant flags).
PtxTarget entry_target(const Entry& entry);

// Candidates from every PTX entry of a fatbin, indexed by entry position.
std::vector<PtxCandidate> ptx_candidates(const Fatbin& fatbin);

// Fails, naming the targets present, when nothing can be chosen.
Result<PtxChoice> select_ptx(std::span<const PtxCandidate> candidates, unsigned device_sm);

} // namespace mimic::fatbin
