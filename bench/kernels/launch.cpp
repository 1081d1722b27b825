// The empty-launch round trip: Mimic's launch + cudaDeviceSynchronize of an empty kernel
// against what a native CPU runtime does for the same work: a persistent pool, built as
// OpenMP's or TBB's are, dispatches the empty blocks to its threads and waits for them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "harness.h"

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

// Spins up to 50 us for `done` (an idle runtime thread's grace period), pausing between
// looks; says whether it came true.
template <typename F> bool spin_until(F&& done) {
  const auto deadline = Clock::now() + std::chrono::microseconds(50);
  for (;;) {
    if (done()) return true;
    if (Clock::now() > deadline) return false;
    for (int i = 0; i < 16; ++i)
      __builtin_ia32_pause();
  }
}

// The caller and `threads - 1` workers share the blocks of a job. A worker out of work
// spins briefly for the next job, then sleeps on a condition variable; the caller waits
// for the workers the same way.
class ThreadPool {
public:
  explicit ThreadPool(unsigned threads) {
    for (unsigned i = 1; i < threads; ++i)
      workers_.emplace_back([this] { work(); });
  }

  ~ThreadPool() {
    stop_.store(true);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    start_.notify_all();
    for (std::thread& t : workers_)
      t.join();
  }

  // Runs blocks [0, blocks) of `block` and returns when all have run.
  void run(unsigned blocks, void (*block)(unsigned)) {
    block_ = block;
    blocks_ = blocks;
    next_.store(0, std::memory_order_relaxed);
    remaining_.store(unsigned(workers_.size()), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mutex_); // a worker going to sleep sees the change
      generation_.fetch_add(1, std::memory_order_release);
    }
    start_.notify_all();
    run_blocks();
    auto finished = [this] { return remaining_.load(std::memory_order_acquire) == 0; };
    if (spin_until(finished)) return;
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, finished);
  }

private:
  void run_blocks() {
    for (unsigned b; (b = next_.fetch_add(1, std::memory_order_relaxed)) < blocks_;)
      block_(b);
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      auto posted = [&] { return generation_.load(std::memory_order_acquire) != seen; };
      if (!spin_until(posted)) {
        std::unique_lock<std::mutex> lock(mutex_);
        start_.wait(lock, posted);
      }
      // The next job cannot be posted before this worker has reported this one.
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load()) return;
      run_blocks();
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<unsigned> next_{0}, remaining_{0};
  unsigned blocks_ = 0;
  void (*block_)(unsigned) = nullptr;
};

// An empty block of 32 threads; the barrier keeps the compiler from removing the loop.
void empty_block(unsigned) {
  for (unsigned thread = 0; thread < 32; ++thread)
    asm volatile("" ::: "memory");
}

// Appends the times of `count` round trips, in microseconds.
template <typename F>
void time_round_trips(unsigned count, std::vector<double>& times, F&& round_trip) {
  for (unsigned i = 0; i < count; ++i) {
    auto start = Clock::now();
    round_trip();
    times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
}

double median(std::vector<double>& v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

} // namespace

LaunchTimes measure_launch(unsigned threads, unsigned iterations) {
  LaunchTimes t;
  auto start = Clock::now();
  cuda_empty_launch(threads); // loads and compiles the module
  t.first_launch_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  ThreadPool pool(threads);
  auto mimic = [&] { cuda_empty_launch(threads); };
  auto native = [&] { pool.run(threads, empty_block); };
  std::vector<double> warm_up, mimic_us, native_us;
  time_round_trips(10, warm_up, mimic);
  time_round_trips(10, warm_up, native);
  // In alternating rounds, so that both see the same machine (other load, clock speed).
  constexpr unsigned kRounds = 10;
  for (unsigned round = 0; round < kRounds; ++round) {
    time_round_trips(iterations / kRounds, mimic_us, mimic);
    time_round_trips(iterations / kRounds, native_us, native);
  }
  t.mimic_us = median(mimic_us);
  t.native_us = median(native_us);
  return t;
}

} // namespace bench
