// ppo_cuda's actor and critic: MLPs of Linear + LayerNorm + LeakyReLU blocks over one flat
// parameter array (ParameterLayout), forward and backward. Linear
// layers are cuBLASLt matmuls (the bias epilogue forward; the weight gradient with the
// BGRADB epilogue giving the bias gradient) and cublasSgemm (the input gradient); the rest
// are the kernels of cuda_kernels.cuh.
//
// Activations are row-major [rows][features] and weights [out][in], as in PyTorch; to
// cuBLAS (column-major) they are the transposes, so Y = X W^T + b is Y^T = W X^T + b.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda_kernels.cuh"
#include "cuda_profile.cuh"
#include "ppo_config.h"

#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    if (cudaError_t status_ = (call); status_ != cudaSuccess) {                                    \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                         \
              cudaGetErrorString(status_));                                                        \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define BLAS_CHECK(call)                                                                           \
  do {                                                                                             \
    if (int status_ = int(call); status_ != 0) {                                                   \
      fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call, status_);        \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())

namespace net {

// Offsets into the flat parameter (and gradient) array.
struct Linear {
  int in = 0, out = 0;
  long weight = 0, bias = 0;
};
struct Norm {
  long weight = 0, bias = 0;
};
struct MlpLayout {
  Linear hidden[ppo::kHiddenLayers];
  Norm norm[ppo::kHiddenLayers];
  Linear head;
};

// Where each parameter tensor lives in the flat arrays (parameters, gradients, Adam's
// moments): in ppo::initial_parameters' order, each tensor starting on a 256-byte boundary,
// the alignment cuBLASLt's algorithms assume by default.
struct ParameterLayout {
  static constexpr long kAlignFloats = 64;
  long size = 0;                              // floats, padding included
  long count = 0;                             // parameters
  std::vector<std::pair<long, long>> tensors; // (offset, length) in order

  long take(long n) {
    size = (size + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
    tensors.push_back({size, n});
    size += n;
    count += n;
    return tensors.back().first;
  }

  // The parameters listed packed, in order (ppo::initial_parameters), spread to the layout;
  // padding is zero.
  std::vector<float> spread(const std::vector<float>& packed) const {
    std::vector<float> out(size, 0.0f);
    long at = 0;
    for (auto [offset, length] : tensors)
      for (long i = 0; i < length; ++i)
        out[offset + i] = packed[at++];
    return out;
  }

  Linear take_linear(int in, int out) {
    Linear l{in, out, 0, 0};
    l.weight = take(long(in) * out);
    l.bias = take(out);
    return l;
  }

  // The next MLP's tensors.
  MlpLayout take_mlp(int outputs) {
    MlpLayout m;
    int in = ppo::kInputs;
    for (int i = 0; i < ppo::kHiddenLayers; ++i) {
      int width = ppo::kHidden[i];
      m.hidden[i] = take_linear(in, width);
      m.norm[i].weight = take(width);
      m.norm[i].bias = take(width);
      // The LayerNorm gradient kernels write weight and bias gradients as one array.
      if (m.norm[i].bias != m.norm[i].weight + width) {
        fprintf(stderr, "ppo_cuda: LayerNorm width %d is not a multiple of %ld floats\n", width,
                kAlignFloats);
        exit(1);
      }
      in = width;
    }
    m.head = take_linear(in, outputs);
    return m;
  }
};

template <typename T> T* device_alloc(long count) {
  T* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, sizeof(T) * size_t(count > 0 ? count : 1)));
  return p;
}

// One MLP's saved forward state for `rows` rows.
struct Activations {
  int rows = 0;
  float* z[ppo::kHiddenLayers]; // Linear outputs, LayerNorm inputs
  float* h[ppo::kHiddenLayers]; // block outputs
  float2* stats[ppo::kHiddenLayers];
  explicit Activations(int rows_) : rows(rows_) {
    for (int i = 0; i < ppo::kHiddenLayers; ++i) {
      z[i] = device_alloc<float>(long(rows) * ppo::kHidden[i]);
      h[i] = device_alloc<float>(long(rows) * ppo::kHidden[i]);
      stats[i] = device_alloc<float2>(rows);
    }
  }
};

