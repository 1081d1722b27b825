// cuGetProcAddress over the table generated from cudaTypedefs.h: a name resolves to the
// export of its highest PFN version not above the caller's CUDA version, its _ptds/_ptsz
// variant when the caller asks for per-thread default stream semantics. Unimplemented
// entry points resolve to their stubs, so that a later call says what is missing.
#include "driver/api_tables.h"
#include "driver/driver_impl.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace mimic::driver {
namespace {

struct Lookup {
  const mimic_proc_entry* entry = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
};

std::pair<const mimic_proc_entry*, const mimic_proc_entry*> entries_named(const char* name) {
  const mimic_proc_entry* begin = mimic_proc_entries;
  const mimic_proc_entry* end = begin + mimic_proc_entry_count;
  auto less = [](const mimic_proc_entry& a, const mimic_proc_entry& b) {
    return std::strcmp(a.name, b.name) < 0;
  };
  return std::equal_range(begin, end, mimic_proc_entry{name, 0, 0, nullptr}, less);
}

// The highest version not above `cuda_version` among the entries of one kind.
const mimic_proc_entry* newest(const mimic_proc_entry* begin, const mimic_proc_entry* end,
                               int cuda_version, bool per_thread) {
  const mimic_proc_entry* best = nullptr;
  for (const mimic_proc_entry* e = begin; e != end; ++e)
    if (bool(e->per_thread) == per_thread && e->version <= cuda_version &&
        (!best || e->version > best->version))
      best = e;
  return best;
}

Lookup find_entry(const char* name, int cuda_version, cuuint64_t flags) {
  auto [begin, end] = entries_named(name);
  if (begin == end) return {};
  const mimic_proc_entry* found = nullptr;
  if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
    found = newest(begin, end, cuda_version, true);
  if (!found) found = newest(begin, end, cuda_version, false);
  if (!found) return {nullptr, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT};
  return {found, CU_GET_PROC_ADDRESS_SUCCESS};
}

} // namespace

namespace impl {

CUresult cuGetProcAddress_v12000(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult* symbolStatus) {
  if (!pfn || !symbol) return CUDA_ERROR_INVALID_VALUE;
  Lookup lookup = find_entry(symbol, cudaVersion, flags);
  if (symbolStatus) *symbolStatus = lookup.status;
  if (!lookup.entry) {
    *pfn = nullptr;
    return CUDA_ERROR_NOT_FOUND;
  }
  *pfn = reinterpret_cast<void*>(lookup.entry->function);
  return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v11030(const char* symbol, void** pfn, int cudaVersion,
                                 cuuint64_t flags) {
  return cuGetProcAddress_v12000(symbol, pfn, cudaVersion, flags, nullptr);
}

} // namespace impl
} // namespace mimic::driver
