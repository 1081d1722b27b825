#include "libs/cublaslt/matmul_check.h"

#include "libs/common/half.h"
#include "libs/cublaslt/failure.h"

#include <cstring>
#include <string>

namespace mimic::cublaslt {
namespace {

struct TypeRow {
  cublasComputeType_t compute;
  cudaDataType_t scale, ab, cd;
};

// cuBLASLt's table for cublasLtMatmul without narrow (fp8/fp4), integer and complex types:
// those rows are documented but Mimic does not compute them (NOT_SUPPORTED).
constexpr TypeRow matmul_types[] = {
    {CUBLAS_COMPUTE_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_FAST_16F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_FAST_16BF, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
    {CUBLAS_COMPUTE_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F},
    {CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F},
};

// The _PEDANTIC compute types compute as their defaults here (Mimic never reduces precision).
int32_t without_pedantic(int32_t compute) {
  switch (compute) {
  case CUBLAS_COMPUTE_16F_PEDANTIC:
    return CUBLAS_COMPUTE_16F;
  case CUBLAS_COMPUTE_32F_PEDANTIC:
    return CUBLAS_COMPUTE_32F;
  case CUBLAS_COMPUTE_64F_PEDANTIC:
    return CUBLAS_COMPUTE_64F;
  case CUBLAS_COMPUTE_32I_PEDANTIC:
    return CUBLAS_COMPUTE_32I;
  default:
    return compute;
  }
}

bool decode_epilogue(uint32_t epilogue, EpilogueOps* ops) {
  EpilogueOps o;
  switch (epilogue) {
  case CUBLASLT_EPILOGUE_DEFAULT:
    break;
  case CUBLASLT_EPILOGUE_RELU:
  case CUBLASLT_EPILOGUE_RELU_AUX:
  case CUBLASLT_EPILOGUE_RELU_BIAS:
  case CUBLASLT_EPILOGUE_RELU_AUX_BIAS:
    o.relu = true;
    break;
  case CUBLASLT_EPILOGUE_GELU:
  case CUBLASLT_EPILOGUE_GELU_AUX:
  case CUBLASLT_EPILOGUE_GELU_BIAS:
  case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
    o.gelu = true;
    break;
  case CUBLASLT_EPILOGUE_BIAS:
    break;
  case CUBLASLT_EPILOGUE_DRELU:
  case CUBLASLT_EPILOGUE_DRELU_BGRAD:
    o.drelu = true;
    break;
  case CUBLASLT_EPILOGUE_DGELU:
  case CUBLASLT_EPILOGUE_DGELU_BGRAD:
    o.dgelu = true;
    break;
  case CUBLASLT_EPILOGUE_BGRADA:
    o.bgrad_a = true;
    break;
  case CUBLASLT_EPILOGUE_BGRADB:
    o.bgrad_b = true;
    break;
  default:
    return false;
  }
  bool forward = o.relu || o.gelu || epilogue == CUBLASLT_EPILOGUE_BIAS;
  o.bias = forward && (epilogue & CUBLASLT_EPILOGUE_BIAS);
  o.aux_out = forward && (epilogue & 128);
  o.bgrad = (o.drelu || o.dgelu) && (epilogue & 16);
  *ops = o;
  return true;
}

std::string layout_text(const char* name, const Layout& l) {
  return std::string(name) + " (" + std::to_string(l.rows) + "x" + std::to_string(l.cols) +
         ", ld " + std::to_string(l.ld) + (l.order == CUBLASLT_ORDER_ROW ? ", row-major)" : ")");
}

cublasStatus_t check_layout(const char* name, const Layout& l, bool broadcast_ok) {
  if (l.order != CUBLASLT_ORDER_COL && l.order != CUBLASLT_ORDER_ROW)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                std::string(name) + " has memory order " + std::to_string(l.order) +
                    "; Mimic computes CUBLASLT_ORDER_COL and CUBLASLT_ORDER_ROW only");
  if (l.plane_offset != 0)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, std::string(name) + " is planar complex");
  if (l.batch_mode != CUBLASLT_BATCH_MODE_STRIDED &&
      l.batch_mode != CUBLASLT_BATCH_MODE_POINTER_ARRAY)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                std::string(name) + " has batch mode " + std::to_string(l.batch_mode));
  if (l.rows > uint64_t(INT64_MAX) || l.cols > uint64_t(INT64_MAX))
    return fail(CUBLAS_STATUS_INVALID_VALUE, layout_text(name, l) + " is too large");
  uint64_t inner = l.order == CUBLASLT_ORDER_COL ? l.rows : l.cols;
  bool ld_ok = l.ld >= 0 && (uint64_t(l.ld) >= (inner ? inner : 1) || (broadcast_ok && l.ld == 0));
  if (!ld_ok)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                layout_text(name, l) + ": the leading dimension is smaller than the " +
                    (l.order == CUBLASLT_ORDER_COL ? "rows" : "columns"));
  if (l.batch_count < 1)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                std::string(name) + " has batch count " + std::to_string(l.batch_count));
  if (l.batch_stride < 0)
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string(name) + " has a negative batch stride");
  return CUBLAS_STATUS_SUCCESS;
}