// Backward scratch shared by both MLPs.
struct Scratch {
  static constexpr int kRowsPerChunk = 256;
  float* dh; // gradient of a block's output
  float* dz; // gradient of a Linear's output
  float* partial;
  explicit Scratch(int rows) {
    dh = device_alloc<float>(long(rows) * ppo::kHidden[0]);
    dz = device_alloc<float>(long(rows) * ppo::kHidden[0]);
    long chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
    partial = device_alloc<float>(chunks * 2 * ppo::kHidden[0]);
  }
};

enum class NormKernel { kWarpPerRow, kBlockPerRow };

class Blas {
public:
  Blas() {
    BLAS_CHECK(cublasCreate(&handle_));
    BLAS_CHECK(cublasLtCreate(&lt_));
  }

  // Y[rows][out] = X[rows][in] W^T + b
  void linear_forward(const float* x, const float* w, const float* b, float* y, int rows, int in,
                      int out) {
    profile::Scope scope("gemm forward");
    const Plan& plan = plan_for(Kind::kForward, b, rows, in, out);
    float one = 1, zero = 0;
    BLAS_CHECK(cublasLtMatmul(lt_, plan.desc, &one, w, plan.a, x, plan.b, &zero, y, plan.d, y,
                              plan.d, &plan.algo, nullptr, 0, 0));
  }

  // dW[out][in] = dY^T X and db = the column sums of dY.
  void linear_weight_grad(const float* x, const float* dy, float* dw, float* db, int rows, int in,
                          int out) {
    profile::Scope scope("gemm weight+bias grad");
    const Plan& plan = plan_for(Kind::kWeightGrad, db, rows, in, out);
    float one = 1, zero = 0;
    BLAS_CHECK(cublasLtMatmul(lt_, plan.desc, &one, x, plan.a, dy, plan.b, &zero, dw, plan.d, dw,
                              plan.d, &plan.algo, nullptr, 0, 0));
    if (plan.bias_by_kernel) {
      kernels::column_sums<<<kernels::blocks_for(out, 128), 128>>>(dy, rows, out, db);
      LAUNCH_CHECK();
    }
  }

  // dX[rows][in] = dY[rows][out] W
  void linear_input_grad(const float* dy, const float* w, float* dx, int rows, int in, int out) {
    profile::Scope scope("gemm input grad");
    float one = 1, zero = 0;
    BLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, in, rows, out, &one, w, in, dy, out,
                           &zero, dx, in));
  }

