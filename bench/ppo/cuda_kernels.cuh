// ppo_cuda's own kernels: the arenas, the fused masked sampler, LayerNorm + LeakyReLU
// (block-per-row and warp-per-row variants, forward and backward), GAE, the PPO losses'
// gradients, gradient-norm clipping and Adam. Every sum that feeds back into training is
// taken in a fixed order (no atomics), so a run is reproducible from its seed.
#pragma once

#include <cstdint>

#include "arena.h"
#include "ppo_config.h"

namespace kernels {

constexpr unsigned kFullMask = 0xffffffffu;

inline unsigned blocks_for(long n, int threads) {
  return unsigned((n + threads - 1) / threads);
}

// ---- environment ----

__global__ void arena_init(arena::State* states, int n, uint64_t seed) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) arena::init(states[i], seed, uint32_t(i));
}

__global__ void arena_observe(const arena::State* states, int n, float* obs, uint32_t* mask) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  arena::State s = states[i];
  arena::observe(s, obs + long(i) * arena::kObs);
  mask[i] = arena::action_mask(s);
}

// Steps every arena with its action, records reward and end of episode, and writes the
// next observation and action mask.
__global__ void arena_step(arena::State* states, int n, uint64_t seed, const int* actions,
                           float* rewards, float* dones, float* next_obs, uint32_t* next_mask) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  arena::State s = states[i];
  bool done = false;
  rewards[i] = arena::step(s, actions[i], seed, uint32_t(i), done);
  dones[i] = done ? 1.0f : 0.0f;
  arena::observe(s, next_obs + long(i) * arena::kObs);
  next_mask[i] = arena::action_mask(s);
  states[i] = s;
}

__global__ void arena_clear_finished(arena::State* states, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  states[i].finished_return_sum = 0;
  states[i].finished_count = 0;
}

// ---- policy ----

// The fused masked sampler: per row, softmax over the allowed actions of its logits, one
// action drawn by inverse CDF with a counter-based uniform, and its log-probability.
__global__ void sample_actions(const float* logits, const uint32_t* masks, int rows, uint64_t seed,
                               uint64_t step, int* actions, float* logps) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* l = logits + long(row) * ppo::kActions;
  uint32_t mask = masks[row];
  float top = -INFINITY;
  for (int a = 0; a < ppo::kActions; ++a)
    if (mask >> a & 1) top = fmaxf(top, l[a]);
  float total = 0;
  for (int a = 0; a < ppo::kActions; ++a)
    if (mask >> a & 1) total += __expf(l[a] - top);
  float target = arena::unit_float(arena::hash4(seed, uint64_t(row), step, arena::kPolicy)) * total;
  int chosen = -1;
  float cumulative = 0;
  for (int a = 0; a < ppo::kActions; ++a) {
    if (!(mask >> a & 1)) continue;
    chosen = a; // the last allowed one if rounding leaves the target above the total
    cumulative += __expf(l[a] - top);
    if (cumulative > target) break;
  }
  actions[row] = chosen;
  logps[row] = l[chosen] - top - __logf(total);
}

// ---- LayerNorm + LeakyReLU ----

__device__ __forceinline__ float leaky(float x) {
  return x > 0 ? x : ppo::kLeakySlope * x;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

// Two sums at once: half the rounds of exchanges of two separate reductions.
__device__ __forceinline__ float2 warp_sum(float2 v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    v.x += __shfl_xor_sync(kFullMask, v.x, offset);
    v.y += __shfl_xor_sync(kFullMask, v.y, offset);
  }
  return v;
}

// Sums over a block of kThreads threads; every thread gets the totals. `scratch` holds one
// float2 per warp.
template <int kThreads> __device__ __forceinline__ float2 block_sum(float2 v, float2* scratch) {
  constexpr int kWarps = kThreads / 32;
  v = warp_sum(v);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads(); // scratch may still be read by the previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float2 total = make_float2(0, 0);
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    total.x += scratch[w].x;
    total.y += scratch[w].y;
  }
  return total;
}
template <int kThreads> __device__ __forceinline__ float block_sum(float v, float2* scratch) {
  return block_sum<kThreads>(make_float2(v, 0), scratch).x;
}

