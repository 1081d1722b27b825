// link: -lcublasLt -lcublas
// cuBLASLt's handles (and cuBLAS handles used as cuBLASLt handles), versions, status names,
// descriptors (create, initialise in caller memory, attributes and their sizes),
// preferences, algorithms (ids, init, check, capabilities, configuration), the heuristic,
// the logger, cublasLtMatrixTransform, a matmul captured into a graph, and the statuses bad
// input gets.
#include "lt_case.h"

#include <cublas_v2.h>

cublasLtHandle_t handle;

// A small f32 problem whose descriptors the bad-input checks modify.
struct Problem {
  Matrix A{CUDA_R_32F, 4, 3, false, 1}, B{CUDA_R_32F, 3, 2, false, 1},
      D{CUDA_R_32F, 4, 2, false, 1};
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, ld;
  float alpha = 1, beta = 0;
  Problem() {
    A.buf.fill_random(), B.buf.fill_random(), D.buf.fill(0);
    A.buf.upload(), B.buf.upload(), D.buf.upload();
    LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    la = A.layout(), lb = B.layout(), ld = D.layout();
  }
  ~Problem() {
    cublasLtMatmulDescDestroy(desc);
    cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb),
        cublasLtMatrixLayoutDestroy(ld);
  }
  cublasStatus_t run(cublasLtHandle_t h = handle, const cublasLtMatmulAlgo_t* algo = nullptr) {
    cublasStatus_t s =
        cublasLtMatmul(h, desc, &alpha, A.buf.device, la, B.buf.device, lb, &beta, D.buf.device, ld,
                       D.buf.device, ld, algo, nullptr, 0, nullptr);
    cudaDeviceSynchronize();
    return s;
  }
  // D = A B (beta 0) computed correctly?
  bool right() {
    D.buf.download();
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j) {
        double acc = 0;
        for (int k = 0; k < 3; ++k)
          acc += A.at(0, i, k) * B.at(0, k, j);
        if (std::fabs(D.at(0, i, j) - acc) > 1e-5) return false;
      }
    return true;
  }
};

void versions_and_names() {
  tally.check(cublasLtGetVersion() == CUBLAS_VERSION, "cublasLtGetVersion %zu",
              cublasLtGetVersion());
  tally.check(cublasLtGetCudartVersion() == CUDART_VERSION, "cublasLtGetCudartVersion");
  int v = -1;
  tally.status(cublasLtGetProperty(MAJOR_VERSION, &v), CUBLAS_STATUS_SUCCESS, "major version");
  tally.check(v == CUBLAS_VER_MAJOR, "major version %d", v);
  tally.status(cublasLtGetProperty(PATCH_LEVEL, nullptr), CUBLAS_STATUS_INVALID_VALUE,
               "NULL property");
  tally.status(cublasLtGetProperty(libraryPropertyType(3), &v), CUBLAS_STATUS_INVALID_VALUE,
               "bad property");
  tally.check(
      !strcmp(cublasLtGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE"),
      "status name");
  tally.check(cublasLtGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED) != nullptr, "status string");
  size_t capacity = 0;
  LT_CHECK(cublasLtHeuristicsCacheSetCapacity(100));
  LT_CHECK(cublasLtHeuristicsCacheGetCapacity(&capacity));
  tally.check(capacity == 100, "heuristics cache capacity %zu", capacity);
}