private:
  enum class Kind { kForward, kWeightGrad };
  struct Plan {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, d;
    cublasLtMatmulAlgo_t algo;
    bool bias_by_kernel = false; // the bias gradient is column_sums', not the epilogue's
  };

  // Descriptors and algorithm per distinct call, made on first use. Where cuBLASLt has no
  // algorithm for the weight gradient with the BGRADB epilogue (or PPO_CUDA_NO_BGRADB is
  // set), the bias gradient is left to a kernel.
  const Plan& plan_for(Kind kind, const float* bias, int rows, int in, int out) {
    auto key = std::make_tuple(int(kind), static_cast<const void*>(bias), rows, in, out);
    auto found = plans_.find(key);
    if (found != plans_.end()) return found->second;
    Plan p;
    bool made = false;
    if (kind == Kind::kForward)
      made = make_plan(kind, CUBLASLT_EPILOGUE_BIAS, bias, rows, in, out, p);
    else if (!getenv("PPO_CUDA_NO_BGRADB"))
      made = make_plan(kind, CUBLASLT_EPILOGUE_BGRADB, bias, rows, in, out, p);
    if (!made && kind == Kind::kWeightGrad) {
      p.bias_by_kernel = true;
      made = make_plan(kind, CUBLASLT_EPILOGUE_DEFAULT, nullptr, rows, in, out, p);
    }
    if (!made) {
      fprintf(stderr, "ppo_cuda: cuBLASLt has no algorithm for a %d x %d x %d matmul\n", rows, in,
              out);
      exit(1);
    }
    return plans_.emplace(key, p).first->second;
  }

  bool make_plan(Kind kind, cublasLtEpilogue_t epilogue, const float* bias, int rows, int in,
                 int out, Plan& p) {
    BLAS_CHECK(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t trans_a = kind == Kind::kForward ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t trans_b = kind == Kind::kForward ? CUBLAS_OP_N : CUBLAS_OP_T;
    BLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a,
                                              sizeof(trans_a)));
    BLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b,
                                              sizeof(trans_b)));
    BLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                              sizeof(epilogue)));
    if (bias)
      BLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                sizeof(bias)));
    if (kind == Kind::kForward) {
      // D^T[out][rows] = W (stored [in][out] column-major, transposed) times X^T [in][rows].
      BLAS_CHECK(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_32F, in, out, in));
      BLAS_CHECK(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_32F, in, rows, in));
      BLAS_CHECK(cublasLtMatrixLayoutCreate(&p.d, CUDA_R_32F, out, rows, out));
    } else {
      // dW^T[in][out] = X^T [in][rows] times (dY^T [out][rows])^T; the bias gradient is the
      // reduction of B over k = rows.
      BLAS_CHECK(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_32F, in, rows, in));
      BLAS_CHECK(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_32F, out, rows, out));
      BLAS_CHECK(cublasLtMatrixLayoutCreate(&p.d, CUDA_R_32F, in, out, in));
    }
    cublasLtMatmulHeuristicResult_t result;
    int found_algos = 0;
    cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt_, p.desc, p.a, p.b, p.d, p.d, nullptr,
                                                           1, &result, &found_algos);
    if (status == CUBLAS_STATUS_SUCCESS && found_algos > 0) {
      p.algo = result.algo;
      return true;
    }
    cublasLtMatmulDescDestroy(p.desc);
    cublasLtMatrixLayoutDestroy(p.a);
    cublasLtMatrixLayoutDestroy(p.b);
    cublasLtMatrixLayoutDestroy(p.d);
    return false;
  }

  cublasHandle_t handle_;
  cublasLtHandle_t lt_;
  std::map<std::tuple<int, const void*, int, int, int>, Plan> plans_;
};

inline void ln_forward(NormKernel kind, int width, const float* z, const float* gamma,
                       const float* beta, int rows, float* h, float2* stats) {
  using namespace kernels;
  profile::Scope scope("layernorm forward");
  unsigned warp_blocks = blocks_for(rows, kRowsPerWarpBlock);
#define PPO_LN_FORWARD(F)                                                                          \
  case F:                                                                                          \
    if (kind == NormKernel::kWarpPerRow)                                                           \
      ln_leaky_forward_warp<F>                                                                     \
          <<<warp_blocks, 32 * kRowsPerWarpBlock>>>(z, gamma, beta, rows, h, stats);               \
    else                                                                                           \
      ln_leaky_forward_block<F><<<rows, kRowBlockThreads>>>(z, gamma, beta, rows, h, stats);       \
    break;
  switch (width) {
    PPO_LN_FORWARD(896)
    PPO_LN_FORWARD(768)
    PPO_LN_FORWARD(384)
  default:
    fprintf(stderr, "ppo_cuda: no LayerNorm kernel for width %d\n", width);
    exit(1);
  }
#undef PPO_LN_FORWARD
  LAUNCH_CHECK();
}

