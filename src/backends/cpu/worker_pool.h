// The host threads that run a launch's blocks: created at the first launch (never in a
// static constructor), kept for the life of the process, woken for each launch. After a
// job a worker spins briefly for the next one (back-to-back launches are the common case)
// and then sleeps on a futex, so an idle pool costs nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace mimic::cpu {

class WorkerPool {
public:
  // The process's pool of config::worker_threads() threads (the caller counts as one).
  static WorkerPool& instance();

  unsigned size() const { return unsigned(threads_.size()) + 1; }

  // Runs job(context, i) for i in [0, count) on count threads, the calling one included
  // (i = 0), and returns when every call that began has returned. The calls share their
  // work (they take it from one counter, as a grid's blocks are), so that any one of them
  // can do all of it: a worker that has not begun its call when the caller's returns is let
  // off it, and the caller does not wait for it (a worker asleep, or waiting for the
  // processor the caller holds, costs the launch nothing). count is at most size().
  // Launches from several host threads at once take turns; `false` (and nothing run) when
  // the pool is busy and `wait` is false, so that the caller can use threads of its own.
  using Job = void (*)(void* context, unsigned index);
  bool run(unsigned count, Job job, void* context, bool wait);

private:
  explicit WorkerPool(unsigned threads);
  void worker(unsigned index);

  std::vector<std::thread> threads_;
  std::mutex busy_;                       // one job at a time
  Job job_ = nullptr;
  void* context_ = nullptr;
  unsigned count_ = 0;
  std::atomic<uint32_t> generation_{0};   // bumped for each job; workers wait on it
  std::atomic<uint32_t> remaining_{0};    // workers of the current job not yet done or let off
  // Per worker, the last generation settled for it: taken by the worker (which then runs
  // it) or let off by the caller, whichever changes it first.
  std::unique_ptr<std::atomic<uint32_t>[]> settled_;
  std::atomic<uint32_t> sleepers_{0};     // workers asleep on generation_ (or about to be)
  std::atomic<bool> caller_asleep_{false}; // run() asleep on remaining_ (or about to be)
};

} // namespace mimic::cpu
