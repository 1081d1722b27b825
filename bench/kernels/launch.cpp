// The empty-launch round trip: Mimic's launch + cudaDeviceSynchronize of an empty kernel
// against the least a CPU runtime must do for the same work, a dispatch to a persistent
// pool of worker threads (woken by a condition variable, as an idle runtime's workers
// would be) that run the empty blocks and report back.
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

class ThreadPool {
public:
  explicit ThreadPool(unsigned threads) {
    for (unsigned i = 0; i < threads; ++i)
      workers_.emplace_back([this] { work(); });
  }

  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    start_.notify_all();
    for (std::thread& t : workers_)
      t.join();
  }

  // Runs blocks [0, blocks) of `block` on the workers and waits until all are done.
  void run(unsigned blocks, void (*block)(unsigned)) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      block_ = block;
      blocks_ = blocks;
      next_.store(0, std::memory_order_relaxed);
      busy_ = unsigned(workers_.size());
      ++generation_;
    }
    start_.notify_all();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
  }

private:
  void work() {
    uint64_t seen = 0;
    for (;;) {
      void (*block)(unsigned);
      unsigned blocks;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        start_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        block = block_;
        blocks = blocks_;
      }
      for (unsigned b; (b = next_.fetch_add(1, std::memory_order_relaxed)) < blocks;)
        block(b);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  unsigned busy_ = 0, blocks_ = 0;
  void (*block_)(unsigned) = nullptr;
  std::atomic<unsigned> next_{0};
};

// An empty block of 32 threads; the barrier keeps the compiler from removing the loop.
void empty_block(unsigned) {
  for (unsigned thread = 0; thread < 32; ++thread)
    asm volatile("" ::: "memory");
}

template <typename F> double median_us(unsigned iterations, F&& round_trip) {
  std::vector<double> times;
  times.reserve(iterations);
  for (unsigned i = 0; i < iterations; ++i) {
    auto start = Clock::now();
    round_trip();
    times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

} // namespace

LaunchTimes measure_launch(unsigned threads, unsigned iterations) {
  LaunchTimes t;
  auto start = Clock::now();
  cuda_empty_launch(threads); // loads and compiles the module
  t.first_launch_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  for (unsigned i = 0; i < 10; ++i)
    cuda_empty_launch(threads);
  t.mimic_us = median_us(iterations, [&] { cuda_empty_launch(threads); });
  ThreadPool pool(threads);
  for (unsigned i = 0; i < 10; ++i)
    pool.run(threads, empty_block);
  t.native_us = median_us(iterations, [&] { pool.run(threads, empty_block); });
  return t;
}

} // namespace bench
