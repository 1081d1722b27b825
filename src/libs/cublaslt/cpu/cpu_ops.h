// The CPU backend's operations, run on the host when their stream reaches them.
#pragma once

#include "libs/cublaslt/lt_backend.h"

namespace mimic::cublaslt::cpu {

void run_matmul(const MatmulArgs& args);
void run_transform(const TransformArgs& args);

} // namespace mimic::cublaslt::cpu