void handles() {
  tally.status(cublasLtCreate(nullptr), CUBLAS_STATUS_INVALID_VALUE, "create(NULL)");
  tally.status(cublasLtDestroy(nullptr), CUBLAS_STATUS_NOT_INITIALIZED, "destroy(NULL)");
  cublasLtHandle_t h;
  LT_CHECK(cublasLtCreate(&h));
  Problem p;
  tally.status(p.run(h), CUBLAS_STATUS_SUCCESS, "matmul on a fresh handle");
  tally.check(p.right(), "matmul on a fresh handle computes A B");
  LT_CHECK(cublasLtDestroy(h));
  tally.status(cublasLtDestroy(h), CUBLAS_STATUS_NOT_INITIALIZED, "destroy twice");
  tally.status(p.run(h), CUBLAS_STATUS_NOT_INITIALIZED, "matmul on a destroyed handle");
  int foreign = 0;
  tally.status(p.run(reinterpret_cast<cublasLtHandle_t>(&foreign)), CUBLAS_STATUS_NOT_INITIALIZED,
               "matmul on a foreign pointer");
  tally.status(p.run(nullptr), CUBLAS_STATUS_NOT_INITIALIZED, "matmul on NULL");
  // cuBLAS documents that a cublasHandle_t serves as a cublasLtHandle_t.
  cublasHandle_t blas;
  tally.check(cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  Problem q;
  tally.status(q.run(reinterpret_cast<cublasLtHandle_t>(blas)), CUBLAS_STATUS_SUCCESS,
               "matmul on a cuBLAS handle");
  tally.check(q.right(), "matmul on a cuBLAS handle computes A B");
  cublasDestroy(blas);
  tally.status(q.run(reinterpret_cast<cublasLtHandle_t>(blas)), CUBLAS_STATUS_NOT_INITIALIZED,
               "matmul on a destroyed cuBLAS handle");
}

template <typename T> T get_layout(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a) {
  T v{};
  size_t written = 0;
  tally.status(cublasLtMatrixLayoutGetAttribute(l, a, &v, sizeof v, &written),
               CUBLAS_STATUS_SUCCESS, "layout get");
  tally.check(written == sizeof v, "layout attribute %d wrote %zu bytes", int(a), written);
  return v;
}

void descriptors() {
  cublasLtMatrixLayout_t l;
  LT_CHECK(cublasLtMatrixLayoutCreate(&l, CUDA_R_16F, 5, 6, 8));
  tally.check(get_layout<uint32_t>(l, CUBLASLT_MATRIX_LAYOUT_TYPE) == CUDA_R_16F, "layout type");
  tally.check(get_layout<uint64_t>(l, CUBLASLT_MATRIX_LAYOUT_ROWS) == 5, "layout rows");
  tally.check(get_layout<uint64_t>(l, CUBLASLT_MATRIX_LAYOUT_COLS) == 6, "layout cols");
  tally.check(get_layout<int64_t>(l, CUBLASLT_MATRIX_LAYOUT_LD) == 8, "layout ld");
  tally.check(get_layout<int32_t>(l, CUBLASLT_MATRIX_LAYOUT_ORDER) == CUBLASLT_ORDER_COL,
              "layout order");
  tally.check(get_layout<int32_t>(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT) == 1,
              "layout batch count");
  tally.check(get_layout<int64_t>(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET) == 0,
              "layout stride");
  int64_t stride = 99;
  LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                            sizeof stride));
  tally.check(get_layout<int64_t>(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET) == 99,
              "stride set");
  int32_t small = 1;
  tally.status(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_LD, &small, sizeof small),
               CUBLAS_STATUS_INVALID_VALUE, "layout set with the wrong size");
  tally.status(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_LD, nullptr, 8),
               CUBLAS_STATUS_INVALID_VALUE, "layout set from NULL");
  tally.status(cublasLtMatrixLayoutSetAttribute(l, cublasLtMatrixLayoutAttribute_t(15), &small, 4),
               CUBLAS_STATUS_INVALID_VALUE, "unknown layout attribute");
  size_t needed = 0;
  tally.status(
      cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ROWS, nullptr, 0, &needed),
      CUBLAS_STATUS_SUCCESS, "layout size query");
  tally.check(needed == 8, "rows need %zu bytes", needed);
  tally.status(
      cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ROWS, nullptr, 0, nullptr),
      CUBLAS_STATUS_INVALID_VALUE, "layout size query without sizeWritten");
  LT_CHECK(cublasLtMatrixLayoutDestroy(l));
  tally.status(cublasLtMatrixLayoutDestroy(l), CUBLAS_STATUS_INVALID_VALUE,
               "layout destroyed twice");
  tally.status(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_LD, &stride, 8),
               CUBLAS_STATUS_INVALID_VALUE, "set on a destroyed layout");

  // Descriptors in the caller's memory (the header's inline cublasLt*Init).
  cublasLtMatrixLayoutOpaque_t storage[3];
  cublasLtMatmulDescOpaque_t desc_storage;
  Problem p;
  LT_CHECK(cublasLtMatrixLayoutInit(&storage[0], CUDA_R_32F, 4, 3, 4));
  LT_CHECK(cublasLtMatrixLayoutInit(&storage[1], CUDA_R_32F, 3, 2, 3));
  LT_CHECK(cublasLtMatrixLayoutInit(&storage[2], CUDA_R_32F, 4, 2, 4));
  LT_CHECK(cublasLtMatmulDescInit(&desc_storage, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  tally.status(cublasLtMatmul(handle, &desc_storage, &p.alpha, p.A.buf.device, &storage[0],
                              p.B.buf.device, &storage[1], &p.beta, p.D.buf.device, &storage[2],
                              p.D.buf.device, &storage[2], nullptr, nullptr, 0, nullptr),
               CUBLAS_STATUS_SUCCESS, "matmul with initialised descriptors");
  cudaDeviceSynchronize();
  tally.check(p.right(), "matmul with initialised descriptors computes A B");
  tally.status(cublasLtMatrixLayoutInit_internal(&storage[0], 8, CUDA_R_32F, 1, 1, 1),
               CUBLAS_STATUS_ALLOC_FAILED, "layout init into too little memory");
  tally.status(cublasLtMatrixLayoutDestroy(&storage[1]), CUBLAS_STATUS_INVALID_VALUE,
               "destroying an initialised (not created) layout");
  cublasLtMatmulDescOpaque_t zeroed{};
  tally.status(cublasLtMatmul(handle, &zeroed, &p.alpha, p.A.buf.device, p.la, p.B.buf.device, p.lb,
                              &p.beta, p.D.buf.device, p.ld, p.D.buf.device, p.ld, nullptr, nullptr,
                              0, nullptr),
               CUBLAS_STATUS_INVALID_VALUE, "matmul with an uninitialised descriptor");

  // Matmul descriptor defaults and attributes.
  cublasLtMatmulDesc_t d;
  LT_CHECK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F));
  int32_t i32 = -5;
  size_t written = 0;
  LT_CHECK(cublasLtMatmulDescGetAttribute(d, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &i32, 4, &written));
  tally.check(i32 == CUBLAS_COMPUTE_32F_FAST_TF32 && written == 4, "desc compute type");
  uint32_t epilogue = 0;
  LT_CHECK(cublasLtMatmulDescGetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, 4, nullptr));
  tally.check(epilogue == CUBLASLT_EPILOGUE_DEFAULT, "default epilogue %u", epilogue);
  LT_CHECK(
      cublasLtMatmulDescGetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &i32, 4, nullptr));
  tally.check(i32 == -1, "default bias type %d", i32);
  set_attr(d, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_GELU_AUX_BIAS));
  LT_CHECK(cublasLtMatmulDescGetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, 4, nullptr));
  tally.check(epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS, "epilogue set");
  void* pointer = &i32;
  set_attr(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, pointer);
  void* back = nullptr;
  LT_CHECK(cublasLtMatmulDescGetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &back, 8, nullptr));
  tally.check(back == pointer, "bias pointer set");
  tally.status(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &i32, 4),
               CUBLAS_STATUS_INVALID_VALUE, "aux ld set with 4 bytes");
  LT_CHECK(cublasLtMatmulDescDestroy(d));

  // Preferences, transform and emulation descriptors.
  cublasLtMatmulPreference_t pref;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t u64 = 1;
  LT_CHECK(cublasLtMatmulPreferenceGetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &u64, 8, nullptr));
  tally.check(u64 == 0, "default workspace %llu", (unsigned long long)u64);
  uint32_t align = 0;
  LT_CHECK(cublasLtMatmulPreferenceGetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                &align, 4, nullptr));
  tally.check(align == 256, "default alignment %u", align);
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  cublasLtMatrixTransformDesc_t t;
  LT_CHECK(cublasLtMatrixTransformDescCreate(&t, CUDA_R_32F));
  LT_CHECK(cublasLtMatrixTransformDescGetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE,
                                                   &i32, 4, nullptr));
  tally.check(i32 == CUDA_R_32F, "transform scale type");
  LT_CHECK(cublasLtMatrixTransformDescDestroy(t));
  cublasLtEmulationDesc_t e;
  LT_CHECK(cublasLtEmulationDescCreate(&e));
  LT_CHECK(cublasLtEmulationDescGetAttribute(e, CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT,
                                             &i32, 4, nullptr));
  tally.check(i32 == 0xffff, "emulation special values 0x%x", i32);
  // Mimic computes at full precision: the retained mantissa bit count reads -1.
  Buffer bits(CUDA_R_32F, 1);
  bits.fill(5);
  bits.upload();
  int32_t* bits_pointer = static_cast<int32_t*>(bits.device);
  LT_CHECK(cublasLtEmulationDescSetAttribute(
      e, CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER, &bits_pointer,
      sizeof bits_pointer));
  set_attr(p.desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, e);
  tally.status(p.run(), CUBLAS_STATUS_SUCCESS, "matmul with an emulation descriptor");
  bits.download();
  int32_t retained = 0;
  memcpy(&retained, bits.host.data(), 4);
  tally.check(retained == -1, "retained mantissa bits %d", retained);
  set_attr(p.desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, cublasLtEmulationDesc_t(nullptr));
  LT_CHECK(cublasLtEmulationDescDestroy(e));
}