// One row of F features held as kPer values per thread by kThreads threads (a warp, or a
// block), element j of thread k at column k + kThreads * j: coalesced loads and stores.
// Forward: h = leaky(gamma * (z - mean) * rstd + beta); stats[row] = (mean, rstd). The sum
// and the sum of squares are reduced together (one round of exchanges, not two); the
// variance is taken about the row's first value, which keeps E[d^2] - E[d]^2 accurate for
// rows whose mean is far from zero.
template <int F, int kThreads, typename Sum>
__device__ __forceinline__ void ln_leaky_forward_row(const float* z, const float* gamma,
                                                     const float* beta, float* h, float2* stats,
                                                     int lane, Sum sum) {
  constexpr int kPer = F / kThreads;
  static_assert(F % kThreads == 0, "row width must be a multiple of the threads per row");
  float v[kPer];
  float shift = z[0];
  float2 s = make_float2(0, 0);
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    v[j] = z[lane + kThreads * j];
    float d = v[j] - shift;
    s.x += d;
    s.y += d * d;
  }
  s = sum(s);
  float mean_d = s.x * (1.0f / F);
  float mean = shift + mean_d;
  float var = fmaxf(s.y * (1.0f / F) - mean_d * mean_d, 0.0f);
  float rstd = rsqrtf(var + ppo::kLayerNormEps);
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    int c = lane + kThreads * j;
    h[c] = leaky(gamma[c] * (v[j] - mean) * rstd + beta[c]);
  }
  if (lane == 0) *stats = make_float2(mean, rstd);
}

// Backward: from dh (gradient of the output) to dz, given the saved (mean, rstd).
template <int F, int kThreads, typename Sum>
__device__ __forceinline__ void ln_leaky_backward_row(const float* dh, const float* z, float2 stats,
                                                      const float* gamma, const float* beta,
                                                      float* dz, int lane, Sum sum) {
  constexpr int kPer = F / kThreads;
  float xhat[kPer], g[kPer];
  float2 sums = make_float2(0, 0); // of g and of g * xhat
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    int c = lane + kThreads * j;
    xhat[j] = (z[c] - stats.x) * stats.y;
    float y = gamma[c] * xhat[j] + beta[c];
    g[j] = dh[c] * (y > 0 ? 1.0f : ppo::kLeakySlope) * gamma[c];
    sums.x += g[j];
    sums.y += g[j] * xhat[j];
  }
  sums = sum(sums);
  float mean_g = sums.x * (1.0f / F);
  float mean_gx = sums.y * (1.0f / F);
#pragma unroll
  for (int j = 0; j < kPer; ++j)
    dz[lane + kThreads * j] = stats.y * (g[j] - mean_g - xhat[j] * mean_gx);
}

constexpr int kRowsPerWarpBlock = 4;  // warp-per-row kernels: 4 warps, 4 rows per block
constexpr int kRowBlockThreads = 128; // block-per-row kernels

template <int F>
__global__ void __launch_bounds__(32 * kRowsPerWarpBlock)
    ln_leaky_forward_warp(const float* z, const float* gamma, const float* beta, int rows, float* h,
                          float2* stats) {
  int row = blockIdx.x * kRowsPerWarpBlock + threadIdx.x / 32;
  if (row >= rows) return;
  long at = long(row) * F;
  ln_leaky_forward_row<F, 32>(z + at, gamma, beta, h + at, stats + row, threadIdx.x % 32,
                              [](float2 v) { return warp_sum(v); });
}

template <int F>
__global__ void __launch_bounds__(kRowBlockThreads)
    ln_leaky_forward_block(const float* z, const float* gamma, const float* beta, int rows,
                           float* h, float2* stats) {
  __shared__ float2 scratch[kRowBlockThreads / 32];
  int row = blockIdx.x;
  long at = long(row) * F;
  ln_leaky_forward_row<F, kRowBlockThreads>(
      z + at, gamma, beta, h + at, stats + row, threadIdx.x,
      [&](float2 v) { return block_sum<kRowBlockThreads>(v, scratch); });
}

template <int F>
__global__ void __launch_bounds__(32 * kRowsPerWarpBlock)
    ln_leaky_backward_warp(const float* dh, const float* z, const float2* stats, const float* gamma,
                           const float* beta, int rows, float* dz) {
  int row = blockIdx.x * kRowsPerWarpBlock + threadIdx.x / 32;
  if (row >= rows) return;
  long at = long(row) * F;
  ln_leaky_backward_row<F, 32>(dh + at, z + at, stats[row], gamma, beta, dz + at, threadIdx.x % 32,
                               [](float2 v) { return warp_sum(v); });
}

