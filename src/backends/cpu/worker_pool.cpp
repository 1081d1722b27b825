#include "backends/cpu/worker_pool.h"

#include <chrono>
#include <climits>
#include <immintrin.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "support/config.h"

namespace mimic::cpu {

namespace {

// How long a worker (or the caller waiting for the workers) spins before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(50);

// The spinning yields the processor now and then: on a machine with as many workers as
// cores, a spinning worker would otherwise keep the application's own threads (the one
// about to launch the next kernel) waiting for the scheduler.
template <typename Done> bool spin_until(Done&& done) {
  auto start = std::chrono::steady_clock::now();
  for (unsigned i = 0;; ++i) {
    if (done())
      return true;
    _mm_pause();
    if ((i & 127) == 127) { // every few microseconds
      sched_yield();
      if (std::chrono::steady_clock::now() - start > kSpin)
        return false;
    }
  }
}

// Sleeps while *word == value (a futex; libstdc++ 12's atomic wait can miss a wake-up).
void futex_wait(std::atomic<uint32_t>& word, uint32_t value) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, value, nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

} // namespace

WorkerPool& WorkerPool::instance() {
  // Never destroyed: the CUDA runtime tears contexts down from exit handlers that may run
  // after static destructors, and its workers would be joined from a dying process.
  static WorkerPool* pool = new WorkerPool(config::worker_threads());
  return *pool;
}

WorkerPool::WorkerPool(unsigned threads) : settled_(new std::atomic<uint32_t>[threads]()) {
  for (unsigned i = 1; i < threads; ++i) {
    threads_.emplace_back([this, i] { worker(i); });
    threads_.back().detach();
  }
}

void WorkerPool::worker(unsigned index) {
  // Generation 0 is the pool's creation: a thread that starts after the first job was
  // posted still runs it.
  uint32_t seen = 0;
  for (;;) {
    if (!spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; }))
      while (generation_.load(std::memory_order_acquire) == seen) {
        // Announced before the last look at generation_, so that run() either sees a
        // sleeper and wakes it or this thread sees the new generation (both seq_cst).
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        if (generation_.load(std::memory_order_seq_cst) == seen)
          futex_wait(generation_, seen);
        sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      }
    // The settled generation is read before the posted one: it is never newer, so that a
    // difference means the posted one is open and the exchange takes it, unless the caller
    // has let this worker off it in between (a generation settles only forward).
    std::atomic<uint32_t>& settled = settled_[index - 1];
    uint32_t last = settled.load(std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (last == seen || !settled.compare_exchange_strong(last, seen, std::memory_order_acq_rel))
      continue; // let off: the caller has done the work and no longer waits for this worker
    if (index < count_) job_(context_, index);
    if (remaining_.fetch_sub(1, std::memory_order_seq_cst) == 1 && caller_asleep_.load(std::memory_order_seq_cst))
      futex_wake_all(remaining_);
  }
}

bool WorkerPool::run(unsigned count, Job job, void* context, bool wait) {
  if (count <= 1) { // the caller alone: no worker is involved
    job(context, 0);
    return true;
  }
  std::unique_lock lock(busy_, std::defer_lock);
  if (wait)
    lock.lock();
  else if (!lock.try_lock())
    return false;
  if (threads_.empty()) {
    job(context, 0);
    return true;
  }
  job_ = job;
  context_ = context;
  count_ = count;
  // Every worker takes part in each generation (those past `count` just check in) or is
  // let off it, so that `remaining` counts them all and none can miss a generation.
  remaining_.store(uint32_t(threads_.size()), std::memory_order_relaxed);
  const uint32_t generation = generation_.fetch_add(1, std::memory_order_seq_cst) + 1;
  if (sleepers_.load(std::memory_order_seq_cst) != 0) // no system call while all spin
    futex_wake_all(generation_);
  job(context, 0);
  // The work is all taken: the workers that have not begun are let off (the one whose
  // thread shares the caller's processor would otherwise run only when the caller yields).
  uint32_t let_off = 0;
  for (size_t i = 0; i < threads_.size(); ++i) {
    uint32_t last = settled_[i].load(std::memory_order_acquire);
    if (last != generation && settled_[i].compare_exchange_strong(last, generation, std::memory_order_acq_rel))
      ++let_off;
  }
  if (let_off != 0) remaining_.fetch_sub(let_off, std::memory_order_seq_cst);
  if (!spin_until([&] { return remaining_.load(std::memory_order_acquire) == 0; })) {
    caller_asleep_.store(true, std::memory_order_seq_cst);
    for (uint32_t left; (left = remaining_.load(std::memory_order_seq_cst)) != 0;)
      futex_wait(remaining_, left);
    caller_asleep_.store(false, std::memory_order_seq_cst);
  }
  job_ = nullptr;
  return true;
}

} // namespace mimic::cpu
