// One cublasLtMatmul problem, run through the heuristic and the matmul, and checked against
// a double-precision reference: D, D's padding (untouched), the epilogue's auxiliary output
// and bias gradients.
#pragma once

#include "lt_test.h"

struct MatmulCase {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F, ab = CUDA_R_32F, cd = CUDA_R_32F;
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  int m = 7, n = 5, k = 6, batch = 1;
  bool row_a = false, row_b = false, row_cd = false;
  bool separate_c = true;   // C != D (else in place)
  bool c_broadcast = false; // C with leading dimension 0
  double alpha = 1, beta = 0;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  cublasLtPointerMode_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  bool pointer_arrays = false;
  bool use_heuristic = true;   // else algo NULL
  bool bias_broadcast = false; // bias batch stride 0
  cudaStream_t stream = nullptr;

  std::string name() const {
    char text[256];
    snprintf(text, sizeof text,
             "compute %d %s/%s/%s %c%c m%d n%d k%d b%d order %c%c%c %s alpha %g beta %g epi %d pm "
             "%d%s%s",
             int(compute), type_name(scale), type_name(ab), type_name(cd),
             ta == CUBLAS_OP_N ? 'N' : 'T', tb == CUBLAS_OP_N ? 'N' : 'T', m, n, k, batch,
             row_a ? 'R' : 'C', row_b ? 'R' : 'C', row_cd ? 'R' : 'C',
             separate_c ? (c_broadcast ? "C-bcast" : "C!=D") : "C==D", alpha, beta, int(epilogue),
             int(pointer_mode), pointer_arrays ? " ptr-arrays" : "",
             use_heuristic ? "" : " algo=NULL");
    return text;
  }
};

struct EpilogueFlags {
  bool bias = false, aux_out = false, relu = false, gelu = false, drelu = false, dgelu = false,
       bgrad = false, bgrad_a = false, bgrad_b = false;
};

inline EpilogueFlags flags_of(cublasLtEpilogue_t e) {
  EpilogueFlags f;
  f.relu = e == CUBLASLT_EPILOGUE_RELU || e == CUBLASLT_EPILOGUE_RELU_AUX ||
           e == CUBLASLT_EPILOGUE_RELU_BIAS || e == CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
  f.gelu = e == CUBLASLT_EPILOGUE_GELU || e == CUBLASLT_EPILOGUE_GELU_AUX ||
           e == CUBLASLT_EPILOGUE_GELU_BIAS || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  f.bias = e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS ||
           e == CUBLASLT_EPILOGUE_RELU_AUX_BIAS || e == CUBLASLT_EPILOGUE_GELU_BIAS ||
           e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  f.aux_out = e == CUBLASLT_EPILOGUE_RELU_AUX || e == CUBLASLT_EPILOGUE_RELU_AUX_BIAS ||
              e == CUBLASLT_EPILOGUE_GELU_AUX || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  f.drelu = e == CUBLASLT_EPILOGUE_DRELU || e == CUBLASLT_EPILOGUE_DRELU_BGRAD;
  f.dgelu = e == CUBLASLT_EPILOGUE_DGELU || e == CUBLASLT_EPILOGUE_DGELU_BGRAD;
  f.bgrad = e == CUBLASLT_EPILOGUE_DRELU_BGRAD || e == CUBLASLT_EPILOGUE_DGELU_BGRAD;
  f.bgrad_a = e == CUBLASLT_EPILOGUE_BGRADA;
  f.bgrad_b = e == CUBLASLT_EPILOGUE_BGRADB;
  return f;
}

// A scalar of the scale type in `out` (host memory).
inline void put_scalar(cudaDataType_t t, double v, void* out) {
  store_value(out, t, 0, v);
}