template <int F>
__global__ void __launch_bounds__(kRowBlockThreads)
    ln_leaky_backward_block(const float* dh, const float* z, const float2* stats,
                            const float* gamma, const float* beta, int rows, float* dz) {
  __shared__ float2 scratch[kRowBlockThreads / 32];
  int row = blockIdx.x;
  long at = long(row) * F;
  ln_leaky_backward_row<F, kRowBlockThreads>(
      dh + at, z + at, stats[row], gamma, beta, dz + at, threadIdx.x,
      [&](float2 v) { return block_sum<kRowBlockThreads>(v, scratch); });
}

// Gradients of LayerNorm's weight and bias, summed over rows: each thread one column of one
// chunk of rows (blockIdx.y), partial sums to `partial` [chunks][2][width]; then
// sum_chunks adds the chunks in order.
__global__ void ln_param_grad_partial(const float* dh, const float* z, const float2* stats,
                                      const float* gamma, const float* beta, int rows, int width,
                                      int rows_per_chunk, float* partial) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= width) return;
  int first = blockIdx.y * rows_per_chunk;
  int last = min(rows, first + rows_per_chunk);
  float g = gamma[c], b = beta[c];
  float dgamma = 0, dbeta = 0;
  for (int r = first; r < last; ++r) {
    float2 st = stats[r];
    float xhat = (z[long(r) * width + c] - st.x) * st.y;
    float y = g * xhat + b;
    float da = dh[long(r) * width + c] * (y > 0 ? 1.0f : ppo::kLeakySlope);
    dgamma += da * xhat;
    dbeta += da;
  }
  float* out = partial + long(blockIdx.y) * 2 * width;
  out[c] = dgamma;
  out[width + c] = dbeta;
}

// out[c] = the sum of column c of x [rows][cols], in row order (a bias gradient, where
// cuBLASLt's epilogue cannot give it).
__global__ void column_sums(const float* x, int rows, int cols, float* out) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0;
  for (int r = 0; r < rows; ++r)
    s += x[long(r) * cols + c];
  out[c] = s;
}

// out[i] = sum over chunks of partial[chunk][i], i < n, in chunk order.
__global__ void sum_chunks(const float* partial, int chunks, int n, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0;
  for (int k = 0; k < chunks; ++k)
    s += partial[long(k) * n + i];
  out[i] = s;
}

// ---- advantages ----

// GAE over one arena's steps (rows t * arenas + arena), bootstrapped from last_value.
__global__ void gae(const float* rewards, const float* dones, const float* values,
                    const float* last_value, int steps, int arenas, float gamma, float lambda,
                    float* advantages, float* returns) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= arenas) return;
  float next_value = last_value[i], carry = 0;
  for (int t = steps - 1; t >= 0; --t) {
    long k = long(t) * arenas + i;
    float live = 1.0f - dones[k];
    float delta = rewards[k] + gamma * next_value * live - values[k];
    carry = delta + gamma * lambda * live * carry;
    advantages[k] = carry;
    returns[k] = carry + values[k];
    next_value = values[k];
  }
}

// One minibatch, contiguous: row r is sample perm[offset + r].
__global__ void gather_minibatch(const int* perm, long offset, int rows, const float* obs,
                                 const uint32_t* masks, const int* actions, const float* logps,
                                 const float* advantages, const float* returns, float* mb_obs,
                                 uint32_t* mb_masks, int* mb_actions, float* mb_logps,
                                 float* mb_advantages, float* mb_returns) {
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= long(rows) * ppo::kInputs) return;
  int r = int(i / ppo::kInputs), c = int(i % ppo::kInputs);
  long src = perm[offset + r];
  mb_obs[i] = obs[src * ppo::kInputs + c];
  if (c != 0) return;
  mb_masks[r] = masks[src];
  mb_actions[r] = actions[src];
  mb_logps[r] = logps[src];
  mb_advantages[r] = advantages[src];
  mb_returns[r] = returns[src];
}

constexpr int kReduceThreads = 256;

// stats = (mean, 1 / (unbiased std + 1e-8)) of x[0..n): one block, fixed order.
__global__ void __launch_bounds__(kReduceThreads)
    mean_inv_std(const float* x, int n, float* stats) {
  __shared__ float2 scratch[kReduceThreads / 32];
  float s = 0;
  for (int i = threadIdx.x; i < n; i += kReduceThreads)
    s += x[i];
  float mean = block_sum<kReduceThreads>(s, scratch) / n;
  float sq = 0;
  for (int i = threadIdx.x; i < n; i += kReduceThreads) {
    float d = x[i] - mean;
    sq += d * d;
  }
  float var = block_sum<kReduceThreads>(sq, scratch) / max(n - 1, 1);
  if (threadIdx.x == 0) {
    stats[0] = mean;
    stats[1] = 1.0f / (sqrtf(var) + 1e-8f);
  }
}

