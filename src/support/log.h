// Messages to the user on stderr, prefixed "mimic: ". warn_once says a thing once per
// process (for example that a function is not implemented), however often it happens.
#pragma once

#include <string>

namespace mimic {

void log_warning(const std::string& message);
void log_error(const std::string& message);
// Returns true the first time it is called with `key` (and logs `message`).
bool warn_once(const std::string& key, const std::string& message);

} // namespace mimic
