#include "libs/cublaslt/api_matmul.h"

#include "libs/cublaslt/algo.h"
#include "libs/cublaslt/context.h"
#include "libs/cublaslt/descriptors.h"
#include "libs/cublaslt/failure.h"
#include "libs/cublaslt/matmul_check.h"

#include <string>

namespace mimic::cublaslt::impl {
namespace {

Context* context_of(cublasLtHandle_t handle) {
  return find_context(handle);
}

bool is_float_type(uint32_t type) {
  return type == CUDA_R_16F || type == CUDA_R_16BF || type == CUDA_R_32F || type == CUDA_R_64F;
}

// One operand of a transform: absent when its pointer is NULL.
cublasStatus_t transform_operand(const char* name, const void* data, const void* layout_handle,
                                 int32_t op, const Layout& c, MatrixArg* out) {
  if (!data) return CUBLAS_STATUS_SUCCESS;
  const Layout* l = live<Layout>(layout_handle);
  if (!l)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                std::string(name) + " is given but its layout is not initialised");
  if (op != CUBLAS_OP_N && op != CUBLAS_OP_T && op != CUBLAS_OP_C)
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string("the operation on ") + name);
  bool trans = op != CUBLAS_OP_N;
  uint64_t rows = trans ? l->cols : l->rows, cols = trans ? l->rows : l->cols;
  if (rows != c.rows || cols != c.cols)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                std::string("op(") + name + ") differs in shape from C");
  if (!is_float_type(l->type))
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                std::string(name) + " of " + data_type_name(int(l->type)) +
                    " (Mimic transforms f16, bf16, f32 and f64 matrices)");
  if (l->order != CUBLASLT_ORDER_COL && l->order != CUBLASLT_ORDER_ROW)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                std::string(name) + " has memory order " + std::to_string(l->order) +
                    " (Mimic transforms CUBLASLT_ORDER_COL and CUBLASLT_ORDER_ROW)");
  uint64_t inner = l->order == CUBLASLT_ORDER_COL ? l->rows : l->cols;
  if (l->ld < 0 || uint64_t(l->ld) < (inner ? inner : 1))
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                std::string(name) + "'s leading dimension is too small");
  if (l->batch_count != c.batch_count)
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string(name) + "'s batch count differs from C's");
  out->data = data;
  out->type = cudaDataType_t(l->type);
  out->rows = int64_t(l->rows);
  out->cols = int64_t(l->cols);
  out->ld = l->ld;
  out->row_major = l->order == CUBLASLT_ORDER_ROW;
  out->batch_stride = l->batch_stride;
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace

cublasStatus_t matmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                      const void* A, cublasLtMatrixLayout_t a_desc, const void* B,
                      cublasLtMatrixLayout_t b_desc, const void* beta, const void* C,
                      cublasLtMatrixLayout_t c_desc, void* D, cublasLtMatrixLayout_t d_desc,
                      const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                      cudaStream_t stream) {
  Context* context = context_of(handle);
  if (!context)
    return fail(CUBLAS_STATUS_NOT_INITIALIZED, "the handle is not a live cuBLASLt handle");
  MatmulArgs args;
  MatmulTypes types;
  if (cublasStatus_t s = describe_matmul(desc, a_desc, b_desc, c_desc, d_desc, &args, &types))
    return s;
  // Without an algorithm cuBLASLt asks its heuristic; Mimic's one algorithm fits every
  // problem it describes. The algorithm needs no workspace, so any size will do.
  if (algo)
    if (cublasStatus_t s = check_algo(algo, types)) return s;
  if (cublasStatus_t s = bind_matmul_data(*live<MatmulDesc>(desc), alpha, A, B, beta, C, D, &args))
    return s;
  if (C && C == D && (args.c.ld != args.d.ld || args.c.batch_stride != args.d.batch_stride))
    return fail(
        CUBLAS_STATUS_INVALID_VALUE,
        "C and D are the same matrix but their layouts differ (in place needs Cdesc == Ddesc)");
  libs::StreamTarget target;
  LtBackend* backend = nullptr;
  if (cublasStatus_t s = select_backend(*context, stream, &target, &backend)) return s;
  if (cublasStatus_t s = backend->supports(args)) return s;
  if ((args.m == 0 || args.n == 0) && !args.emulation_bits) return CUBLAS_STATUS_SUCCESS;
  return backend->matmul(target, args);
}

cublasStatus_t matrix_transform(cublasLtHandle_t handle, cublasLtMatrixTransformDesc_t desc_handle,
                                const void* alpha, const void* A, cublasLtMatrixLayout_t a_desc,
                                const void* beta, const void* B, cublasLtMatrixLayout_t b_desc,
                                void* C, cublasLtMatrixLayout_t c_desc, cudaStream_t stream) {
  Context* context = context_of(handle);
  if (!context)
    return fail(CUBLAS_STATUS_NOT_INITIALIZED, "the handle is not a live cuBLASLt handle");
  const TransformDesc* desc = live<TransformDesc>(desc_handle);
  if (!desc)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "the transform descriptor is not initialised");
  const Layout* c = live<Layout>(c_desc);
  if (!c) return fail(CUBLAS_STATUS_INVALID_VALUE, "the layout of C is not initialised");
  if (desc->scale_type != CUDA_R_16F && desc->scale_type != CUDA_R_32F &&
      desc->scale_type != CUDA_R_64F)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "transform scale type " + data_type_name(desc->scale_type));
  if (desc->pointer_mode != CUBLASLT_POINTER_MODE_HOST &&
      desc->pointer_mode != CUBLASLT_POINTER_MODE_DEVICE)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "transform pointer mode " + std::to_string(desc->pointer_mode));
  TransformArgs t;
  if (cublasStatus_t s = transform_operand("C", C, c_desc, CUBLAS_OP_N, *c, &t.c)) return s;
  if (!C && c->rows && c->cols) return fail(CUBLAS_STATUS_INVALID_VALUE, "C is NULL");
  if (cublasStatus_t s = transform_operand("A", A, a_desc, desc->transa, *c, &t.a)) return s;
  if (cublasStatus_t s = transform_operand("B", B, b_desc, desc->transb, *c, &t.b)) return s;
  if ((A && !alpha) || (B && !beta))
    return fail(CUBLAS_STATUS_INVALID_VALUE, "alpha or beta is NULL for a given matrix");
  t.trans_a = desc->transa != CUBLAS_OP_N;
  t.trans_b = desc->transb != CUBLAS_OP_N;
  t.rows = int64_t(c->rows);
  t.cols = int64_t(c->cols);
  t.batch = c->batch_count;
  t.scalars.type = cudaDataType_t(desc->scale_type);
  t.scalars.mode = cublasLtPointerMode_t(desc->pointer_mode);
  if (t.scalars.mode == CUBLASLT_POINTER_MODE_HOST) {
    t.scalars.alpha = A ? read_scalar(alpha, t.scalars.type) : 0;
    t.scalars.beta = B ? read_scalar(beta, t.scalars.type) : 0;
  } else {
    t.scalars.alpha_ptr = A ? alpha : nullptr;
    t.scalars.beta_ptr = B ? beta : nullptr;
  }
  if (t.rows == 0 || t.cols == 0 || t.batch < 1) return CUBLAS_STATUS_SUCCESS;
  libs::StreamTarget target;
  LtBackend* backend = nullptr;
  if (cublasStatus_t s = select_backend(*context, stream, &target, &backend)) return s;
  return backend->transform(target, t);
}

} // namespace mimic::cublaslt::impl
