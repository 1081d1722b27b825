// The on-disk cache of AMDGPU code: a program's optimised relocatable object for one gfx
// target, before the link that binds it to a module's runtime addresses, with what that
// link needs to know. A second load of the same PTX (in this process or a later one) skips
// lowering, optimisation and code generation and only links.
//
// Entries are keyed by a BLAKE3 hash of the program's PTX, MIMIC_CODE_ID (a hash of the code
// generator's sources), LLVM's version and the gfx target; written under a temporary name
// and renamed into place, each with a checksum (a bad one is removed and compiled again).
// Location: the `amdgpu` folder of the JIT cache (MIMIC_CACHE_DIR, else
// $XDG_CACHE_HOME/mimic, else ~/.cache/mimic); MIMIC_CACHE=0 turns it off.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/program.h"

namespace mimic::amdgpu {

struct CachedObject {
  std::string object;               // the relocatable ELF object
  std::vector<std::string> globals; // PTX variables the object refers to (bound at link)
  std::vector<bool> grid_sync;      // per kernel, in Program::kernels order
  bool device_log = false, device_heap = false, grid_workspace = false;
};

std::filesystem::path object_cache_directory(); // empty when the cache is off
std::string object_cache_key(const runtime::Program& program, std::string_view gfx);
std::optional<CachedObject> object_cache_load(const std::string& key);
void object_cache_store(const std::string& key, const CachedObject& entry);

} // namespace mimic::amdgpu
