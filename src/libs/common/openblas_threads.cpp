#include "libs/common/openblas_threads.h"

#include "support/config.h"

#include <cblas.h>
#include <mutex>

namespace mimic::libs {

void coordinate_openblas_threads() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(int(config::worker_threads())); });
}

} // namespace mimic::libs
