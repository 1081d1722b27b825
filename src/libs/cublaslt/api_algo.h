// Algorithm ids, initialisation, checks, capabilities, configuration and the heuristic.
#pragma once

#include <cublasLt.h>

namespace mimic::cublaslt::impl {

cublasStatus_t algo_get_ids(cublasLtHandle_t handle, cublasComputeType_t compute,
                            cudaDataType_t scale, cudaDataType_t a, cudaDataType_t b,
                            cudaDataType_t c, cudaDataType_t d, int requested, int ids[],
                            int* returned);
cublasStatus_t algo_init(cublasLtHandle_t handle, cublasComputeType_t compute, cudaDataType_t scale,
                         cudaDataType_t a, cudaDataType_t b, cudaDataType_t c, cudaDataType_t d,
                         int id, cublasLtMatmulAlgo_t* algo);
cublasStatus_t algo_check(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                          cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                          cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                          const cublasLtMatmulAlgo_t* algo,
                          cublasLtMatmulHeuristicResult_t* result);
cublasStatus_t algo_cap_get_attribute(const cublasLtMatmulAlgo_t* algo,
                                      cublasLtMatmulAlgoCapAttributes_t attr, void* buf,
                                      size_t size, size_t* written);
cublasStatus_t algo_config_set_attribute(cublasLtMatmulAlgo_t* algo,
                                         cublasLtMatmulAlgoConfigAttributes_t attr, const void* buf,
                                         size_t size);
cublasStatus_t algo_config_get_attribute(const cublasLtMatmulAlgo_t* algo,
                                         cublasLtMatmulAlgoConfigAttributes_t attr, void* buf,
                                         size_t size, size_t* written);
cublasStatus_t algo_get_heuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                  cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                  cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                  cublasLtMatmulPreference_t preference, int requested,
                                  cublasLtMatmulHeuristicResult_t results[], int* returned);

} // namespace mimic::cublaslt::impl