void algorithms() {
  int ids[4] = {-1, -1, -1, -1}, count = -1;
  LT_CHECK(cublasLtMatmulAlgoGetIds(handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF,
                                    CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, 4, ids, &count));
  tally.check(count == 1 && ids[0] == 0, "algorithm ids: %d, first %d", count, ids[0]);
  LT_CHECK(cublasLtMatmulAlgoGetIds(handle, CUBLAS_COMPUTE_32I, CUDA_R_32I, CUDA_R_8I, CUDA_R_8I,
                                    CUDA_R_32I, CUDA_R_32I, 4, ids, &count));
  tally.check(count == 0, "no algorithm for int8 (%d)", count);
  tally.status(cublasLtMatmulAlgoGetIds(handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F,
                                        CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 0, ids, &count),
               CUBLAS_STATUS_INVALID_VALUE, "ids with requestedAlgoCount 0");
  cublasLtMatmulAlgo_t algo;
  tally.status(cublasLtMatmulAlgoInit(handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F,
                                      CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 5, &algo),
               CUBLAS_STATUS_INVALID_VALUE, "algo init with an unknown id");
  tally.status(cublasLtMatmulAlgoInit(handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8I, CUDA_R_8I,
                                      CUDA_R_8I, CUDA_R_8I, 0, &algo),
               CUBLAS_STATUS_NOT_SUPPORTED, "algo init for unsupported types");
  LT_CHECK(cublasLtMatmulAlgoInit(handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                  CUDA_R_32F, CUDA_R_32F, 0, &algo));
  int32_t i32 = -1;
  LT_CHECK(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT, &i32,
                                             4, nullptr));
  tally.check(i32 == 1, "strided batch support");
  LT_CHECK(
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &i32, 4, nullptr));
  tally.check(i32 == 0, "no split-K");
  uint32_t mask = 0;
  LT_CHECK(
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_EPILOGUE_MASK, &mask, 4, nullptr));
  tally.check((mask & CUBLASLT_EPILOGUE_GELU_AUX_BIAS) == CUBLASLT_EPILOGUE_GELU_AUX_BIAS &&
                  (mask & CUBLASLT_EPILOGUE_BGRADB),
              "epilogue mask 0x%x", mask);
  size_t needed = 0;
  LT_CHECK(
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, nullptr, 0, &needed));
  tally.check(needed == 4, "one tile id (%zu bytes)", needed);
  uint32_t tiles[8];
  LT_CHECK(cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles, sizeof tiles,
                                             &needed));
  tally.check(needed == 4 && tiles[0] == CUBLASLT_MATMUL_TILE_UNDEFINED, "tile ids");
  LT_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &i32, 4, nullptr));
  tally.check(i32 == 0, "algo id %d", i32);
  tally.status(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &i32, 4),
               CUBLAS_STATUS_INVALID_VALUE, "algo id is read-only");

  Problem p;
  cublasLtMatmulHeuristicResult_t result{};
  tally.status(cublasLtMatmulAlgoCheck(handle, p.desc, p.la, p.lb, p.ld, p.ld, &algo, &result),
               CUBLAS_STATUS_SUCCESS, "algo check");
  tally.check(result.workspaceSize == 0 && result.state == CUBLAS_STATUS_SUCCESS,
              "algo check result");
  tally.status(p.run(handle, &algo), CUBLAS_STATUS_SUCCESS, "matmul with an initialised algo");
  tally.check(p.right(), "matmul with an initialised algo computes A B");
  int32_t splits = 4;
  LT_CHECK(
      cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits, 4));
  tally.status(cublasLtMatmulAlgoCheck(handle, p.desc, p.la, p.lb, p.ld, p.ld, &algo, &result),
               CUBLAS_STATUS_NOT_SUPPORTED, "algo check with split-K");
  tally.status(p.run(handle, &algo), CUBLAS_STATUS_NOT_SUPPORTED, "matmul with split-K");
  cublasLtMatmulAlgo_t other;
  LT_CHECK(cublasLtMatmulAlgoInit(handle, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F,
                                  CUDA_R_16F, CUDA_R_16F, 0, &other));
  tally.status(p.run(handle, &other), CUBLAS_STATUS_INVALID_VALUE, "matmul with an algo for f16");
  cublasLtMatmulAlgo_t zero{};
  tally.status(p.run(handle, &zero), CUBLAS_STATUS_INVALID_VALUE,
               "matmul with an uninitialised algo");

  // The heuristic.
  int returned = -1;
  tally.status(cublasLtMatmulAlgoGetHeuristic(handle, p.desc, p.la, p.lb, p.ld, p.ld, nullptr, 1,
                                              &result, &returned),
               CUBLAS_STATUS_SUCCESS, "heuristic without preference");
  tally.check(returned == 1, "heuristic returned %d", returned);
  tally.status(cublasLtMatmulAlgoGetHeuristic(handle, p.desc, p.la, p.lb, p.ld, p.ld, nullptr, 0,
                                              &result, &returned),
               CUBLAS_STATUS_INVALID_VALUE, "heuristic with requestedAlgoCount 0");
  cublasLtMatmulPreference_t pref;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t tensor_only = CUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA |
                         CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_TYPE_MASK |
                         CUBLASLT_NUMERICAL_IMPL_FLAGS_OP_INPUT_TYPE_MASK;
  LT_CHECK(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_IMPL_MASK, &tensor_only, 8));
  tally.status(cublasLtMatmulAlgoGetHeuristic(handle, p.desc, p.la, p.lb, p.ld, p.ld, pref, 1,
                                              &result, &returned),
               CUBLAS_STATUS_NOT_SUPPORTED, "heuristic excluding FMA algorithms");
  tally.check(returned == 0, "nothing returned (%d)", returned);
  LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  cublasLtMatrixLayout_t i8a, i8b, i32d;
  LT_CHECK(cublasLtMatrixLayoutCreate(&i8a, CUDA_R_8I, 4, 3, 4));
  LT_CHECK(cublasLtMatrixLayoutCreate(&i8b, CUDA_R_8I, 3, 2, 3));
  LT_CHECK(cublasLtMatrixLayoutCreate(&i32d, CUDA_R_32I, 4, 2, 4));
  cublasLtMatmulDesc_t int_desc;
  LT_CHECK(cublasLtMatmulDescCreate(&int_desc, CUBLAS_COMPUTE_32I, CUDA_R_32I));
  tally.status(cublasLtMatmulAlgoGetHeuristic(handle, int_desc, i8a, i8b, i32d, i32d, nullptr, 1,
                                              &result, &returned),
               CUBLAS_STATUS_NOT_SUPPORTED, "heuristic for int8 (not computed by Mimic)");
  tally.check(returned == 0, "nothing returned for int8 (%d)", returned);
  cublasLtMatmulDescDestroy(int_desc);
  cublasLtMatrixLayoutDestroy(i8a), cublasLtMatrixLayoutDestroy(i8b),
      cublasLtMatrixLayoutDestroy(i32d);
}

