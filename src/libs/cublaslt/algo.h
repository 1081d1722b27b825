// Matmul algorithms. Mimic's CPU backend has one: the GEMM of OpenBLAS (operands widened
// to f32 blocks where they are f16/bf16) followed by the epilogue applied to the output
// column by column while it is in cache. It needs no workspace. An algorithm records the
// types it was made for, in the semi-opaque cublasLtMatmulAlgo_t, after a type cookie.
#pragma once

#include "libs/cublaslt/matmul_check.h"

#include <cublasLt.h>

namespace mimic::cublaslt {

constexpr int32_t gemm_then_epilogue_algo = 0;

struct Algo {
  static constexpr uint32_t cookie = 0x4d4c414c; // "MLAL"
  uint32_t magic;
  int32_t id;
  uint32_t tile;
  uint32_t stages;
  int32_t splitk;
  uint32_t reduction_scheme;
  uint32_t cta_swizzling;
  uint32_t custom_option;
  uint16_t inner_shape;
  uint16_t cluster_shape;
  MatmulTypes types;
};
static_assert(sizeof(Algo) <= sizeof(cublasLtMatmulAlgo_t));

void init_algo(const MatmulTypes& types, cublasLtMatmulAlgo_t* out);

// Whether `algo` is one of ours, made for `types`, configured as it can run.
cublasStatus_t check_algo(const cublasLtMatmulAlgo_t* algo, const MatmulTypes& types);

} // namespace mimic::cublaslt
