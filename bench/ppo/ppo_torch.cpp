// ppo_torch: the PPO of ppo_cuda written the way a LibTorch user would: torch::nn modules
// (Linear, LayerNorm, LeakyReLU), autograd, torch::optim::Adam, clip_grad_norm_; the same
// network, initial parameters, hyperparameters and arenas (arena.h, stepped in a C++ loop on
// the host, as the environment of such a program is). Prints the lines ppo_config.h
// describes. Runs on the CPU or, built against a CUDA-enabled LibTorch, on a GPU.
//   ppo_torch [--iterations N] [--seed S] [--quick] [--epochs E] [--minibatches M]
//             [--arenas A] [--steps T] [--device cpu|cuda] [--threads N]
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "arena.h"
#include "ppo_config.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

torch::nn::Sequential make_mlp(int outputs) {
  torch::nn::Sequential mlp;
  int in = ppo::kInputs;
  for (int width : ppo::kHidden) {
    mlp->push_back(torch::nn::Linear(in, width));
    mlp->push_back(
        torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}).eps(double(ppo::kLayerNormEps))));
    mlp->push_back(torch::nn::LeakyReLU(
        torch::nn::LeakyReLUOptions().negative_slope(double(ppo::kLeakySlope))));
    in = width;
  }
  mlp->push_back(torch::nn::Linear(in, outputs));
  return mlp;
}

class Trainer {
public:
  Trainer(const ppo::Config& config, torch::Device device)
      : config_(config), device_(device), arenas_(config.arenas), steps_(config.steps),
        samples_(config.timesteps()), actor_(make_mlp(ppo::kActions)), critic_(make_mlp(1)) {
    torch::manual_seed(config.seed);
    load_initial_parameters();
    actor_->to(device);
    critic_->to(device);
    std::vector<torch::Tensor> params = parameters();
    optimizer_ = std::make_unique<torch::optim::Adam>(
        params, torch::optim::AdamOptions(hyper_.learning_rate)
                    .betas({hyper_.adam_beta1, hyper_.adam_beta2})
                    .eps(hyper_.adam_eps));

    states_.resize(arenas_);
    for (int i = 0; i < arenas_; ++i)
      arena::init(states_[i], config.seed, uint32_t(i));
    auto host = torch::TensorOptions().dtype(torch::kFloat32);
    obs_ = torch::empty({steps_ + 1, arenas_, ppo::kInputs}, host);
    masks_ = torch::empty({steps_ + 1, arenas_, ppo::kActions}, host.dtype(torch::kBool));
    rewards_ = torch::empty({steps_, arenas_}, host);
    dones_ = torch::empty({steps_, arenas_}, host);
    observe_all(0);
  }

  long parameter_count() {
    long n = 0;
    for (const torch::Tensor& p : parameters())
      n += p.numel();
    return n;
  }

  double collect(ppo::IterationTimes& times) {
    auto start = Clock::now();
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> actions, logps, values;
    for (int t = 0; t < steps_; ++t) {
      auto inference_start = Clock::now();
      torch::Tensor obs = obs_[t].to(device_);
      torch::Tensor mask = masks_[t].to(device_);
      torch::Tensor logits = actor_->forward(obs).masked_fill(mask.logical_not(), -1e8);
      torch::Tensor action = torch::multinomial(torch::softmax(logits, -1), 1);
      logps.push_back(torch::log_softmax(logits, -1).gather(1, action).squeeze(1));
      values.push_back(critic_->forward(obs).squeeze(1));
      action = action.squeeze(1).to(torch::kCPU, torch::kInt64);
      times.inference_s += seconds_since(inference_start);
      actions.push_back(action);
      step_all(t, action);
    }
    auto inference_start = Clock::now();
    torch::Tensor last_value = critic_->forward(obs_[steps_].to(device_)).squeeze(1);
    synchronize();
    times.inference_s += seconds_since(inference_start);

    // GAE, one step at a time from the end.
    torch::Tensor value = torch::stack(values), rewards = rewards_.to(device_);
    torch::Tensor live = 1.0f - dones_.to(device_);
    torch::Tensor advantages = torch::zeros_like(value);
    torch::Tensor carry = torch::zeros({arenas_}, value.options());
    torch::Tensor next_value = last_value;
    for (int t = steps_ - 1; t >= 0; --t) {
      torch::Tensor delta = rewards[t] + hyper_.gamma * next_value * live[t] - value[t];
      carry = delta + hyper_.gamma * hyper_.gae_lambda * live[t] * carry;
      advantages[t] = carry;
      next_value = value[t];
    }
    batch_obs_ = obs_.slice(0, 0, steps_).reshape({samples_, ppo::kInputs}).to(device_);
    batch_masks_ = masks_.slice(0, 0, steps_).reshape({samples_, ppo::kActions}).to(device_);
    batch_actions_ = torch::stack(actions).reshape({samples_}).to(device_);
    batch_logps_ = torch::stack(logps).reshape({samples_});
    batch_advantages_ = advantages.reshape({samples_});
    batch_returns_ = (advantages + value).reshape({samples_});
    obs_[0].copy_(obs_[steps_]);
    masks_[0].copy_(masks_[steps_]);
    double mean_return = finished_episodes_mean();
    synchronize();
    times.collect_s += seconds_since(start);
    return mean_return;
  }

