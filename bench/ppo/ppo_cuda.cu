// ppo_cuda: PPO training of a masked categorical policy on the device-simulated 3D
// navigation arenas (arena.h), actor and critic MLPs of 2,216,347 parameters in FP32,
// cuBLAS/cuBLASLt for the dense layers and this program's kernels for the rest. Prints the
// lines ppo_config.h describes. Built by nvcc like any application (-lcublas -lcublasLt);
// on a machine without an NVIDIA GPU it runs under `mimic run`.
//   ppo_cuda [--iterations N] [--seed S] [--quick] [--epochs E] [--minibatches M]
//            [--arenas A] [--steps T] [--layernorm warp|block] [--profile]
// PPO_CUDA_NO_BGRADB=1: bias gradients by a kernel instead of cuBLASLt's BGRADB epilogue
// (what happens by itself where cuBLASLt offers no algorithm with that epilogue).
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "arena.h"
#include "cuda_kernels.cuh"
#include "cuda_network.cuh"
#include "cuda_profile.cuh"
#include "ppo_config.h"

namespace {

using Clock = std::chrono::steady_clock;
using net::device_alloc;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void synchronize() {
  CUDA_CHECK(cudaDeviceSynchronize());
}

class Trainer {
public:
  Trainer(const ppo::Config& config, net::NormKernel norm_kernel)
      : config_(config), norm_kernel_(norm_kernel), arenas_(config.arenas), steps_(config.steps),
        samples_(config.timesteps()), minibatch_(int(config.minibatch_size())),
        collect_actor_(arenas_), collect_critic_(arenas_), train_actor_(minibatch_),
        train_critic_(minibatch_), scratch_(minibatch_) {
    actor_ = layout_.take_mlp(ppo::kActions);
    critic_ = layout_.take_mlp(1);
    std::vector<float> packed(layout_.count);
    ppo::initial_parameters(config.seed, packed.data());
    std::vector<float> initial = layout_.spread(packed);
    long size = layout_.size;
    params_ = device_alloc<float>(size);
    grads_ = device_alloc<float>(size);
    adam_m_ = device_alloc<float>(size);
    adam_v_ = device_alloc<float>(size);
    CUDA_CHECK(cudaMemcpy(params_, initial.data(), sizeof(float) * size, cudaMemcpyHostToDevice));
    // Padding: its gradient stays 0, so its parameters stay 0.
    CUDA_CHECK(cudaMemset(grads_, 0, sizeof(float) * size));
    CUDA_CHECK(cudaMemset(adam_m_, 0, sizeof(float) * size));
    CUDA_CHECK(cudaMemset(adam_v_, 0, sizeof(float) * size));

    states_ = device_alloc<arena::State>(arenas_);
    obs_ = device_alloc<float>((steps_ + 1) * long(arenas_) * ppo::kInputs);
    masks_ = device_alloc<uint32_t>((steps_ + 1) * long(arenas_));
    actions_ = device_alloc<int>(samples_);
    logps_ = device_alloc<float>(samples_);
    values_ = device_alloc<float>(samples_);
    rewards_ = device_alloc<float>(samples_);
    dones_ = device_alloc<float>(samples_);
    advantages_ = device_alloc<float>(samples_);
    returns_ = device_alloc<float>(samples_);
    last_value_ = device_alloc<float>(arenas_);
    logits_ = device_alloc<float>(long(arenas_) * ppo::kActions);

    perm_ = device_alloc<int>(samples_);
    mb_obs_ = device_alloc<float>(long(minibatch_) * ppo::kInputs);
    mb_masks_ = device_alloc<uint32_t>(minibatch_);
    mb_actions_ = device_alloc<int>(minibatch_);
    mb_logps_ = device_alloc<float>(minibatch_);
    mb_advantages_ = device_alloc<float>(minibatch_);
    mb_returns_ = device_alloc<float>(minibatch_);
    adv_stats_ = device_alloc<float>(2);
    train_logits_ = device_alloc<float>(long(minibatch_) * ppo::kActions);
    train_values_ = device_alloc<float>(minibatch_);
    dlogits_ = device_alloc<float>(long(minibatch_) * ppo::kActions);
    dvalues_ = device_alloc<float>(minibatch_);
    norm_partial_ = device_alloc<float>(kernels::kNormBlocks);
    clip_ = device_alloc<float>(2);

    unsigned blocks = kernels::blocks_for(arenas_, 128);
    kernels::arena_init<<<blocks, 128>>>(states_, arenas_, config.seed);
    LAUNCH_CHECK();
    kernels::arena_observe<<<blocks, 128>>>(states_, arenas_, obs_, masks_);
    LAUNCH_CHECK();
    synchronize();
  }

  long parameter_count() const { return layout_.count; }

