// OpenBLAS, which the CPU implementations of Mimic's libraries compute with, runs as many
// threads as Mimic's own worker pool (MIMIC_THREADS), so that the two never oversubscribe
// the cores.
#pragma once

namespace mimic::libs {

// Sets OpenBLAS's thread count once per process; later calls do nothing.
void coordinate_openblas_threads();

} // namespace mimic::libs