template <typename T, typename A>
void with_layout(cublasLtMatrixLayout_t l, A attr, T value, Problem& p, cublasStatus_t want,
                 const char* what) {
  T old{};
  LT_CHECK(cublasLtMatrixLayoutGetAttribute(l, attr, &old, sizeof old, nullptr));
  LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, attr, &value, sizeof value));
  tally.status(p.run(), want, what);
  LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, attr, &old, sizeof old));
}

template <typename T>
void with_desc(cublasLtMatmulDescAttributes_t attr, T value, Problem& p, cublasStatus_t want,
               const char* what) {
  T old{};
  LT_CHECK(cublasLtMatmulDescGetAttribute(p.desc, attr, &old, sizeof old, nullptr));
  set_attr(p.desc, attr, value);
  tally.status(p.run(), want, what);
  set_attr(p.desc, attr, old);
}

void bad_input() {
  Problem p;
  tally.status(p.run(), CUBLAS_STATUS_SUCCESS, "the problem itself");
  with_layout(p.la, CUBLASLT_MATRIX_LAYOUT_ROWS, uint64_t(5), p, CUBLAS_STATUS_INVALID_VALUE,
              "A rows differing from D's");
  with_layout(p.lb, CUBLASLT_MATRIX_LAYOUT_ROWS, uint64_t(4), p, CUBLAS_STATUS_INVALID_VALUE,
              "k of A and B differing");
  with_layout(p.la, CUBLASLT_MATRIX_LAYOUT_LD, int64_t(3), p, CUBLAS_STATUS_INVALID_VALUE,
              "A's ld below its rows");
  with_layout(p.ld, CUBLASLT_MATRIX_LAYOUT_LD, int64_t(-4), p, CUBLAS_STATUS_INVALID_VALUE,
              "negative ld");
  with_layout(p.la, CUBLASLT_MATRIX_LAYOUT_ORDER, int32_t(CUBLASLT_ORDER_COL32), p,
              CUBLAS_STATUS_NOT_SUPPORTED, "COL32 order");
  with_layout(p.la, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t(2), p, CUBLAS_STATUS_INVALID_VALUE,
              "batch counts differing");
  with_layout(p.ld, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t(0), p, CUBLAS_STATUS_INVALID_VALUE,
              "batch count 0");
  with_layout(p.la, CUBLASLT_MATRIX_LAYOUT_TYPE, uint32_t(CUDA_R_16F), p,
              CUBLAS_STATUS_NOT_SUPPORTED, "A f16 with B f32");
  with_layout(p.ld, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, int64_t(64), p,
              CUBLAS_STATUS_NOT_SUPPORTED, "planar complex");
  with_desc(CUBLASLT_MATMUL_DESC_TRANSA, int32_t(7), p, CUBLAS_STATUS_INVALID_VALUE, "bad transa");
  with_desc(CUBLASLT_MATMUL_DESC_TRANSC, int32_t(CUBLAS_OP_T), p, CUBLAS_STATUS_NOT_SUPPORTED,
            "transposed C");
  with_desc(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(3), p, CUBLAS_STATUS_NOT_SUPPORTED,
            "unknown epilogue");
  with_desc(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_BIAS), p,
            CUBLAS_STATUS_INVALID_VALUE, "bias epilogue without a bias pointer");
  with_desc(CUBLASLT_MATMUL_DESC_POINTER_MODE, int32_t(9), p, CUBLAS_STATUS_INVALID_VALUE,
            "bad pointer mode");
  with_desc(CUBLASLT_MATMUL_DESC_SCALE_TYPE, int32_t(CUDA_R_64F), p, CUBLAS_STATUS_NOT_SUPPORTED,
            "f64 scale for f32 data");
  with_desc(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, (const void*)&p, p, CUBLAS_STATUS_INVALID_VALUE,
            "a scale factor for f32 data");
  with_desc(CUBLASLT_MATMUL_DESC_FILL_MODE, int32_t(CUBLAS_FILL_MODE_LOWER), p,
            CUBLAS_STATUS_NOT_SUPPORTED, "a triangular fill mode");

  // Epilogue buffers and their layouts.
  Buffer aux(CUDA_R_32F, 64), bias(CUDA_R_32F, 8);
  set_attr(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux.device);
  set_attr(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias.device);
  set_attr(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_GELU_AUX));
  with_desc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(4), p, CUBLAS_STATUS_INVALID_VALUE,
            "GELU aux ld not a multiple of 8");
  with_desc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(8), p, CUBLAS_STATUS_SUCCESS,
            "GELU aux ld 8");
  set_attr(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(8));
  with_desc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, int32_t(CUDA_R_16F), p,
            CUBLAS_STATUS_INVALID_VALUE, "GELU aux of another type than D");
  with_desc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, int64_t(12), p,
            CUBLAS_STATUS_INVALID_VALUE, "GELU aux batch stride not a multiple of 8");
  with_desc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, (void*)nullptr, p,
            CUBLAS_STATUS_INVALID_VALUE, "GELU aux without a pointer");
  set_attr(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_RELU_AUX));
  with_desc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(64), p, CUBLAS_STATUS_INVALID_VALUE,
            "ReLU mask ld not a multiple of 128");
  with_desc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(128), p, CUBLAS_STATUS_SUCCESS,
            "ReLU mask ld 128");
  set_attr(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_BIAS));
  with_desc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(CUDA_R_16BF), p,
            CUBLAS_STATUS_NOT_SUPPORTED, "a bf16 bias for f32 D");
  set_attr(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_GELU_BIAS));
  with_layout(p.ld, CUBLASLT_MATRIX_LAYOUT_ORDER, int32_t(CUBLASLT_ORDER_ROW), p,
              CUBLAS_STATUS_NOT_SUPPORTED, "GELU with bias on a row-major D");
  set_attr(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_DEFAULT));

  // Pointers.
  auto call = [&](const void* alpha, const void* A, const void* beta, const void* C, void* D,
                  cublasLtMatrixLayout_t lc) {
    cublasStatus_t s = cublasLtMatmul(handle, p.desc, alpha, A, p.la, p.B.buf.device, p.lb, beta, C,
                                      lc, D, p.ld, nullptr, nullptr, 0, nullptr);
    cudaDeviceSynchronize();
    return s;
  };
  float one = 1, zero = 0;
  void* D = p.D.buf.device;
  tally.status(call(nullptr, p.A.buf.device, &zero, D, D, p.ld), CUBLAS_STATUS_INVALID_VALUE,
               "NULL alpha");
  tally.status(call(&one, nullptr, &zero, D, D, p.ld), CUBLAS_STATUS_INVALID_VALUE, "NULL A");
  tally.status(call(&one, p.A.buf.device, &zero, D, nullptr, p.ld), CUBLAS_STATUS_INVALID_VALUE,
               "NULL D");
  tally.status(call(&one, p.A.buf.device, &one, nullptr, D, p.ld), CUBLAS_STATUS_INVALID_VALUE,
               "NULL C with beta 1");
  tally.status(call(&one, p.A.buf.device, &zero, nullptr, D, p.ld), CUBLAS_STATUS_SUCCESS,
               "NULL C with beta 0");
  tally.status(call(&one, p.A.buf.device, &zero, nullptr, D, nullptr), CUBLAS_STATUS_SUCCESS,
               "NULL Cdesc (C laid out as D)");
  tally.check(p.right(), "NULL C and Cdesc with beta 0 compute A B");
  cublasLtMatrixLayout_t wide;
  LT_CHECK(cublasLtMatrixLayoutCreate(&wide, CUDA_R_32F, 4, 2, 6));
  tally.status(call(&one, p.A.buf.device, &one, D, D, wide), CUBLAS_STATUS_INVALID_VALUE,
               "in place with another layout for C");
  cublasLtMatrixLayoutDestroy(wide);
}

