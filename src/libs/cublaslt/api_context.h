// Handles, versions, properties, status names, the heuristics cache setting and the logger.
#pragma once

#include "libs/cublaslt/logger.h"

#include <cublasLt.h>

namespace mimic::cublaslt::impl {

cublasStatus_t create(cublasLtHandle_t* handle);
cublasStatus_t destroy(cublasLtHandle_t handle);
size_t get_version();
size_t get_cudart_version();
cublasStatus_t get_property(libraryPropertyType type, int* value);
const char* status_name(cublasStatus_t status);
const char* status_string(cublasStatus_t status);
cublasStatus_t heuristics_cache_get_capacity(size_t* capacity);
cublasStatus_t heuristics_cache_set_capacity(size_t capacity);

using cublaslt::logger_force_disable;
using cublaslt::logger_open_file;
using cublaslt::logger_set_callback;
using cublaslt::logger_set_file;
using cublaslt::logger_set_level;
using cublaslt::logger_set_mask;

} // namespace mimic::cublaslt::impl