  // Steps every arena `steps` times with the current policy, then computes advantages and
  // returns. Returns the mean return of the episodes that ended.
  double collect(ppo::IterationTimes& times) {
    synchronize();
    auto start = Clock::now();
    unsigned blocks = kernels::blocks_for(arenas_, 128);
    long obs_stride = long(arenas_) * ppo::kInputs;
    for (int t = 0; t < steps_; ++t) {
      const float* obs = obs_ + t * obs_stride;
      long row = long(t) * arenas_;
      auto inference_start = Clock::now();
      net::mlp_forward(blas_, norm_kernel_, actor_, params_, obs, arenas_, collect_actor_, logits_);
      net::mlp_forward(blas_, norm_kernel_, critic_, params_, obs, arenas_, collect_critic_,
                       values_ + row);
      {
        profile::Scope scope("sampler");
        kernels::sample_actions<<<blocks, 128>>>(logits_, masks_ + row, arenas_, config_.seed,
                                                 global_step_++, actions_ + row, logps_ + row);
        LAUNCH_CHECK();
      }
      synchronize();
      times.inference_s += seconds_since(inference_start);
      profile::Scope scope("arena step");
      kernels::arena_step<<<blocks, 128>>>(states_, arenas_, config_.seed, actions_ + row,
                                           rewards_ + row, dones_ + row,
                                           obs_ + (t + 1) * obs_stride, masks_ + row + arenas_);
      LAUNCH_CHECK();
    }
    synchronize();
    auto inference_start = Clock::now();
    net::mlp_forward(blas_, norm_kernel_, critic_, params_, obs_ + steps_ * obs_stride, arenas_,
                     collect_critic_, last_value_);
    synchronize();
    times.inference_s += seconds_since(inference_start);
    const ppo::Hyper& h = hyper_;
    std::optional<profile::Scope> scope(std::in_place, "gae, returns, copies");
    kernels::gae<<<blocks, 128>>>(rewards_, dones_, values_, last_value_, steps_, arenas_, h.gamma,
                                  h.gae_lambda, advantages_, returns_);
    LAUNCH_CHECK();
    // The last observations are the next iteration's first.
    CUDA_CHECK(cudaMemcpy(obs_, obs_ + steps_ * obs_stride, sizeof(float) * obs_stride,
                          cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(masks_, masks_ + long(steps_) * arenas_, sizeof(uint32_t) * arenas_,
                          cudaMemcpyDeviceToDevice));
    double mean_return = finished_episodes_mean();
    scope.reset();
    synchronize();
    times.collect_s += seconds_since(start);
    return mean_return;
  }

  // The PPO update: epochs over the collected samples in shuffled minibatches.
  void learn(ppo::IterationTimes& times) {
    synchronize();
    auto start = Clock::now();
    const ppo::Hyper& h = hyper_;
    std::vector<int> perm(samples_);
    for (int epoch = 0; epoch < config_.epochs; ++epoch) {
      {
        profile::Scope scope("shuffle");
        shuffle(perm);
        CUDA_CHECK(cudaMemcpy(perm_, perm.data(), sizeof(int) * samples_, cudaMemcpyHostToDevice));
      }
      for (int mb = 0; mb < config_.minibatches; ++mb) {
        std::optional<profile::Scope> scope(std::in_place, "gather, advantage stats");
        kernels::
            gather_minibatch<<<kernels::blocks_for(long(minibatch_) * ppo::kInputs, 256), 256>>>(
                perm_, long(mb) * minibatch_, minibatch_, obs_, masks_, actions_, logps_,
                advantages_, returns_, mb_obs_, mb_masks_, mb_actions_, mb_logps_, mb_advantages_,
                mb_returns_);
        LAUNCH_CHECK();
        kernels::mean_inv_std<<<1, kernels::kReduceThreads>>>(mb_advantages_, minibatch_,
                                                              adv_stats_);
        LAUNCH_CHECK();
        scope.reset();
        net::mlp_forward(blas_, norm_kernel_, actor_, params_, mb_obs_, minibatch_, train_actor_,
                         train_logits_);
        net::mlp_forward(blas_, norm_kernel_, critic_, params_, mb_obs_, minibatch_, train_critic_,
                         train_values_);
        scope.emplace("loss gradients");
        kernels::ppo_loss_grad<<<kernels::blocks_for(minibatch_, 128), 128>>>(
            train_logits_, train_values_, mb_masks_, mb_actions_, mb_logps_, mb_advantages_,
            mb_returns_, adv_stats_, minibatch_, h.clip, h.entropy_coef, h.value_coef, dlogits_,
            dvalues_);
        LAUNCH_CHECK();
        scope.reset();
        net::mlp_backward(blas_, norm_kernel_, actor_, params_, grads_, mb_obs_, minibatch_,
                          train_actor_, dlogits_, scratch_);
        net::mlp_backward(blas_, norm_kernel_, critic_, params_, grads_, mb_obs_, minibatch_,
                          train_critic_, dvalues_, scratch_);
        optimizer_step();
      }
    }
    synchronize();
    times.learn_s += seconds_since(start);
  }

private:
  // Fisher-Yates with the counter-based generator: the same order for the same seed.
  void shuffle(std::vector<int>& perm) {
    for (long i = 0; i < long(perm.size()); ++i)
      perm[i] = int(i);
    uint64_t round = shuffles_++;
    for (long i = long(perm.size()) - 1; i > 0; --i) {
      long j = long(arena::hash4(config_.seed, 0x5bu, round, uint64_t(i)) % uint64_t(i + 1));
      std::swap(perm[i], perm[j]);
    }
  }

  void optimizer_step() {
    const ppo::Hyper& h = hyper_;
    profile::Scope scope("grad norm, adam");
    kernels::sum_squares_partial<<<kernels::kNormBlocks, kernels::kReduceThreads>>>(
        grads_, layout_.size, norm_partial_);
    LAUNCH_CHECK();
    kernels::clip_scale<<<1, 32>>>(norm_partial_, h.max_grad_norm, clip_);
    LAUNCH_CHECK();
    ++adam_step_;
    float bias1 = 1.0f - powf(h.adam_beta1, float(adam_step_));
    float bias2 = 1.0f - powf(h.adam_beta2, float(adam_step_));
    kernels::adam<<<kernels::blocks_for(layout_.size, 256), 256>>>(
        params_, grads_, adam_m_, adam_v_, layout_.size, clip_, h.learning_rate, h.adam_beta1,
        h.adam_beta2, h.adam_eps, bias1, bias2);
    LAUNCH_CHECK();
  }

  // Mean return of the episodes finished since the last call, summed in arena order.
  double finished_episodes_mean() {
    std::vector<arena::State> states(arenas_);
    CUDA_CHECK(
        cudaMemcpy(states.data(), states_, sizeof(arena::State) * arenas_, cudaMemcpyDeviceToHost));
    double sum = 0;
    long count = 0;
    for (const arena::State& s : states) {
      sum += s.finished_return_sum;
      count += s.finished_count;
    }
    kernels::arena_clear_finished<<<kernels::blocks_for(arenas_, 128), 128>>>(states_, arenas_);
    LAUNCH_CHECK();
    return count ? sum / double(count) : NAN;
  }

  ppo::Config config_;
  ppo::Hyper hyper_;
  net::NormKernel norm_kernel_;
  int arenas_, steps_;
  long samples_;
  int minibatch_;
  net::Blas blas_;
  net::ParameterLayout layout_;
  net::MlpLayout actor_, critic_;
  float *params_, *grads_, *adam_m_, *adam_v_;
  long adam_step_ = 0;
  uint64_t global_step_ = 0, shuffles_ = 0;

  arena::State* states_;
  float* obs_;      // [steps + 1][arenas][kInputs]
  uint32_t* masks_; // [steps + 1][arenas]
  int* actions_;    // the rest [steps][arenas]
  float *logps_, *values_, *rewards_, *dones_, *advantages_, *returns_;
  float *last_value_, *logits_;
  net::Activations collect_actor_, collect_critic_;

  int* perm_;
  float* mb_obs_;
  uint32_t* mb_masks_;
  int* mb_actions_;
  float *mb_logps_, *mb_advantages_, *mb_returns_, *adv_stats_;
  float *train_logits_, *train_values_, *dlogits_, *dvalues_;
  float *norm_partial_, *clip_;
  net::Activations train_actor_, train_critic_;
  net::Scratch scratch_;
};

} // namespace

int main(int argc, char** argv) {
  net::NormKernel norm_kernel = net::NormKernel::kWarpPerRow;
  ppo::Config config = ppo::parse_command_line(
      argc, argv, " [--layernorm warp|block] [--profile]",
      [&](const std::string& flag, const char* value) {
        if (flag == "--profile") {
          profile::enabled = true;
          return 1;
        }
        if (flag != "--layernorm") return 0;
        std::string v = value ? value : "";
        if (v == "warp")
          norm_kernel = net::NormKernel::kWarpPerRow;
        else if (v == "block")
          norm_kernel = net::NormKernel::kBlockPerRow;
        else {
          fprintf(stderr, "ppo_cuda: --layernorm takes warp or block, not '%s'\n", v.c_str());
          exit(2);
        }
        return 2;
      });
  Trainer trainer(config, norm_kernel);
  printf("params=%ld\n", trainer.parameter_count());
  fprintf(stderr, "ppo_cuda: %d arenas x %d steps, %d epochs x %d minibatches of %ld, seed %llu\n",
          config.arenas, config.steps, config.epochs, config.minibatches, config.minibatch_size(),
          (unsigned long long)config.seed);
  fflush(stdout);
  for (int iteration = 1; iteration <= config.iterations; ++iteration) {
    ppo::IterationTimes times;
    double mean_return = trainer.collect(times);
    trainer.learn(times);
    ppo::print_iteration(config, iteration, times, mean_return);
    profile::report(iteration);
  }
  return 0;
}