MatrixArg matrix_arg(const Layout& l) {
  MatrixArg m;
  m.type = cudaDataType_t(l.type);
  m.rows = int64_t(l.rows);
  m.cols = int64_t(l.cols);
  m.ld = l.ld;
  m.row_major = l.order == CUBLASLT_ORDER_ROW;
  m.batch_stride = l.batch_stride;
  return m;
}

bool valid_op(int32_t op) {
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

cublasStatus_t check_scaling(const MatmulDesc& desc) {
  // Scale factors and amax belong to narrow-precision (fp8/fp4) matmuls; cuBLASLt rejects
  // them for others (a C scale it allows, which Mimic does not compute).
  if (desc.c_scale)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "a C scale factor (CUBLASLT_MATMUL_DESC_C_SCALE_POINTER)");
  if (desc.a_scale || desc.b_scale || desc.d_scale || desc.amax_d || desc.aux_scale ||
      desc.aux_amax || desc.d_out_scale)
    return fail(
        CUBLAS_STATUS_INVALID_VALUE,
        "scale factor or amax pointers are set for a matmul without narrow-precision types");
  if (desc.a_scale_mode || desc.b_scale_mode || desc.c_scale_mode || desc.d_scale_mode ||
      desc.aux_scale_mode || desc.d_out_scale_mode)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "scaling modes are set for a matmul without narrow-precision types");
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t check_epilogue(const MatmulDesc& desc, MatmulArgs& args) {
  if (!decode_epilogue(desc.epilogue, &args.ops))
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, "epilogue " + std::to_string(desc.epilogue));
  const EpilogueOps& ops = args.ops;
  bool activation_with_bias = (ops.bias && (ops.relu || ops.gelu)) || ops.bgrad;
  if (args.d.row_major && (activation_with_bias || ops.uses_aux()))
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "epilogue " + std::to_string(desc.epilogue) +
                    " with a row-major D (cuBLASLt supports neither activations with bias nor "
                    "auxiliary outputs there)");
  if (args.pointer_arrays && desc.epilogue != CUBLASLT_EPILOGUE_DEFAULT)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, "an epilogue with pointer-array batches");
  args.bias_type = desc.bias_data_type == -1 ? args.d.type : cudaDataType_t(desc.bias_data_type);
  if (ops.uses_bias_pointer() && args.bias_type != args.d.type)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, "bias type " + data_type_name(args.bias_type) +
                                                 " with D of " + data_type_name(args.d.type) +
                                                 " (cuBLASLt's bias has D's type)");
  args.bias_stride = desc.bias_batch_stride;
  if (!ops.uses_aux()) return CUBLAS_STATUS_SUCCESS;
  args.aux_type = desc.aux_data_type == -1 ? args.d.type : cudaDataType_t(desc.aux_data_type);
  if (!ops.relu_mask() && args.aux_type != args.d.type)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "auxiliary data type " +
                                                 data_type_name(args.aux_type) + " with D of " +
                                                 data_type_name(args.d.type));
  int64_t multiple = ops.relu_mask() ? 128 : 8;
  args.aux_ld = desc.aux_ld;
  args.aux_stride = desc.aux_batch_stride;
  if (args.aux_ld < args.m || args.aux_ld % multiple)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "epilogue auxiliary leading dimension " + std::to_string(args.aux_ld) +
                    " must be a multiple of " + std::to_string(multiple) + " and at least " +
                    std::to_string(args.m) + " (the rows of D)");
  if (args.aux_stride < 0 || args.aux_stride % multiple)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "epilogue auxiliary batch stride " + std::to_string(args.aux_stride) +
                    " must be a non-negative multiple of " + std::to_string(multiple));
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace

