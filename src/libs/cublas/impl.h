// Everything the generated exports call (namespace mimic::cublas::impl), by family.
#pragma once

#include "libs/cublas/api_boundary.h"
#include "libs/cublas/api_extensions.h"
#include "libs/cublas/api_handle.h"
#include "libs/cublas/api_level1.h"
#include "libs/cublas/api_level2.h"
#include "libs/cublas/api_level3.h"
