// Everything the generated exports call (namespace mimic::cublaslt::impl), by family.
#pragma once

#include "libs/cublaslt/api_algo.h"
#include "libs/cublaslt/api_boundary.h"
#include "libs/cublaslt/api_context.h"
#include "libs/cublaslt/api_descriptors.h"
#include "libs/cublaslt/api_matmul.h"