bool known_types(const MatmulTypes& t) {
  int32_t compute = without_pedantic(t.compute);
  bool known = false;
  for (const TypeRow& row : matmul_types)
    known |= row.compute == compute && row.scale == t.scale && row.ab == t.a && row.ab == t.b &&
             row.cd == t.c && row.cd == t.d;
  return known;
}

cublasStatus_t check_types(const MatmulTypes& t) {
  if (known_types(t)) return CUBLAS_STATUS_SUCCESS;
  return fail(CUBLAS_STATUS_NOT_SUPPORTED,
              "types " + compute_type_name(t.compute) + ", scale " + data_type_name(t.scale) +
                  ", A " + data_type_name(t.a) + ", B " + data_type_name(t.b) + ", C " +
                  data_type_name(t.c) + ", D " + data_type_name(t.d) +
                  " (Mimic computes cuBLASLt's f16/bf16/f32/f64 combinations)");
}

cublasStatus_t describe_matmul(const void* desc_handle, const void* a_handle, const void* b_handle,
                               const void* c_handle, const void* d_handle, MatmulArgs* out,
                               MatmulTypes* types) {
  const MatmulDesc* desc = live<MatmulDesc>(desc_handle);
  const Layout* a = live<Layout>(a_handle);
  const Layout* b = live<Layout>(b_handle);
  const Layout* d = live<Layout>(d_handle);
  const Layout* c = c_handle ? live<Layout>(c_handle) : d;
  if (!desc) return fail(CUBLAS_STATUS_INVALID_VALUE, "the matmul descriptor is not initialised");
  if (!a || !b || !c || !d)
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string("the layout of ") +
                                                 (!a   ? "A"
                                                  : !b ? "B"
                                                  : !c ? "C"
                                                       : "D") +
                                                 " is not initialised");
  *types = {desc->compute_type, desc->scale_type, int32_t(a->type),
            int32_t(b->type),   int32_t(c->type), int32_t(d->type)};
  if (cublasStatus_t s = check_types(*types)) return s;
  if (!valid_op(desc->transa) || !valid_op(desc->transb))
    return fail(CUBLAS_STATUS_INVALID_VALUE, "transa " + std::to_string(desc->transa) +
                                                 " / transb " + std::to_string(desc->transb));
  if (desc->transc != CUBLAS_OP_N)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, "a transposed C (only CUBLAS_OP_N is supported)");
  if (desc->fill_mode != CUBLAS_FILL_MODE_FULL)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, "a fill mode other than CUBLAS_FILL_MODE_FULL");
  if (cublasStatus_t s = check_scaling(*desc)) return s;
  const char* names[] = {"A", "B", "C", "D"};
  const Layout* layouts[] = {a, b, c, d};
  for (int i = 0; i < 4; ++i)
    if (cublasStatus_t s = check_layout(names[i], *layouts[i], i == 2 && c != d)) return s;
  MatmulArgs args;
  args.double_precision = without_pedantic(desc->compute_type) == CUBLAS_COMPUTE_64F ||
                          desc->compute_type == CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT;
  args.trans_a = desc->transa != CUBLAS_OP_N;
  args.trans_b = desc->transb != CUBLAS_OP_N;
  args.a = matrix_arg(*a);
  args.b = matrix_arg(*b);
  args.c = matrix_arg(*c);
  args.d = matrix_arg(*d);
  args.m = args.d.rows;
  args.n = args.d.cols;
  args.k = args.trans_a ? args.a.rows : args.a.cols;
  int64_t a_rows = args.trans_a ? args.a.cols : args.a.rows;
  int64_t b_rows = args.trans_b ? args.b.cols : args.b.rows;
  int64_t b_cols = args.trans_b ? args.b.rows : args.b.cols;
  if (a_rows != args.m || b_cols != args.n || b_rows != args.k)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "op(A) of " + layout_text("A", *a) +
                                                 " times op(B) of " + layout_text("B", *b) +
                                                 " does not give " + layout_text("D", *d));
  if (c->rows != d->rows || c->cols != d->cols || c->order != d->order)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                layout_text("C", *c) + " differs from " + layout_text("D", *d));
  if (a->batch_count != d->batch_count || b->batch_count != d->batch_count ||
      c->batch_count != d->batch_count)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "the batch counts of A, B, C and D differ");
  if (a->batch_mode != d->batch_mode || b->batch_mode != d->batch_mode ||
      c->batch_mode != d->batch_mode)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "the batch modes of A, B, C and D differ");
  args.batch = d->batch_count;
  args.pointer_arrays = d->batch_mode == CUBLASLT_BATCH_MODE_POINTER_ARRAY;
  if (desc->pointer_mode < CUBLASLT_POINTER_MODE_HOST ||
      desc->pointer_mode > CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "pointer mode " + std::to_string(desc->pointer_mode));
  args.scalars.type = cudaDataType_t(desc->scale_type);
  args.scalars.mode = cublasLtPointerMode_t(desc->pointer_mode);
  args.scalars.alpha_vector_stride = desc->alpha_vector_batch_stride;
  if (args.scalars.beta_zero() && args.scalars.alpha_vector_stride != 0)
    return fail(
        CUBLAS_STATUS_INVALID_VALUE,
        "an alpha vector batch stride with CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO");
  if (cublasStatus_t s = check_epilogue(*desc, args)) return s;
  if (desc->emulation) {
    const EmulationDesc* emulation = live<EmulationDesc>(desc->emulation);
    if (!emulation)
      return fail(CUBLAS_STATUS_INVALID_VALUE, "the emulation descriptor is not initialised");
    args.emulation_bits = emulation->mantissa_bit_count_pointer;
  }
  *out = args;
  return CUBLAS_STATUS_SUCCESS;
}