  void learn(ppo::IterationTimes& times) {
    auto start = Clock::now();
    const ppo::Hyper& h = hyper_;
    long size = config_.minibatch_size();
    std::vector<torch::Tensor> params = parameters();
    for (int epoch = 0; epoch < config_.epochs; ++epoch) {
      torch::Tensor perm =
          torch::randperm(samples_, torch::TensorOptions().dtype(torch::kInt64)).to(device_);
      for (int mb = 0; mb < config_.minibatches; ++mb) {
        torch::Tensor idx = perm.slice(0, mb * size, (mb + 1) * size);
        torch::Tensor obs = batch_obs_.index_select(0, idx);
        torch::Tensor mask = batch_masks_.index_select(0, idx);
        torch::Tensor action = batch_actions_.index_select(0, idx).unsqueeze(1);
        torch::Tensor advantage = batch_advantages_.index_select(0, idx);
        advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8);

        torch::Tensor logits = actor_->forward(obs).masked_fill(mask.logical_not(), -1e8);
        torch::Tensor logp_all = torch::log_softmax(logits, -1);
        torch::Tensor logp = logp_all.gather(1, action).squeeze(1);
        torch::Tensor entropy = -(logp_all.exp() * logp_all).sum(-1);
        torch::Tensor ratio = (logp - batch_logps_.index_select(0, idx)).exp();
        torch::Tensor policy_loss =
            torch::max(-advantage * ratio, -advantage * ratio.clamp(1 - h.clip, 1 + h.clip)).mean();
        torch::Tensor value = critic_->forward(obs).squeeze(1);
        torch::Tensor value_loss =
            0.5 * (value - batch_returns_.index_select(0, idx)).pow(2).mean();
        torch::Tensor loss =
            policy_loss - h.entropy_coef * entropy.mean() + h.value_coef * value_loss;

        optimizer_->zero_grad();
        loss.backward();
        torch::nn::utils::clip_grad_norm_(params, h.max_grad_norm);
        optimizer_->step();
      }
    }
    synchronize();
    times.learn_s += seconds_since(start);
  }

