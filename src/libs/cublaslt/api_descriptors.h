// The descriptor entry points: create, initialise in caller memory, destroy, set and get
// attributes of matrix layouts, matmul and transform descriptors, preferences and
// emulation descriptors.
#pragma once

#include <cublasLt.h>

namespace mimic::cublaslt::impl {

cublasStatus_t layout_create(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                             uint64_t cols, int64_t ld);
cublasStatus_t layout_init(cublasLtMatrixLayout_t layout, size_t size, cudaDataType type,
                           uint64_t rows, uint64_t cols, int64_t ld);
cublasStatus_t layout_destroy(cublasLtMatrixLayout_t layout);
cublasStatus_t layout_set_attribute(cublasLtMatrixLayout_t layout,
                                    cublasLtMatrixLayoutAttribute_t attr, const void* buf,
                                    size_t size);
cublasStatus_t layout_get_attribute(cublasLtMatrixLayout_t layout,
                                    cublasLtMatrixLayoutAttribute_t attr, void* buf, size_t size,
                                    size_t* written);

cublasStatus_t matmul_desc_create(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                  cudaDataType_t scale);
cublasStatus_t matmul_desc_init(cublasLtMatmulDesc_t desc, size_t size, cublasComputeType_t compute,
                                cudaDataType_t scale);
cublasStatus_t matmul_desc_destroy(cublasLtMatmulDesc_t desc);
cublasStatus_t matmul_desc_set_attribute(cublasLtMatmulDesc_t desc,
                                         cublasLtMatmulDescAttributes_t attr, const void* buf,
                                         size_t size);
cublasStatus_t matmul_desc_get_attribute(cublasLtMatmulDesc_t desc,
                                         cublasLtMatmulDescAttributes_t attr, void* buf,
                                         size_t size, size_t* written);

cublasStatus_t preference_create(cublasLtMatmulPreference_t* pref);
cublasStatus_t preference_init(cublasLtMatmulPreference_t pref, size_t size);
cublasStatus_t preference_destroy(cublasLtMatmulPreference_t pref);
cublasStatus_t preference_set_attribute(cublasLtMatmulPreference_t pref,
                                        cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                        size_t size);
cublasStatus_t preference_get_attribute(cublasLtMatmulPreference_t pref,
                                        cublasLtMatmulPreferenceAttributes_t attr, void* buf,
                                        size_t size, size_t* written);

cublasStatus_t transform_desc_create(cublasLtMatrixTransformDesc_t* desc, cudaDataType scale);
cublasStatus_t transform_desc_init(cublasLtMatrixTransformDesc_t desc, size_t size,
                                   cudaDataType scale);
cublasStatus_t transform_desc_destroy(cublasLtMatrixTransformDesc_t desc);
cublasStatus_t transform_desc_set_attribute(cublasLtMatrixTransformDesc_t desc,
                                            cublasLtMatrixTransformDescAttributes_t attr,
                                            const void* buf, size_t size);
cublasStatus_t transform_desc_get_attribute(cublasLtMatrixTransformDesc_t desc,
                                            cublasLtMatrixTransformDescAttributes_t attr, void* buf,
                                            size_t size, size_t* written);

cublasStatus_t emulation_desc_create(cublasLtEmulationDesc_t* desc);
cublasStatus_t emulation_desc_init(cublasLtEmulationDesc_t desc, size_t size);
cublasStatus_t emulation_desc_destroy(cublasLtEmulationDesc_t desc);
cublasStatus_t emulation_desc_set_attribute(cublasLtEmulationDesc_t desc,
                                            cublasLtEmulationDescAttributes_t attr, const void* buf,
                                            size_t size);
cublasStatus_t emulation_desc_get_attribute(cublasLtEmulationDesc_t desc,
                                            cublasLtEmulationDescAttributes_t attr, void* buf,
                                            size_t size, size_t* written);

} // namespace mimic::cublaslt::impl