inline void run_case(cublasLtHandle_t handle, const MatmulCase& c) {
  const std::string name = c.name();
  const EpilogueFlags f = flags_of(c.epilogue);
  const int m = c.m, n = c.n, k = c.k, nb = c.batch;
  const bool ta = c.ta != CUBLAS_OP_N, tb = c.tb != CUBLAS_OP_N;
  Matrix A(c.ab, ta ? k : m, ta ? m : k, c.row_a, nb, 1, 2);
  Matrix B(c.ab, tb ? n : k, tb ? k : n, c.row_b, nb, 2, 1);
  Matrix D(c.cd, m, n, c.row_cd, nb, 2, 3);
  A.buf.fill_random();
  B.buf.fill_random();
  const double sentinel = 7;
  D.buf.fill(sentinel);
  Matrix Cm;
  if (c.separate_c) {
    Cm = Matrix(c.cd, m, c.c_broadcast ? 1 : n, c.row_cd, nb, 0, 1);
    Cm.cols = n;
    if (c.c_broadcast) Cm.ld = 0;
    Cm.buf.fill_random();
    Cm.buf.upload();
  } else {
    for (int b = 0; b < nb; ++b)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j)
          D.buf.set(D.index(b, i, j), rng.uniform());
  }
  const Matrix& C = c.separate_c ? Cm : D;
  auto c_at = [&](int b, int i, int j) {
    if (c.c_broadcast) return C.buf.get(size_t(b * C.stride + (C.row_major ? i * 0 + j : i)));
    return C.at(b, i, j);
  };
  std::vector<double> c_values(size_t(nb) * m * n);
  for (int b = 0; b < nb; ++b)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        c_values[(size_t(b) * n + j) * m + i] = c_at(b, i, j);
  A.buf.upload();
  B.buf.upload();
  D.buf.upload();

  // Epilogue inputs and outputs.
  Buffer bias;
  int64_t bias_len = f.bgrad_b ? n : m;
  int64_t bias_stride = c.bias_broadcast ? 0 : bias_len;
  if (f.bias || f.bgrad || f.bgrad_a || f.bgrad_b) {
    bias = Buffer(c.cd, size_t(bias_len * nb));
    if (f.bias)
      bias.fill_random();
    else
      bias.fill(sentinel);
    bias.upload();
  }
  Buffer aux;
  bool mask = f.relu && f.aux_out ? true : f.drelu;
  int64_t aux_ld = 0, aux_stride = 0;
  if (f.aux_out || f.drelu || f.dgelu) {
    if (mask) {
      aux_ld = (m + 127) / 128 * 128 + 128; // bits
      aux_stride = aux_ld * n;
      aux = Buffer(CUDA_R_8U, size_t(aux_stride * nb / 8));
      for (size_t i = 0; i < aux.count; ++i)
        aux.set(i, double(unsigned(rng.uniform() * 1e6) & 0xff));
    } else {
      aux_ld = (m + 7) / 8 * 8 + 8;
      aux_stride = aux_ld * n;
      aux = Buffer(c.cd, size_t(aux_stride * nb));
      aux.fill_random(2);
    }
    aux.upload();
  }

  cublasLtMatmulDesc_t desc;
  LT_CHECK(cublasLtMatmulDescCreate(&desc, c.compute, c.scale));
  set_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, int32_t(c.ta));
  set_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, int32_t(c.tb));
  set_attr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(c.epilogue));
  set_attr(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, int32_t(c.pointer_mode));
  if (bias.device) {
    set_attr(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias.device);
    set_attr(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, bias_stride);
  }
  if (aux.device) {
    set_attr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux.device);
    set_attr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, aux_ld);
    set_attr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, aux_stride);
  }

  // Scalars: alpha/beta per row of D in the vector modes (alpha with a batch stride).
  bool alpha_vec = c.pointer_mode >= CUBLASLT_POINTER_MODE_DEVICE_VECTOR;
  bool beta_vec = c.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE_VECTOR;
  bool beta_zero = c.pointer_mode == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO;
  std::vector<double> alpha_of(size_t(nb) * m, c.alpha), beta_of(size_t(m), beta_zero ? 0 : c.beta);
  unsigned char alpha_host[8], beta_host[8];
  put_scalar(c.scale, c.alpha, alpha_host);
  put_scalar(c.scale, c.beta, beta_host);
  Buffer alpha_dev, beta_dev;
  const void* alpha_arg = alpha_host;
  const void* beta_arg = beta_host;
  if (c.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE || alpha_vec) {
    int64_t alpha_count = alpha_vec ? int64_t(m) * nb : 1;
    alpha_dev = Buffer(c.scale, size_t(alpha_count));
    for (int64_t i = 0; i < alpha_count; ++i) {
      double v = alpha_vec ? c.alpha * (1 + 0.25 * double(i % 5)) : c.alpha;
      alpha_dev.set(size_t(i), v);
      if (alpha_vec) alpha_of[size_t(i)] = alpha_dev.get(size_t(i));
    }
    alpha_dev.upload();
    alpha_arg = alpha_dev.device;
    if (alpha_vec && nb > 1 && !beta_zero)
      set_attr(desc, CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, int64_t(m));
    if (alpha_vec && (beta_zero || nb == 1))
      for (int b = 1; b < nb; ++b)
        for (int i = 0; i < m; ++i)
          alpha_of[size_t(b) * m + i] = alpha_of[size_t(i)];
  }
  if (c.pointer_mode == CUBLASLT_POINTER_MODE_DEVICE || beta_vec) {
    int64_t beta_count = beta_vec ? m : 1;
    beta_dev = Buffer(c.scale, size_t(beta_count));
    for (int64_t i = 0; i < beta_count; ++i) {
      double v = beta_vec ? c.beta * (1 - 0.5 * double(i % 3)) : c.beta;
      beta_dev.set(size_t(i), v);
      if (beta_vec) beta_of[size_t(i)] = beta_dev.get(size_t(i));
    }
    beta_dev.upload();
    beta_arg = beta_dev.device;
  }
  if (beta_zero) beta_arg = nullptr;

  cublasLtMatrixLayout_t la = A.layout(), lb = B.layout(), lc = C.layout(), ld = D.layout();
  if (c.c_broadcast) {
    int64_t zero = 0;
    LT_CHECK(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_LD, &zero, sizeof zero));
  }
  const void *a_arg = A.buf.device, *b_arg = B.buf.device, *c_arg = C.buf.device;
  void* d_arg = D.buf.device;
  std::vector<void*> arrays;
  void* array_dev = nullptr;
  if (c.pointer_arrays) {
    const Matrix* ms[] = {&A, &B, &C, &D};
    for (const Matrix* x : ms)
      for (int b = 0; b < nb; ++b)
        arrays.push_back(static_cast<char*>(x->buf.device) + b * x->stride * type_size(x->type));
    CUDA_CHECK(cudaMalloc(&array_dev, arrays.size() * sizeof(void*)));
    CUDA_CHECK(cudaMemcpy(array_dev, arrays.data(), arrays.size() * sizeof(void*),
                          cudaMemcpyHostToDevice));
    void** base = static_cast<void**>(array_dev);
    a_arg = base, b_arg = base + nb, c_arg = base + 2 * nb, d_arg = base + 3 * nb;
    int32_t mode = CUBLASLT_BATCH_MODE_POINTER_ARRAY;
    for (cublasLtMatrixLayout_t l : {la, lb, lc, ld})
      LT_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode,
                                                sizeof mode));
  }

  cublasLtMatmulPreference_t pref;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t workspace_bytes = 1 << 20;
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &workspace_bytes, sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  const cublasLtMatmulAlgo_t* algo = nullptr;
  if (c.use_heuristic) {
    tally.status(
        cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, ld, pref, 1, &result, &returned),
        CUBLAS_STATUS_SUCCESS, ("heuristic " + name).c_str());
    tally.check(returned == 1 && result.state == CUBLAS_STATUS_SUCCESS &&
                    result.workspaceSize <= workspace_bytes,
                "%s: heuristic returned %d results, state %d, workspace %zu", name.c_str(),
                returned, int(result.state), result.workspaceSize);
    algo = &result.algo;
  }
  void* workspace = nullptr;
  CUDA_CHECK(cudaMalloc(&workspace, workspace_bytes));
  cublasStatus_t s = cublasLtMatmul(handle, desc, alpha_arg, a_arg, la, b_arg, lb, beta_arg,
                                    c.separate_c ? c_arg : d_arg, lc, d_arg, ld, algo, workspace,
                                    workspace_bytes, c.stream);
  tally.status(s, CUBLAS_STATUS_SUCCESS, ("matmul " + name).c_str());
  CUDA_CHECK(cudaStreamSynchronize(c.stream));
  D.buf.download();
  if (aux.device) aux.download();
  if (bias.device) bias.download();

  // The reference, and the tolerances a computation in the compute type allows.
  const double out_eps = type_eps(c.cd);
  const double acc_eps = c.cd == CUDA_R_64F ? 1e-13 : 4e-6;
  const double tiny = type_tiny(c.cd);
  int bad = 0;
  std::vector<bool> in_matrix(D.buf.count);
  for (int b = 0; b < nb; ++b) {
    std::vector<double> grad_sum(size_t(m), 0), grad_scale(size_t(m), 0);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        double acc = 0, scale = 0;
        for (int kk = 0; kk < k; ++kk) {
          double av = ta ? A.at(b, kk, i) : A.at(b, i, kk);
          double bv = tb ? B.at(b, j, kk) : B.at(b, kk, j);
          acc += av * bv;
          scale += std::fabs(av * bv);
        }
        double al = alpha_of[size_t(b) * m + i], be = beta_of[size_t(i)];
        double cv = c_values[(size_t(b) * n + j) * m + i];
        double x = al * acc + be * cv;
        scale = std::fabs(al) * scale + std::fabs(be * cv);
        if (f.bias) {
          double bv = bias.get(size_t(b * bias_stride + i));
          x += bv;
          scale += std::fabs(bv);
        }
        double tol_pre = out_eps * std::fabs(x) + acc_eps * scale * 4 + tiny;
        bool ambiguous = std::fabs(x) <= tol_pre;
        if (f.aux_out && mask) {
          size_t bit = size_t(b * aux_stride + j * aux_ld + i);
          bool got = (size_t(aux.get(bit / 8)) >> (bit % 8)) & 1;
          if (!ambiguous && got != (x > 0) && bad++ < 5)
            tally.check(false, "%s: relu mask (%d,%d) batch %d is %d for %g", name.c_str(), i, j, b,
                        int(got), x);
        } else if (f.aux_out) {
          double got = aux.get(size_t(b * aux_stride + j * aux_ld + i));
          if (!(std::fabs(got - x) <= tol_pre) && bad++ < 5)
            tally.check(false, "%s: gelu aux (%d,%d) batch %d is %g, expected %g", name.c_str(), i,
                        j, b, got, x);
        }
        double slack = 0; // a value this close to zero may land on either side of ReLU
        if (f.relu) {
          if (ambiguous)
            slack = tol_pre, x = x > 0 ? x : 0;
          else if (x <= 0)
            x = 0, scale = 0;
        }
        if (f.gelu) x = gelu_ref(x), scale *= 1.2;
        if (f.drelu) {
          size_t bit = size_t(b * aux_stride + j * aux_ld + i);
          if (!((size_t(aux.get(bit / 8)) >> (bit % 8)) & 1)) x = 0, scale = 0;
        }
        if (f.dgelu) {
          double g = gelu_grad_ref(aux.get(size_t(b * aux_stride + j * aux_ld + i)));
          scale = scale * std::fabs(g) + std::fabs(x) * 1e-6;
          x *= g;
        }
        grad_sum[size_t(i)] += x;
        grad_scale[size_t(i)] += std::fabs(x) * out_eps + acc_eps * scale * 4;
        size_t at = D.index(b, i, j);
        in_matrix[at] = true;
        double got = D.buf.get(at);
        double tol = out_eps * std::fabs(x) + acc_eps * scale * 4 + slack + tiny;
        if (!(std::fabs(got - x) <= tol) && bad++ < 5)
          tally.check(false, "%s: D(%d,%d) batch %d is %.9g, expected %.9g", name.c_str(), i, j, b,
                      got, x);
      }
    }
    if (f.bgrad)
      for (int i = 0; i < m; ++i) {
        double got = bias.get(size_t(b * bias_stride + i));
        if (!(std::fabs(got - grad_sum[size_t(i)]) <=
              grad_scale[size_t(i)] + out_eps * std::fabs(grad_sum[size_t(i)]) + tiny * n) &&
            bad++ < 5)
          tally.check(false, "%s: bias gradient %d batch %d is %.9g, expected %.9g", name.c_str(),
                      i, b, got, grad_sum[size_t(i)]);
      }
    if (f.bgrad_a || f.bgrad_b)
      for (int i = 0; i < bias_len; ++i) {
        double sum = 0, abs_sum = 0;
        for (int kk = 0; kk < k; ++kk) {
          double v = f.bgrad_a ? (ta ? A.at(b, kk, i) : A.at(b, i, kk))
                               : (tb ? B.at(b, i, kk) : B.at(b, kk, i));
          sum += v;
          abs_sum += std::fabs(v);
        }
        double got = bias.get(size_t(b * bias_stride + i));
        if (!(std::fabs(got - sum) <= out_eps * abs_sum + 1e-6 * abs_sum + tiny) && bad++ < 5)
          tally.check(false, "%s: %s %d batch %d is %.9g, expected %.9g", name.c_str(),
                      f.bgrad_a ? "BGRADA" : "BGRADB", i, b, got, sum);
      }
  }
  int touched = 0;
  for (size_t i = 0; i < D.buf.count; ++i)
    if (!in_matrix[i] && D.buf.get(i) != sentinel) ++touched;
  tally.check(touched == 0, "%s: %d elements of D's padding changed", name.c_str(), touched);
  tally.check(bad == 0, "%s: %d wrong values", name.c_str(), bad);

  cudaFree(workspace);
  if (array_dev) cudaFree(array_dev);
  cublasLtMatmulPreferenceDestroy(pref);
  for (cublasLtMatrixLayout_t l : {la, lb, lc, ld})
    cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulDescDestroy(desc);
}
