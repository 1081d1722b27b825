// The checks of a matmul (cublasLtMatmul, the heuristic and cublasLtMatmulAlgoCheck): its
// descriptors are resolved into a MatmulArgs record or rejected with cuBLASLt's status
// and a reason. NOT_SUPPORTED for what cuBLASLt documents as unsupported or Mimic does not
// compute; INVALID_VALUE for impossible or conflicting values.
#pragma once

#include "libs/cublaslt/descriptors.h"
#include "libs/cublaslt/lt_backend.h"

namespace mimic::cublaslt {

// The types of a matmul, as an algorithm records them.
struct MatmulTypes {
  int32_t compute, scale, a, b, c, d;
  bool operator==(const MatmulTypes&) const = default;
};

// Whether cuBLASLt documents the combination and Mimic computes it; check_types also says
// why not.
bool known_types(const MatmulTypes& types);
cublasStatus_t check_types(const MatmulTypes& types);

// Everything but the data pointers and scalars; `c` may be NULL (C is laid out as D).
cublasStatus_t describe_matmul(const void* desc, const void* a, const void* b, const void* c,
                               const void* d, MatmulArgs* out, MatmulTypes* types);

// Adds cublasLtMatmul's pointers and scalars to `args` described from `desc`.
cublasStatus_t bind_matmul_data(const MatmulDesc& desc, const void* alpha, const void* A,
                                const void* B, const void* beta, const void* C, void* D,
                                MatmulArgs* args);

// The scalar at `p` of scale type `type` (CUDA_R_16F, CUDA_R_32F or CUDA_R_64F).
double read_scalar(const void* p, cudaDataType_t type);

} // namespace mimic::cublaslt