std::vector<std::string> logged;
void on_log(int level, const char* function, const char* message) {
  logged.push_back(std::to_string(level) + " " + function + ": " + message);
}

void logger() {
  LT_CHECK(cublasLtLoggerSetCallback(on_log));
  LT_CHECK(cublasLtLoggerSetLevel(1));
  tally.status(cublasLtLoggerSetLevel(7), CUBLAS_STATUS_INVALID_VALUE, "log level 7");
  Problem p;
  with_layout(p.la, CUBLASLT_MATRIX_LAYOUT_LD, int64_t(2), p, CUBLAS_STATUS_INVALID_VALUE,
              "a logged error");
  tally.check(logged.size() == 1 && logged[0].rfind("1 cublasLtMatmul: ", 0) == 0 &&
                  logged[0].find("leading dimension") != std::string::npos,
              "the error's log: %s", logged.empty() ? "(none)" : logged[0].c_str());
  LT_CHECK(cublasLtLoggerSetMask(16));
  logged.clear();
  p.run();
  tally.check(logged.size() == 1 && logged[0].find("5 cublasLtMatmul") == 0, "API trace: %s",
              logged.empty() ? "(none)" : logged[0].c_str());
  LT_CHECK(cublasLtLoggerForceDisable());
  logged.clear();
  p.run();
  LT_CHECK(cublasLtLoggerSetMask(31));
  p.run();
  tally.check(logged.empty(), "logging after ForceDisable (%zu messages)", logged.size());
}

