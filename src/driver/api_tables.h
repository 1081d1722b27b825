/* Tables generated from the toolkit headers (driver_proc_table.c, driver_result_names.c).
 * Plain C so that they are initialised statically: the library does no work at load time. */
#ifndef MIMIC_DRIVER_API_TABLES_H
#define MIMIC_DRIVER_API_TABLES_H

#include "driver/cuda_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*mimic_any_fn)(void);

/* One PFN typedef PFN_<name>_v<version>[_ptds|_ptsz] and the export that has its type. */
struct mimic_proc_entry {
  const char* name;
  int version;
  int per_thread; /* a _ptds or _ptsz variant */
  mimic_any_fn function;
};
extern const struct mimic_proc_entry mimic_proc_entries[];
extern const unsigned mimic_proc_entry_count;

struct mimic_result_name {
  int value;
  const char* name;
};
extern const struct mimic_result_name mimic_result_names[];
extern const unsigned mimic_result_name_count;

#ifdef __cplusplus
}
#endif

#endif
