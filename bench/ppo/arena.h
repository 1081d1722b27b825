// The PPO benchmark's environment: 3D navigation in a box of kGrid^3 cells. An agent moves
// to one of the 26 neighbouring cells (the 3x3x3 neighbourhood without "stay") towards a
// goal, around obstacles; moves into obstacles or out of the box are masked. It sees the
// occupancy of the 5x5x5 cube around it (124 cells) and the vector to the goal (3): 127
// observations. Reward: progress towards the goal (0.1 per cell of Euclidean distance), a
// step cost of 0.01 and +1 on reaching the goal, which ends the episode; so does the time
// limit (treated as termination). Obstacles are a hash of the episode's layout key and the
// cell, so an arena is a few integers and needs no stored map.
//
// One definition of the rules for both programs: ppo_cuda steps every arena in one kernel
// thread, ppo_torch in a C++ loop; all randomness is counter-based (seed, arena, episode).
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define ARENA_HD __host__ __device__ __forceinline__
#else
#define ARENA_HD inline
#endif

namespace arena {

constexpr int kGrid = 12;
constexpr int kActions = 26;
constexpr int kViewRadius = 2;
constexpr int kViewCells =
    (2 * kViewRadius + 1) * (2 * kViewRadius + 1) * (2 * kViewRadius + 1) - 1;
constexpr int kObs = kViewCells + 3;
constexpr int kTimeLimit = 48;
constexpr int kMinGoalDistance = 4; // Chebyshev distance from the start
constexpr float kObstacleDensity = 0.2f;
constexpr float kProgressReward = 0.1f;
constexpr float kStepCost = 0.01f;
constexpr float kGoalReward = 1.0f;
static_assert(kObs == 127, "the benchmark network takes 127 observations");

// splitmix64's finaliser over a combination of the inputs: a counter-based generator.
ARENA_HD uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
ARENA_HD uint64_t hash4(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return mix(mix(mix(mix(a) ^ b) ^ c) ^ d);
}
// A float in [0, 1) from the top 24 bits.
ARENA_HD float unit_float(uint64_t h) {
  return float(h >> 40) * (1.0f / 16777216.0f);
}

// Purposes of random draws, so that streams never overlap.
enum Stream : uint64_t { kLayout = 1, kStart = 2, kGoal = 3, kStagger = 4, kPolicy = 5 };

// Move a (0..25) as a step in x, y, z: the 3x3x3 cube without its centre (index 13).
ARENA_HD void move_delta(int a, int& dx, int& dy, int& dz) {
  int cell = a < 13 ? a : a + 1;
  dx = cell / 9 - 1;
  dy = cell / 3 % 3 - 1;
  dz = cell % 3 - 1;
}

struct State {
  uint64_t layout;  // obstacle hash key of this episode
  uint32_t episode; // episodes begun by this arena
  int32_t t;        // steps taken in this episode
  int32_t pos[3], start[3], goal[3];
  float episode_return;
  // Episodes finished since the caller last cleared these (one iteration's collection).
  float finished_return_sum;
  int32_t finished_count;
};

ARENA_HD int chebyshev(const int32_t* a, const int32_t* b) {
  int d = 0;
  for (int i = 0; i < 3; ++i) {
    int e = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
    d = e > d ? e : d;
  }
  return d;
}

ARENA_HD bool blocked(const State& s, int x, int y, int z) {
  if (x < 0 || y < 0 || z < 0 || x >= kGrid || y >= kGrid || z >= kGrid) return true;
  int cell[3] = {x, y, z};
  // The start's neighbourhood and the goal stay free: every episode can begin and end.
  if (chebyshev(cell, s.start) <= 1 || chebyshev(cell, s.goal) == 0) return false;
  uint64_t key = uint64_t((x * kGrid + y) * kGrid + z);
  return unit_float(mix(s.layout ^ mix(key))) < kObstacleDensity;
}

ARENA_HD float goal_distance(const State& s) {
  float d2 = 0;
  for (int i = 0; i < 3; ++i) {
    float d = float(s.goal[i] - s.pos[i]);
    d2 += d * d;
  }
  return sqrtf(d2);
}

ARENA_HD void begin_episode(State& s, uint64_t seed, uint32_t arena) {
  s.episode += 1;
  s.layout = hash4(seed, arena, s.episode, kLayout);
  uint64_t h = hash4(seed, arena, s.episode, kStart);
  for (int i = 0; i < 3; ++i)
    s.start[i] = int32_t((h >> (16 * i)) % kGrid);
  for (uint64_t attempt = 0;; ++attempt) {
    h = hash4(seed, arena, s.episode, kGoal + 16 * attempt);
    for (int i = 0; i < 3; ++i)
      s.goal[i] = int32_t((h >> (16 * i)) % kGrid);
    if (chebyshev(s.goal, s.start) >= kMinGoalDistance || attempt == 15) break;
  }
  for (int i = 0; i < 3; ++i)
    s.pos[i] = s.start[i];
  s.t = 0;
  s.episode_return = 0;
}

// A fresh arena; its first episode starts part-way through its time, so that episodes end
// spread over the iterations instead of all at once.
ARENA_HD void init(State& s, uint64_t seed, uint32_t arena) {
  s.episode = 0;
  s.finished_return_sum = 0;
  s.finished_count = 0;
  begin_episode(s, seed, arena);
  s.t = int32_t(hash4(seed, arena, 0, kStagger) % kTimeLimit);
}

// Bit a set: move a is allowed.
ARENA_HD uint32_t action_mask(const State& s) {
  uint32_t mask = 0;
  for (int a = 0; a < kActions; ++a) {
    int dx, dy, dz;
    move_delta(a, dx, dy, dz);
    if (!blocked(s, s.pos[0] + dx, s.pos[1] + dy, s.pos[2] + dz)) mask |= 1u << a;
  }
  return mask;
}

ARENA_HD void observe(const State& s, float* obs) {
  int k = 0;
  for (int dx = -kViewRadius; dx <= kViewRadius; ++dx)
    for (int dy = -kViewRadius; dy <= kViewRadius; ++dy)
      for (int dz = -kViewRadius; dz <= kViewRadius; ++dz) {
        if (dx == 0 && dy == 0 && dz == 0) continue;
        obs[k++] = blocked(s, s.pos[0] + dx, s.pos[1] + dy, s.pos[2] + dz) ? 1.0f : 0.0f;
      }
  for (int i = 0; i < 3; ++i)
    obs[k++] = float(s.goal[i] - s.pos[i]) * (1.0f / kGrid);
}

// Takes move `action`; returns the reward and sets `done` when the episode ended (the state
// is then already the next episode's first).
ARENA_HD float step(State& s, int action, uint64_t seed, uint32_t arena, bool& done) {
  int dx, dy, dz;
  move_delta(action, dx, dy, dz);
  float before = goal_distance(s);
  if (!blocked(s, s.pos[0] + dx, s.pos[1] + dy, s.pos[2] + dz)) {
    s.pos[0] += dx;
    s.pos[1] += dy;
    s.pos[2] += dz;
  }
  float reward = kProgressReward * (before - goal_distance(s)) - kStepCost;
  bool reached = chebyshev(s.pos, s.goal) == 0;
  if (reached) reward += kGoalReward;
  s.t += 1;
  s.episode_return += reward;
  done = reached || s.t >= kTimeLimit;
  if (done) {
    s.finished_return_sum += s.episode_return;
    s.finished_count += 1;
    begin_episode(s, seed, arena);
  }
  return reward;
}

} // namespace arena