void transform() {
  // C (row-major f16) = 2 A^T + 0.5 B, A column-major f32 3x4, B row-major f32 4x3.
  Matrix A(CUDA_R_32F, 3, 4, false, 2, 1, 1), B(CUDA_R_32F, 4, 3, true, 2),
      C(CUDA_R_16F, 4, 3, true, 2, 2);
  A.buf.fill_random(), B.buf.fill_random(), C.buf.fill(0);
  A.buf.upload(), B.buf.upload(), C.buf.upload();
  cublasLtMatrixTransformDesc_t t;
  LT_CHECK(cublasLtMatrixTransformDescCreate(&t, CUDA_R_32F));
  int32_t op = CUBLAS_OP_T;
  LT_CHECK(
      cublasLtMatrixTransformDescSetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &op, 4));
  float alpha = 2, beta = 0.5;
  cublasLtMatrixLayout_t la = A.layout(), lb = B.layout(), lc = C.layout();
  tally.status(cublasLtMatrixTransform(handle, t, &alpha, A.buf.device, la, &beta, B.buf.device, lb,
                                       C.buf.device, lc, nullptr),
               CUBLAS_STATUS_SUCCESS, "transform");
  cudaDeviceSynchronize();
  C.buf.download();
  int bad = 0;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 3; ++j) {
        double want = 2 * A.at(b, j, i) + 0.5 * B.at(b, i, j);
        bad += std::fabs(C.at(b, i, j) - want) > 2e-3 * (std::fabs(want) + 1);
      }
  tally.check(bad == 0, "transform: %d wrong values", bad);
  tally.status(cublasLtMatrixTransform(handle, t, &alpha, A.buf.device, nullptr, &beta,
                                       B.buf.device, lb, C.buf.device, lc, nullptr),
               CUBLAS_STATUS_INVALID_VALUE, "transform with A but no Adesc");
  op = CUBLAS_OP_N;
  LT_CHECK(
      cublasLtMatrixTransformDescSetAttribute(t, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &op, 4));
  tally.status(cublasLtMatrixTransform(handle, t, &alpha, A.buf.device, la, &beta, B.buf.device, lb,
                                       C.buf.device, lc, nullptr),
               CUBLAS_STATUS_INVALID_VALUE, "transform of mismatched shapes");
  int32_t col32 = CUBLASLT_ORDER_COL32;
  LT_CHECK(cublasLtMatrixLayoutSetAttribute(lb, CUBLASLT_MATRIX_LAYOUT_ORDER, &col32, 4));
  tally.status(cublasLtMatrixTransform(handle, t, &alpha, nullptr, nullptr, &beta, B.buf.device, lb,
                                       C.buf.device, lc, nullptr),
               CUBLAS_STATUS_NOT_SUPPORTED, "transform from COL32");
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatrixTransformDescDestroy(t);
}

