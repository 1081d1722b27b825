// Messages to the user on stderr, prefixed "mimic: ". warn_once says a thing once per
// process (for example that a function is not implemented), however often it happens.
#pragma once

#include <string>

namespace mimic {

void log_warning(const std::string& message);
void log_error(const std::string& message);
// MIMIC_VERBOSE=1: what Mimic does behind the program's back (which code tier a kernel
// runs, ...), as "mimic: note: ..." lines; nothing otherwise.
bool verbose();
void log_note(const std::string& message);
// Returns true the first time it is called with `key` (and logs `message`).
bool warn_once(const std::string& key, const std::string& message);

} // namespace mimic
