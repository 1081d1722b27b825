// Settings read from the environment (once, on first use).
#pragma once

#include <utility>

namespace mimic::config {

// MIMIC_COMPUTE_CAPABILITY ("8.6", "86", "12.0"); 8.6 when unset. An unusable value is
// reported once and ignored.
std::pair<int, int> compute_capability();

} // namespace mimic::config