// A matmul recorded by stream capture runs at every launch of the graph.
void graph_capture() {
  Problem p;
  p.beta = 1; // D += A B
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  tally.status(cublasLtMatmul(handle, p.desc, &p.alpha, p.A.buf.device, p.la, p.B.buf.device, p.lb,
                              &p.beta, p.D.buf.device, p.ld, p.D.buf.device, p.ld, nullptr, nullptr,
                              0, stream),
               CUBLAS_STATUS_SUCCESS, "matmul while capturing");
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, stream));
  CUDA_CHECK(cudaGraphLaunch(exec, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  p.D.buf.download();
  int bad = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j) {
      double acc = 0;
      for (int k = 0; k < 3; ++k)
        acc += p.A.at(0, i, k) * p.B.at(0, k, j);
      bad += std::fabs(p.D.at(0, i, j) - 2 * acc) > 1e-5;
    }
  tally.check(bad == 0, "a captured matmul launched twice: %d wrong values", bad);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

int main() {
  LT_CHECK(cublasLtCreate(&handle));
  versions_and_names();
  handles();
  descriptors();
  algorithms();
  bad_input();
  transform();
  graph_capture();
  logger();
  LT_CHECK(cublasLtDestroy(handle));
  return tally.finish("cublaslt_api");
}