inline void ln_backward(NormKernel kind, int width, const float* dh, const float* z,
                        const float2* stats, const float* gamma, const float* beta, int rows,
                        float* dz) {
  using namespace kernels;
  profile::Scope scope("layernorm backward");
  unsigned warp_blocks = blocks_for(rows, kRowsPerWarpBlock);
#define PPO_LN_BACKWARD(F)                                                                         \
  case F:                                                                                          \
    if (kind == NormKernel::kWarpPerRow)                                                           \
      ln_leaky_backward_warp<F>                                                                    \
          <<<warp_blocks, 32 * kRowsPerWarpBlock>>>(dh, z, stats, gamma, beta, rows, dz);          \
    else                                                                                           \
      ln_leaky_backward_block<F><<<rows, kRowBlockThreads>>>(dh, z, stats, gamma, beta, rows, dz); \
    break;
  switch (width) {
    PPO_LN_BACKWARD(896)
    PPO_LN_BACKWARD(768)
    PPO_LN_BACKWARD(384)
  default:
    fprintf(stderr, "ppo_cuda: no LayerNorm kernel for width %d\n", width);
    exit(1);
  }
#undef PPO_LN_BACKWARD
  LAUNCH_CHECK();
}

// out[rows][outputs] = the MLP of x[rows][kInputs]; the state for backward goes to `a`.
inline void mlp_forward(Blas& blas, NormKernel norm_kernel, const MlpLayout& m, const float* params,
                        const float* x, int rows, Activations& a, float* out) {
  for (int i = 0; i < ppo::kHiddenLayers; ++i) {
    const Linear& l = m.hidden[i];
    blas.linear_forward(x, params + l.weight, params + l.bias, a.z[i], rows, l.in, l.out);
    ln_forward(norm_kernel, l.out, a.z[i], params + m.norm[i].weight, params + m.norm[i].bias, rows,
               a.h[i], a.stats[i]);
    x = a.h[i];
  }
  blas.linear_forward(x, params + m.head.weight, params + m.head.bias, out, rows, m.head.in,
                      m.head.out);
}

// Gradients of every parameter of `m` into `grads` (same offsets as params), from the
// gradient of the output `dout` [rows][outputs] and the forward state of input x.
inline void mlp_backward(Blas& blas, NormKernel norm_kernel, const MlpLayout& m,
                         const float* params, float* grads, const float* x, int rows,
                         const Activations& a, const float* dout, Scratch& s) {
  using namespace kernels;
  const int top = ppo::kHiddenLayers - 1;
  blas.linear_weight_grad(a.h[top], dout, grads + m.head.weight, grads + m.head.bias, rows,
                          m.head.in, m.head.out);
  blas.linear_input_grad(dout, params + m.head.weight, s.dh, rows, m.head.in, m.head.out);
  for (int i = top; i >= 0; --i) {
    const Linear& l = m.hidden[i];
    const float* gamma = params + m.norm[i].weight;
    const float* beta = params + m.norm[i].bias;
    ln_backward(norm_kernel, l.out, s.dh, a.z[i], a.stats[i], gamma, beta, rows, s.dz);
    int chunks = (rows + Scratch::kRowsPerChunk - 1) / Scratch::kRowsPerChunk;
    std::optional<profile::Scope> scope(std::in_place, "layernorm param grad");
    ln_param_grad_partial<<<dim3(blocks_for(l.out, 128), chunks), 128>>>(
        s.dh, a.z[i], a.stats[i], gamma, beta, rows, l.out, Scratch::kRowsPerChunk, s.partial);
    LAUNCH_CHECK();
    // The weight and bias gradients are adjacent: one pass over the chunks writes both.
    sum_chunks<<<blocks_for(2L * l.out, 256), 256>>>(s.partial, chunks, 2 * l.out,
                                                     grads + m.norm[i].weight);
    LAUNCH_CHECK();
    scope.reset();
    const float* input = i == 0 ? x : a.h[i - 1];
    blas.linear_weight_grad(input, s.dz, grads + l.weight, grads + l.bias, rows, l.in, l.out);
    if (i > 0) blas.linear_input_grad(s.dz, params + l.weight, s.dh, rows, l.in, l.out);
  }
}

} // namespace net
