// The CPU backend's on-disk cache of compiled kernels: a program's machine code (an ELF
// relocatable object, before it is linked to this process's addresses) with what the
// executor needs to know about its kernels, so that a second process skips lowering,
// optimisation and code generation.
//
// An entry is keyed by a BLAKE3 hash of the program's PTX, MIMIC_CODE_ID (a hash of the
// code generator's sources), the LLVM version, the host CPU and its features, and the
// options that change the generated code (MIMIC_CHECK=memory, the vector width, the
// MIMIC_* switches of the code generator's passes). Entries are written to a
// temporary file and renamed into place, so concurrent processes see an entry whole or not
// at all; each carries a checksum, and one that does not verify is ignored and replaced.
//
// Location: MIMIC_CACHE_DIR, else $XDG_CACHE_HOME/mimic, else ~/.cache/mimic; entries live
// in its `cpu` folder. MIMIC_CACHE=0 turns the cache off.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "runtime/program.h"

namespace mimic::cpu {

struct CachedCode {
  std::vector<codegen::LoweredKernel> kernels; // in Program::kernels order
  std::vector<std::string> globals;
  std::vector<std::pair<std::string, std::string>> address_taken;
  std::string object; // the ELF relocatable object
};

// The cache folder for CPU code; empty when the cache is off or has no home.
std::filesystem::path cache_directory();

// The entry's key (64 hex digits) for `program` compiled with these options.
std::string cache_key(const runtime::Program& program, bool check_memory);

// The key of one kernel's entry in a program compiled kernel by kernel.
std::string kernel_cache_key(const std::string& program_key, const std::string& kernel_symbol);

// The entry for `key`, or nothing when there is none or it does not verify (then it is
// removed, so the next compile replaces it).
std::optional<CachedCode> cache_load(const std::string& key);

// Stores an entry; a failure (read-only folder, full disk) is reported once and otherwise
// ignored: the cache only ever saves time.
void cache_store(const std::string& key, const CachedCode& code);

struct CacheSummary {
  std::filesystem::path directory;
  size_t entries = 0;
  uint64_t bytes = 0;
  size_t unreadable = 0; // files that are not valid entries
};
CacheSummary cache_summary();
// Removes every entry; returns how many files were removed.
size_t cache_clear();

} // namespace mimic::cpu
