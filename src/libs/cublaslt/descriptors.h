// cuBLASLt's descriptors (matrix layouts, matmul and transform descriptors, preferences,
// emulation descriptors) in the semi-opaque storage cublasLt.h gives them: an application
// may create one (cublasLt*Create) or initialise one in its own memory
// (cublasLt*Init_internal, behind the header's inline cublasLt*Init). Each starts with a
// type cookie, so a NULL, foreign, uninitialised or destroyed descriptor is an
// INVALID_VALUE, not a crash. Fields hold the attributes with the types cublasLt.h
// documents; the *_attributes.def files map attribute enumerators to fields.
#pragma once

#include <cublasLt.h>

#include <cstdint>

namespace mimic::cublaslt {

struct Layout {
  static constexpr uint32_t cookie = 0x4d4c4c59; // "MLLY"
  uint32_t magic;
  uint32_t type; // cudaDataType
  uint64_t rows;
  uint64_t cols;
  int64_t ld;
  int32_t order; // cublasLtOrder_t
  int32_t batch_count;
  int64_t batch_stride;
  int64_t plane_offset;
  uint32_t batch_mode; // cublasLtBatchMode_t
};

struct MatmulDesc {
  static constexpr uint32_t cookie = 0x4d4c4d44; // "MLMD"
  uint32_t magic;
  int32_t compute_type; // cublasComputeType_t
  int32_t scale_type;   // cudaDataType
  int32_t pointer_mode; // cublasLtPointerMode_t
  int32_t transa, transb, transc;
  int32_t fill_mode;
  uint32_t epilogue;
  const void* bias;
  int64_t bias_batch_stride;
  void* aux;
  int64_t aux_ld;
  int64_t aux_batch_stride;
  int64_t alpha_vector_batch_stride;
  int32_t sm_count_target;
  const void* a_scale;
  const void* b_scale;
  const void* c_scale;
  const void* d_scale;
  void* amax_d;
  int32_t aux_data_type; // -1: the type of D
  void* aux_scale;
  void* aux_amax;
  int8_t fast_accum;
  int32_t bias_data_type; // -1: the type of D
  int32_t a_scale_mode, b_scale_mode, c_scale_mode, d_scale_mode, aux_scale_mode;
  void* d_out_scale;
  int32_t d_out_scale_mode;
  cublasLtEmulationDesc_t emulation;
};

struct Preference {
  static constexpr uint32_t cookie = 0x4d4c5046; // "MLPF"
  uint32_t magic;
  uint32_t search_mode;
  uint64_t max_workspace_bytes;
  uint32_t reduction_scheme_mask;
  uint32_t min_alignment_a, min_alignment_b, min_alignment_c, min_alignment_d;
  float max_waves_count;
  uint64_t impl_mask;
};

struct TransformDesc {
  static constexpr uint32_t cookie = 0x4d4c5444; // "MLTD"
  uint32_t magic;
  int32_t scale_type;
  int32_t pointer_mode;
  int32_t transa, transb;
};

struct EmulationDesc {
  static constexpr uint32_t cookie = 0x4d4c4544; // "MLED"
  uint32_t magic;
  int32_t strategy;
  int32_t special_values_support;
  int32_t mantissa_control;
  int32_t max_mantissa_bit_count;
  int32_t mantissa_bit_offset;
  int32_t* mantissa_bit_count_pointer;
};

static_assert(sizeof(Layout) <= sizeof(cublasLtMatrixLayoutOpaque_t));
static_assert(sizeof(MatmulDesc) <= sizeof(cublasLtMatmulDescOpaque_t));
static_assert(sizeof(Preference) <= sizeof(cublasLtMatmulPreferenceOpaque_t));
static_assert(sizeof(TransformDesc) <= sizeof(cublasLtMatrixTransformDescOpaque_t));
static_assert(sizeof(EmulationDesc) <= sizeof(cublasLtEmulationDescOpaque_t));

// The descriptor `handle` points to when it holds a live one of type D, else nullptr.
template <typename D> D* live(const void* handle) {
  auto* d = static_cast<D*>(const_cast<void*>(handle));
  return d && d->magic == D::cookie ? d : nullptr;
}

// The preference cublasLtMatmulAlgoGetHeuristic assumes without one.
Preference default_preference();

} // namespace mimic::cublaslt
