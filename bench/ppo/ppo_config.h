// What ppo_cuda and ppo_torch share besides the environment: the network's shape, the PPO
// hyperparameters, the command line and the output lines.
//
// Output (stdout; anything else goes to stderr):
//   params=P
//   iter=K sps=X collect_sps=Y learn_sps=Z inference_s=A learn_s=B return=R   (K from 1)
// with N = arenas * steps timesteps per iteration:
//   sps         = N / (collection seconds + learning seconds)
//   collect_sps = N / collection seconds (stepping the arenas, policy and value forward
//                 passes, sampling, and the advantages; the collection phase)
//   learn_sps   = N * epochs / learning seconds: timesteps consumed per second by the PPO
//                 update, each epoch counting every timestep once
//   inference_s = seconds of the policy and value forward passes and the sampling during
//                 collection (part of the collection seconds)
//   learn_s     = seconds of the PPO update (every epoch and minibatch, optimiser included)
//   return      = mean return of the episodes that ended during this iteration's collection
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "arena.h"

namespace ppo {

// Actor and critic: kObs -> 896 -> 768 -> 384 (Linear + LayerNorm + LeakyReLU each), then
// 384 -> 26 logits and 384 -> 1 value.
constexpr int kHiddenLayers = 3;
constexpr int kHidden[kHiddenLayers] = {896, 768, 384};
constexpr int kInputs = arena::kObs;
constexpr int kActions = arena::kActions;
constexpr float kLeakySlope = 0.01f;
constexpr float kLayerNormEps = 1e-5f;

constexpr long trunk_parameters() {
  long n = 0;
  int in = kInputs;
  for (int width : kHidden) {
    n += long(in) * width + width + 2L * width; // Linear, then LayerNorm's weight and bias
    in = width;
  }
  return n;
}
constexpr long kActorParameters = trunk_parameters() + long(kHidden[2]) * kActions + kActions;
constexpr long kCriticParameters = trunk_parameters() + kHidden[2] + 1;
constexpr long kParameters = kActorParameters + kCriticParameters;
static_assert(kParameters == 2216347, "the benchmark's network has 2,216,347 parameters");

// Initial parameters of both programs, flat, in the order of a PyTorch module list: the
// actor, then the critic; per hidden layer Linear weight [out][in], bias, LayerNorm weight,
// bias; then the head's weight and bias. Linear weights are uniform in +-1/sqrt(in)
// (PyTorch's default bound), the policy head's scaled by 0.01 (a near-uniform first
// policy); biases 0; LayerNorm weights 1.
inline void initial_parameters(uint64_t seed, float* params) {
  long at = 0;
  uint64_t counter = 0;
  auto linear = [&](int in, int out, float scale) {
    float bound = scale / sqrtf(float(in));
    for (long i = 0; i < long(in) * out; ++i)
      params[at++] =
          (2.0f * arena::unit_float(arena::hash4(seed, 0x5eed, counter++, 7)) - 1) * bound;
    for (int i = 0; i < out; ++i)
      params[at++] = 0.0f;
  };
  for (int net = 0; net < 2; ++net) {
    int in = kInputs;
    for (int width : kHidden) {
      linear(in, width, 1.0f);
      for (int i = 0; i < width; ++i)
        params[at++] = 1.0f;
      for (int i = 0; i < width; ++i)
        params[at++] = 0.0f;
      in = width;
    }
    if (net == 0)
      linear(in, kActions, 0.01f);
    else
      linear(in, 1, 1.0f);
  }
}

struct Hyper {
  float gamma = 0.99f;
  float gae_lambda = 0.95f;
  float clip = 0.2f;
  float entropy_coef = 0.01f;
  float value_coef = 0.5f;
  float learning_rate = 3e-4f;
  float adam_beta1 = 0.9f;
  float adam_beta2 = 0.999f;
  float adam_eps = 1e-5f;
  float max_grad_norm = 0.5f;
};

struct Config {
  int arenas = 2048;
  int steps = 32; // per arena and iteration
  int iterations = 10;
  int epochs = 4;
  int minibatches = 4;
  uint64_t seed = 1;
  bool quick = false;
  long timesteps() const { return long(arenas) * steps; }
  long minibatch_size() const { return timesteps() / minibatches; }
};

// Parses the shared flags; `extra(flag, value)` gets the program's own, with the next word
// (null at the end), and returns how many words it took: 0 for an unknown flag, 1 for a
// flag alone, 2 for a flag and its value. Exits on errors and for --help.
inline Config parse_command_line(int argc, char** argv, const char* usage_extra,
                                 const std::function<int(const std::string&, const char*)>& extra) {
  Config config;
  auto usage = [&](FILE* out, int status) {
    fprintf(out,
            "usage: %s [--iterations N] [--seed S] [--quick] [--epochs E] [--minibatches M]\n"
            "          [--arenas A] [--steps T]%s\n"
            "  --quick: 128 arenas x 16 steps per iteration (default 2048 x 32), same network\n",
            argv[0], usage_extra);
    exit(status);
  };
  bool arenas_set = false, steps_set = false;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") usage(stdout, 0);
    if (flag == "--quick") {
      config.quick = true;
      continue;
    }
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    auto number = [&](long low) {
      if (!value) usage(stderr, 2);
      char* end = nullptr;
      long n = strtol(value, &end, 10);
      if (*end || n < low) {
        fprintf(stderr, "%s: %s needs an integer >= %ld, not '%s'\n", argv[0], flag.c_str(), low,
                value);
        exit(2);
      }
      ++i;
      return n;
    };
    if (flag == "--iterations")
      config.iterations = int(number(1));
    else if (flag == "--seed")
      config.seed = uint64_t(number(0));
    else if (flag == "--epochs")
      config.epochs = int(number(1));
    else if (flag == "--minibatches")
      config.minibatches = int(number(1));
    else if (flag == "--arenas")
      config.arenas = int(number(1)), arenas_set = true;
    else if (flag == "--steps")
      config.steps = int(number(1)), steps_set = true;
    else if (int taken = extra(flag, value))
      i += taken - 1;
    else {
      fprintf(stderr, "%s: unknown flag %s\n", argv[0], flag.c_str());
      usage(stderr, 2);
    }
  }
  if (config.quick) {
    if (!arenas_set) config.arenas = 128;
    if (!steps_set) config.steps = 16;
  }
  if (config.timesteps() % config.minibatches != 0) {
    fprintf(stderr, "%s: %ld timesteps do not split into %d minibatches\n", argv[0],
            config.timesteps(), config.minibatches);
    exit(2);
  }
  return config;
}

struct IterationTimes {
  double collect_s = 0, inference_s = 0, learn_s = 0;
};

inline void print_iteration(const Config& config, int iteration, const IterationTimes& t,
                            double mean_return) {
  double n = double(config.timesteps());
  printf("iter=%d sps=%.1f collect_sps=%.1f learn_sps=%.1f inference_s=%.4f learn_s=%.4f "
         "return=%.4f\n",
         iteration, n / (t.collect_s + t.learn_s), n / t.collect_s, n * config.epochs / t.learn_s,
         t.inference_s, t.learn_s, mean_return);
  fflush(stdout);
}

} // namespace ppo
