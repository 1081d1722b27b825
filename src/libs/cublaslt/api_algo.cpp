#include "libs/cublaslt/api_algo.h"

#include "libs/cublaslt/algo.h"
#include "libs/cublaslt/attributes.h"
#include "libs/cublaslt/context.h"
#include "libs/cublaslt/failure.h"

#include <cstddef>
#include <cstring>
#include <string>

namespace mimic::cublaslt {
namespace {

size_t element_size(int32_t type) {
  switch (type) {
  case CUDA_R_16F:
  case CUDA_R_16BF:
    return 2;
  case CUDA_R_64F:
    return 8;
  default:
    return 4;
  }
}

uint64_t input_flag(int32_t type) {
  switch (type) {
  case CUDA_R_16F:
    return CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16F;
  case CUDA_R_16BF:
    return CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16BF;
  case CUDA_R_64F:
    return CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_64F;
  default:
    return CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_32F;
  }
}

// FMA instructions (OpenBLAS), accumulating in f64 for CUBLAS_COMPUTE_64F, else f32.
uint64_t numerical_flags(const MatmulTypes& t) {
  bool f64 = t.d == CUDA_R_64F;
  return CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA | input_flag(t.a) |
         (f64 ? CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_64F
              : CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F);
}

constexpr uint32_t supported_epilogues =
    CUBLASLT_EPILOGUE_DEFAULT | CUBLASLT_EPILOGUE_RELU_AUX_BIAS | CUBLASLT_EPILOGUE_DRELU_BGRAD |
    CUBLASLT_EPILOGUE_GELU_AUX_BIAS | CUBLASLT_EPILOGUE_DGELU_BGRAD | CUBLASLT_EPILOGUE_BGRADA |
    CUBLASLT_EPILOGUE_BGRADB;

constexpr uint32_t supported_pointer_modes =
    CUBLASLT_POINTER_MODE_MASK_HOST | CUBLASLT_POINTER_MODE_MASK_DEVICE |
    CUBLASLT_POINTER_MODE_MASK_DEVICE_VECTOR |
    CUBLASLT_POINTER_MODE_MASK_ALPHA_DEVICE_VECTOR_BETA_ZERO |
    CUBLASLT_POINTER_MODE_MASK_ALPHA_DEVICE_VECTOR_BETA_HOST;

#define MIMIC_LT_ATTR(name, field) {name, offsetof(Algo, field), sizeof(Algo::field)},
constexpr AttributeSlot config_slots[] = {
#include "libs/cublaslt/algo_config_attributes.def"
};
#undef MIMIC_LT_ATTR

// A list-valued capability: size 0 asks for the size; a larger buffer takes the list.
cublasStatus_t write_list(const uint32_t* values, size_t count, void* buf, size_t size,
                          size_t* written) {
  size_t needed = count * sizeof(uint32_t);
  if (size == 0) {
    if (!written)
      return fail(CUBLAS_STATUS_INVALID_VALUE, "size 0 asks for the size, but sizeWritten is NULL");
    *written = needed;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (!buf || size < needed)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "the list needs " + std::to_string(needed) + " bytes, not " + std::to_string(size));
  std::memcpy(buf, values, needed);
  if (written) *written = needed;
  return CUBLAS_STATUS_SUCCESS;
}

template <typename T> cublasStatus_t write_value(T value, void* buf, size_t size, size_t* written) {
  return write_attribute(&value, sizeof value, buf, size, written, "algorithm capability");
}

const Algo* live_algo(const cublasLtMatmulAlgo_t* algo) {
  auto* a = reinterpret_cast<const Algo*>(algo);
  return a && a->magic == Algo::cookie ? a : nullptr;
}

} // namespace

void init_algo(const MatmulTypes& types, cublasLtMatmulAlgo_t* out) {
  *out = cublasLtMatmulAlgo_t{};
  Algo* a = reinterpret_cast<Algo*>(out);
  a->magic = Algo::cookie;
  a->id = gemm_then_epilogue_algo;
  a->splitk = 1;
  a->types = types;
}

cublasStatus_t check_algo(const cublasLtMatmulAlgo_t* algo, const MatmulTypes& types) {
  const Algo* a = live_algo(algo);
  if (!a) return fail(CUBLAS_STATUS_INVALID_VALUE, "the algorithm is not initialised");
  if (!(a->types == types))
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "the algorithm was made for other data or compute types");
  if (a->splitk > 1 || a->reduction_scheme != CUBLASLT_REDUCTION_SCHEME_NONE || a->cta_swizzling ||
      a->custom_option || a->tile != CUBLASLT_MATMUL_TILE_UNDEFINED ||
      a->stages != CUBLASLT_MATMUL_STAGES_UNDEFINED)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "an algorithm configuration its capabilities do not offer (split-K, reduction "
                "schemes, swizzling, custom options, tiles or stages)");
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace mimic::cublaslt