double read_scalar(const void* p, cudaDataType_t type) {
  switch (type) {
  case CUDA_R_16F: {
    uint16_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return libs::half_bits_to_float(bits);
  }
  case CUDA_R_64F: {
    double v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  default: {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  }
}

cublasStatus_t bind_matmul_data(const MatmulDesc& desc, const void* alpha, const void* A,
                                const void* B, const void* beta, const void* C, void* D,
                                MatmulArgs* args) {
  Scalars& s = args->scalars;
  if (!alpha || (!beta && !s.beta_zero()))
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string(!alpha ? "alpha" : "beta") + " is NULL");
  switch (s.mode) {
  case CUBLASLT_POINTER_MODE_HOST:
    s.alpha = read_scalar(alpha, s.type);
    s.beta = read_scalar(beta, s.type);
    break;
  case CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST:
    s.alpha_ptr = alpha;
    s.beta = read_scalar(beta, s.type);
    break;
  case CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO:
    s.alpha_ptr = alpha;
    s.beta = 0;
    break;
  default: // device scalars or vectors, read when the work runs
    s.alpha_ptr = alpha;
    s.beta_ptr = beta;
    break;
  }
  bool empty = args->m == 0 || args->n == 0;
  if (!empty && !D) return fail(CUBLAS_STATUS_INVALID_VALUE, "D is NULL");
  if (!empty && args->k > 0 && (!A || !B))
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string(!A ? "A" : "B") + " is NULL");
  bool beta_known_zero = s.beta_zero() || (!s.beta_ptr && s.beta == 0);
  if (!empty && !C && !beta_known_zero)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "C is NULL while beta is not zero");
  if (args->ops.uses_bias_pointer() && !desc.bias)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "the epilogue needs CUBLASLT_MATMUL_DESC_BIAS_POINTER, which is NULL");
  if (args->ops.uses_aux() && !desc.aux)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "the epilogue needs CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, which is NULL");
  args->a.data = A;
  args->b.data = B;
  args->c.data = beta_known_zero ? nullptr : C;
  args->d.data = D;
  args->bias = const_cast<void*>(desc.bias);
  args->aux = desc.aux;
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace mimic::cublaslt