private:
  std::vector<torch::Tensor> parameters() {
    std::vector<torch::Tensor> params = actor_->parameters();
    for (const torch::Tensor& p : critic_->parameters())
      params.push_back(p);
    return params;
  }

  // The same initial values as ppo_cuda: ppo::initial_parameters lists them in module order.
  void load_initial_parameters() {
    std::vector<float> initial(ppo::kParameters);
    ppo::initial_parameters(config_.seed, initial.data());
    torch::NoGradGuard no_grad;
    long at = 0;
    for (torch::Tensor& p : parameters()) {
      p.copy_(torch::from_blob(initial.data() + at, p.sizes(), torch::kFloat32));
      at += p.numel();
    }
    if (at != ppo::kParameters) {
      fprintf(stderr, "ppo_torch: the modules hold %ld parameters, not %ld\n", at,
              ppo::kParameters);
      exit(1);
    }
  }

  void synchronize() {
    if (device_.is_cuda()) torch::cuda::synchronize();
  }

  void observe_all(int t) {
    float* obs = obs_[t].data_ptr<float>();
    bool* mask = masks_[t].data_ptr<bool>();
    for (int i = 0; i < arenas_; ++i)
      write_observation(i, obs, mask);
  }

  void write_observation(int i, float* obs, bool* mask) {
    arena::observe(states_[i], obs + long(i) * ppo::kInputs);
    uint32_t bits = arena::action_mask(states_[i]);
    for (int a = 0; a < ppo::kActions; ++a)
      mask[long(i) * ppo::kActions + a] = bits >> a & 1;
  }

  // Steps every arena with its action (an int64 CPU tensor) into step t + 1's observations.
  void step_all(int t, const torch::Tensor& actions) {
    const int64_t* action = actions.data_ptr<int64_t>();
    float* reward = rewards_[t].data_ptr<float>();
    float* done = dones_[t].data_ptr<float>();
    float* obs = obs_[t + 1].data_ptr<float>();
    bool* mask = masks_[t + 1].data_ptr<bool>();
    for (int i = 0; i < arenas_; ++i) {
      bool ended = false;
      reward[i] = arena::step(states_[i], int(action[i]), config_.seed, uint32_t(i), ended);
      done[i] = ended ? 1.0f : 0.0f;
      write_observation(i, obs, mask);
    }
  }

  double finished_episodes_mean() {
    double sum = 0;
    long count = 0;
    for (arena::State& s : states_) {
      sum += s.finished_return_sum;
      count += s.finished_count;
      s.finished_return_sum = 0;
      s.finished_count = 0;
    }
    return count ? sum / double(count) : NAN;
  }

  ppo::Config config_;
  ppo::Hyper hyper_;
  torch::Device device_;
  int arenas_, steps_;
  long samples_;
  torch::nn::Sequential actor_, critic_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  std::vector<arena::State> states_;
  torch::Tensor obs_, masks_, rewards_, dones_; // host, [steps (+1)][arenas]...
  torch::Tensor batch_obs_, batch_masks_, batch_actions_, batch_logps_, batch_advantages_,
      batch_returns_;
};

} // namespace

int main(int argc, char** argv) {
  std::string device_name = torch::cuda::is_available() ? "cuda" : "cpu";
  int threads = int(std::thread::hardware_concurrency());
  ppo::Config config =
      ppo::parse_command_line(argc, argv, " [--device cpu|cuda] [--threads N]",
                              [&](const std::string& flag, const char* value) {
                                if (flag != "--device" && flag != "--threads") return 0;
                                if (!value) {
                                  fprintf(stderr, "ppo_torch: %s needs a value\n", flag.c_str());
                                  exit(2);
                                }
                                if (flag == "--device")
                                  device_name = value;
                                else
                                  threads = atoi(value);
                                return 2;
                              });
  if (device_name != "cpu" && device_name != "cuda") {
    fprintf(stderr, "ppo_torch: --device takes cpu or cuda, not '%s'\n", device_name.c_str());
    return 2;
  }
  if (device_name == "cuda" && !torch::cuda::is_available()) {
    fprintf(stderr, "ppo_torch: --device cuda, but this LibTorch sees no CUDA device\n");
    return 2;
  }
  if (threads < 1) {
    fprintf(stderr, "ppo_torch: --threads needs a number >= 1\n");
    return 2;
  }
  torch::set_num_threads(threads);
  torch::Device device(device_name == "cuda" ? torch::kCUDA : torch::kCPU);
  Trainer trainer(config, device);
  printf("params=%ld\n", trainer.parameter_count());
  fprintf(stderr,
          "ppo_torch: %d arenas x %d steps, %d epochs x %d minibatches of %ld, seed %llu, "
          "device %s, %d threads\n",
          config.arenas, config.steps, config.epochs, config.minibatches, config.minibatch_size(),
          (unsigned long long)config.seed, device_name.c_str(), threads);
  fflush(stdout);
  for (int iteration = 1; iteration <= config.iterations; ++iteration) {
    ppo::IterationTimes times;
    double mean_return = trainer.collect(times);
    trainer.learn(times);
    ppo::print_iteration(config, iteration, times, mean_return);
  }
  return 0;
}