namespace mimic::cublaslt::impl {

cublasStatus_t no_context() {
  return fail(CUBLAS_STATUS_NOT_INITIALIZED, "the handle is not a live cuBLASLt handle");
}

#define MIMIC_LT_CONTEXT(name, h)                                                                  \
  Context* name = find_context(h);                                                                 \
  if (!name) return no_context()

cublasStatus_t algo_get_ids(cublasLtHandle_t handle, cublasComputeType_t compute,
                            cudaDataType_t scale, cudaDataType_t a, cudaDataType_t b,
                            cudaDataType_t c, cudaDataType_t d, int requested, int ids[],
                            int* returned) {
  MIMIC_LT_CONTEXT(context, handle);
  if (requested <= 0 || !ids || !returned)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "requestedAlgoCount " + std::to_string(requested) +
                                                 (ids && returned ? "" : " or a NULL array"));
  *returned = 0;
  // Unsupported types have no algorithm: an empty list, not an error.
  if (!known_types({compute, scale, a, b, c, d})) return CUBLAS_STATUS_SUCCESS;
  ids[0] = gemm_then_epilogue_algo;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t algo_init(cublasLtHandle_t handle, cublasComputeType_t compute, cudaDataType_t scale,
                         cudaDataType_t a, cudaDataType_t b, cudaDataType_t c, cudaDataType_t d,
                         int id, cublasLtMatmulAlgo_t* algo) {
  MIMIC_LT_CONTEXT(context, handle);
  if (!algo) return fail(CUBLAS_STATUS_INVALID_VALUE, "the algorithm pointer is NULL");
  if (id != gemm_then_epilogue_algo)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "algorithm id " + std::to_string(id) + " is unknown (Mimic has algorithm 0)");
  MatmulTypes types{compute, scale, a, b, c, d};
  if (cublasStatus_t s = check_types(types)) return s;
  init_algo(types, algo);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t algo_check(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                          cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                          cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                          const cublasLtMatmulAlgo_t* algo,
                          cublasLtMatmulHeuristicResult_t* result) {
  MIMIC_LT_CONTEXT(context, handle);
  if (!algo || !result) return fail(CUBLAS_STATUS_INVALID_VALUE, "algo or result is NULL");
  MatmulArgs args;
  MatmulTypes types;
  if (cublasStatus_t s = describe_matmul(desc, a, b, c, d, &args, &types)) return s;
  if (cublasStatus_t s = check_algo(algo, types)) return s;
  libs::StreamTarget target;
  LtBackend* backend = nullptr;
  if (cublasStatus_t s = select_backend(*context, nullptr, &target, &backend)) return s;
  if (cublasStatus_t s = backend->supports(args)) return s;
  result->workspaceSize = 0;
  result->state = CUBLAS_STATUS_SUCCESS;
  result->wavesCount = 1.0f;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t algo_cap_get_attribute(const cublasLtMatmulAlgo_t* algo,
                                      cublasLtMatmulAlgoCapAttributes_t attr, void* buf,
                                      size_t size, size_t* written) {
  const Algo* a = live_algo(algo);
  if (!a) return fail(CUBLAS_STATUS_INVALID_VALUE, "the algorithm is not initialised");
  static constexpr uint32_t undefined[] = {0};
  switch (attr) {
  case CUBLASLT_ALGO_CAP_SPLITK_SUPPORT:
  case CUBLASLT_ALGO_CAP_UPLO_SUPPORT:
  case CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX:
  case CUBLASLT_ALGO_CAP_CUSTOM_MEMORY_ORDER:
  case CUBLASLT_ALGO_CAP_LD_NEGATIVE:
  case CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT:
    return write_value(int32_t(0), buf, size, written);
  case CUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT:
  case CUBLASLT_ALGO_CAP_OUT_OF_PLACE_RESULT_SUPPORT:
  case CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT:
    return write_value(int32_t(1), buf, size, written);
  case CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK:
    return write_value(uint32_t(CUBLASLT_REDUCTION_SCHEME_NONE), buf, size, written);
  case CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT:
    return write_value(uint32_t(0), buf, size, written);
  case CUBLASLT_ALGO_CAP_TILE_IDS:
  case CUBLASLT_ALGO_CAP_STAGES_IDS:
    return write_list(undefined, 1, buf, size, written);
  case CUBLASLT_ALGO_CAP_POINTER_MODE_MASK:
    return write_value(supported_pointer_modes, buf, size, written);
  case CUBLASLT_ALGO_CAP_EPILOGUE_MASK:
    return write_value(supported_epilogues, buf, size, written);
  case CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS:
    return write_value(numerical_flags(a->types), buf, size, written);
  case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES:
    return write_value(uint32_t(element_size(a->types.a)), buf, size, written);
  case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES:
    return write_value(uint32_t(element_size(a->types.b)), buf, size, written);
  case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES:
    return write_value(uint32_t(element_size(a->types.c)), buf, size, written);
  case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES:
    return write_value(uint32_t(element_size(a->types.d)), buf, size, written);
  }
  return fail(CUBLAS_STATUS_INVALID_VALUE,
              "algorithm capability " + std::to_string(int(attr)) + " is unknown");
}

cublasStatus_t algo_config_set_attribute(cublasLtMatmulAlgo_t* algo,
                                         cublasLtMatmulAlgoConfigAttributes_t attr, const void* buf,
                                         size_t size) {
  Algo* a = const_cast<Algo*>(live_algo(algo));
  if (!a) return fail(CUBLAS_STATUS_INVALID_VALUE, "the algorithm is not initialised");
  if (attr == CUBLASLT_ALGO_CONFIG_ID)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "CUBLASLT_ALGO_CONFIG_ID is read-only");
  return set_attribute(a, config_slots, attr, buf, size, "algorithm configuration");
}

cublasStatus_t algo_config_get_attribute(const cublasLtMatmulAlgo_t* algo,
                                         cublasLtMatmulAlgoConfigAttributes_t attr, void* buf,
                                         size_t size, size_t* written) {
  const Algo* a = live_algo(algo);
  if (!a) return fail(CUBLAS_STATUS_INVALID_VALUE, "the algorithm is not initialised");
  return get_attribute(a, config_slots, attr, buf, size, written, "algorithm configuration");
}

cublasStatus_t algo_get_heuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                  cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                  cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                  cublasLtMatmulPreference_t preference, int requested,
                                  cublasLtMatmulHeuristicResult_t results[], int* returned) {
  MIMIC_LT_CONTEXT(context, handle);
  if (requested <= 0 || !results || !returned)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "requestedAlgoCount " + std::to_string(requested) +
                                                 (results && returned ? "" : " or a NULL array"));
  *returned = 0;
  Preference pref = default_preference();
  if (preference) {
    const Preference* given = live<Preference>(preference);
    if (!given) return fail(CUBLAS_STATUS_INVALID_VALUE, "the preference is not initialised");
    pref = *given;
  }
  MatmulArgs args;
  MatmulTypes types;
  if (cublasStatus_t s = describe_matmul(desc, a, b, c, d, &args, &types)) return s;
  libs::StreamTarget target;
  LtBackend* backend = nullptr;
  if (cublasStatus_t s = select_backend(*context, nullptr, &target, &backend)) return s;
  if (cublasStatus_t s = backend->supports(args)) return s;
  if (numerical_flags(types) & ~pref.impl_mask)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "the preference's numerical implementation mask excludes FMA-based algorithms");
  if (pref.search_mode == CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID) {
    const Algo* wanted = live_algo(&results[0].algo);
    if (!wanted || wanted->id != gemm_then_epilogue_algo)
      return fail(CUBLAS_STATUS_NOT_SUPPORTED, "a search limited to an algorithm Mimic lacks");
  }
  cublasLtMatmulHeuristicResult_t& r = results[0];
  r = cublasLtMatmulHeuristicResult_t{};
  init_algo(types, &r.algo);
  r.workspaceSize = 0;
  r.state = CUBLAS_STATUS_SUCCESS;
  r.wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace mimic::cublaslt::impl
