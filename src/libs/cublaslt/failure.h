// Failed checks say why: the reason goes to cuBLASLt's log at the error level
// (CUBLASLT_LOG_LEVEL=1), and a NOT_SUPPORTED one also once to Mimic's own log, since it
// names something Mimic (or cuBLASLt) cannot do rather than a mistake of the caller.
#pragma once

#include <cublasLt.h>

#include <string>

namespace mimic::cublaslt {

cublasStatus_t fail(cublasStatus_t status, const std::string& reason);

// `name` of a cudaDataType_t, cublasComputeType_t or cublasLtEpilogue_t for messages.
std::string data_type_name(int type);
std::string compute_type_name(int type);

} // namespace mimic::cublaslt