// ---- losses ----

// Per row of a minibatch of `rows`: the gradients of
//   loss = mean(-min(r A, clip(r, 1 - eps, 1 + eps) A)) - entropy_coef * mean(entropy)
//          + value_coef * 0.5 * mean((value - return)^2)
// with r = exp(logp(action) - old logp) under the masked softmax of the logits and A the
// minibatch-normalised advantage: dlogits [rows][26] and dvalues [rows].
__global__ void ppo_loss_grad(const float* logits, const float* values, const uint32_t* masks,
                              const int* actions, const float* old_logps, const float* advantages,
                              const float* returns, const float* adv_stats, int rows, float clip,
                              float entropy_coef, float value_coef, float* dlogits,
                              float* dvalues) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* l = logits + long(row) * ppo::kActions;
  float* dl = dlogits + long(row) * ppo::kActions;
  uint32_t mask = masks[row];
  float top = -INFINITY;
  for (int a = 0; a < ppo::kActions; ++a)
    if (mask >> a & 1) top = fmaxf(top, l[a]);
  float total = 0;
  for (int a = 0; a < ppo::kActions; ++a)
    if (mask >> a & 1) total += __expf(l[a] - top);
  float log_total = __logf(total);
  float entropy = 0;
  for (int a = 0; a < ppo::kActions; ++a) {
    if (!(mask >> a & 1)) continue;
    float logp = l[a] - top - log_total;
    entropy -= __expf(logp) * logp;
  }
  int action = actions[row];
  float advantage = (advantages[row] - adv_stats[0]) * adv_stats[1];
  float ratio = __expf(l[action] - top - log_total - old_logps[row]);
  float clipped = fminf(fmaxf(ratio, 1.0f - clip), 1.0f + clip);
  // d(-min(r A, clip(r) A))/dr: -A where the unclipped term is the minimum, else 0.
  float d_ratio = ratio * advantage <= clipped * advantage ? -advantage : 0.0f;
  float d_logp = d_ratio * ratio / rows;
  float d_entropy_term = entropy_coef / rows;
  for (int a = 0; a < ppo::kActions; ++a) {
    if (!(mask >> a & 1)) {
      dl[a] = 0;
      continue;
    }
    float logp = l[a] - top - log_total;
    float p = __expf(logp);
    // d logp(action)/d l_a = [a == action] - p_a; d(-entropy)/d l_a = p_a (logp_a + entropy)
    dl[a] = d_logp * ((a == action ? 1.0f : 0.0f) - p) + d_entropy_term * p * (logp + entropy);
  }
  dvalues[row] = value_coef * (values[row] - returns[row]) / rows;
}

// ---- optimiser ----

constexpr int kNormBlocks = 128;

// Sum of squares of x[0..n) in kNormBlocks contiguous chunks: partial[block].
__global__ void __launch_bounds__(kReduceThreads)
    sum_squares_partial(const float* x, long n, float* partial) {
  __shared__ float2 scratch[kReduceThreads / 32];
  long chunk = (n + kNormBlocks - 1) / kNormBlocks;
  long first = blockIdx.x * chunk, last = min(n, first + chunk);
  float s = 0;
  for (long i = first + threadIdx.x; i < last; i += kReduceThreads)
    s += x[i] * x[i];
  s = block_sum<kReduceThreads>(s, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// scale[0] = min(1, max_norm / (norm + 1e-6)), the global-norm clipping factor.
__global__ void clip_scale(const float* partial, float max_norm, float* scale) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  float s = 0;
  for (int b = 0; b < kNormBlocks; ++b)
    s += partial[b];
  float norm = sqrtf(s);
  scale[0] = fminf(1.0f, max_norm / (norm + 1e-6f));
  scale[1] = norm;
}

// Adam (PyTorch's form, no weight decay) on gradients scaled by scale[0]; bias1 and bias2
// are 1 - beta1^step and 1 - beta2^step.
__global__ void adam(float* params, const float* grads, float* m, float* v, long n,
                     const float* scale, float lr, float beta1, float beta2, float eps, float bias1,
                     float bias2) {
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float g = grads[i] * scale[0];
  float mi = beta1 * m[i] + (1 - beta1) * g;
  float vi = beta2 * v[i] + (1 - beta2) * g * g;
  m[i] = mi;
  v[i] = vi;
  params[i] -= lr * (mi / bias1) / (sqrtf(vi / bias2) + eps);
}

} // namespace kernels
