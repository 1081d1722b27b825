#include "backends/cpu/tiers.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "support/log.h"

namespace mimic::cpu {

QuickTier quick_tier() {
  const char* v = std::getenv("MIMIC_QUICK_TIER");
  if (!v || !*v) return QuickTier::On;
  std::string_view s(v);
  if (s == "0" || s == "off") return QuickTier::Off;
  if (s == "only") return QuickTier::Only;
  if (s != "1" && s != "on")
    warn_once("quick-tier", "MIMIC_QUICK_TIER=" + std::string(s) + " is not 0, 1 or only; using 1");
  return QuickTier::On;
}

namespace {

struct Job {
  std::string key, what;
  BackgroundCompiler::Compile compile;
  std::vector<BackgroundCompiler::Deliver> deliver;
};

// How long exit waits for optimised code still being compiled for the JIT cache.
constexpr std::chrono::milliseconds kExitWait{2000};

struct State {
  std::mutex mutex;
  std::condition_variable wake, done; // done: a job has ended
  std::deque<std::shared_ptr<Job>> queue;
  std::map<std::string, std::shared_ptr<Job>> keyed; // queued or running, by key
  std::atomic<bool> cancel{false};
  bool exiting = false;  // stop_at_exit has begun
  bool stopping = false;
  std::thread* thread = nullptr; // leaked in a forked child, whose copy has no thread
  pid_t owner = 0;               // the process that started `thread`
};

// Never destroyed: exit handlers may submit nothing more but still look at it.
State& state() {
  static State* s = new State;
  return *s;
}

void stop_at_exit();

void run(State& s) {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(s.mutex);
      s.wake.wait(lock, [&] { return s.stopping || !s.queue.empty(); });
      if (s.stopping) return;
      job = std::move(s.queue.front());
      s.queue.pop_front();
    }
    Result<std::string> object = job->compile(s.cancel);
    std::vector<BackgroundCompiler::Deliver> deliver;
    {
      std::lock_guard lock(s.mutex);
      if (!job->key.empty()) s.keyed.erase(job->key);
      deliver = std::move(job->deliver);
    }
    s.done.notify_all();
    if (!object) {
      if (!s.cancel.load())
        log_warning(job->what + ": the optimised code failed (" + object.error().message() +
                    "); the quick code stays in use");
    } else {
      for (const auto& d : deliver)
        d(*object);
    }
    // Registered again after each job, for an exit from a thread other than the main one
    // (the main one's is MainThreadExit): the exit handlers run in the reverse order of
    // registration, and C++ destroys a function-local static (LLVM has some, built at
    // their first use: a compile here may have built one) by a handler registered when it
    // was built. The latest registration of stop_at_exit runs before all of them, so the
    // thread never runs on a destroyed one. (A job running when such an exit begins may
    // still use a static it built itself; prepare_background_compiles in jit.cpp builds
    // the known ones first.)
    std::lock_guard lock(s.mutex);
    if (!s.exiting) std::atexit(stop_at_exit);
  }
}

// At exit: the optimised code that goes into the JIT cache (a keyed job) is waited for,
// up to kExitWait, so that the next process starts from it (a program shorter than the
// background compile would otherwise never have it, and compile quick code every time;
// before tiers it paid the same compile at its first launch). Then no new work, a compile
// still running skips its remaining passes, and the thread is joined while LLVM's static
// state is still alive (see run: the handler's latest registration came after that state
// was built, so it runs before it is destroyed).
void stop_at_exit() {
  State& s = state();
  {
    std::unique_lock lock(s.mutex);
    if (s.exiting) return; // registered several times: the first call does it all
    s.exiting = true;
    if (s.thread && s.owner == getpid())
      s.done.wait_for(lock, kExitWait, [&] { return s.keyed.empty(); });
    s.stopping = true;
    s.cancel = true;
  }
  s.wake.notify_all();
  if (s.thread && s.owner == getpid() && s.thread->joinable()) s.thread->join();
}

// Stops the background compiler before any exit handler or static destructor runs, when
// the process exits from its main thread (a return from main, or exit there): glibc's exit
// runs the calling thread's thread_local destructors first. An atexit handler cannot be
// first: a compile running at exit may have built LLVM statics (code generation's tables,
// the command-line registry) after the handler's latest registration, and C++ destroys them
// before it runs. Under gdb, streams_events's first background compile builds three.
// A main thread that ends by pthread_exit while the process goes on stops the compiler
// too: later kernels keep their quick code.
struct MainThreadExit {
  ~MainThreadExit() {
    if (gettid() == getpid()) stop_at_exit();
  }
};

} // namespace

void BackgroundCompiler::submit(const std::string& key, const std::string& what, Compile compile,
                                Deliver deliver) {
  // Registered on each thread that asks for compiles; only the main thread's acts.
  [[maybe_unused]] static thread_local MainThreadExit exit_guard;
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    if (s.stopping) return;
    if (!key.empty())
      if (auto it = s.keyed.find(key); it != s.keyed.end()) {
        it->second->deliver.push_back(std::move(deliver));
        return;
      }
    auto job = std::make_shared<Job>();
    job->key = key;
    job->what = what;
    job->compile = std::move(compile);
    job->deliver.push_back(std::move(deliver));
    s.queue.push_back(job);
    if (!key.empty()) s.keyed[key] = job;
    if (!s.thread || s.owner != getpid()) {
      const bool first = !s.thread;
      s.owner = getpid();
      s.thread = new std::thread([&s] { run(s); });
      if (first) std::atexit(stop_at_exit);
    }
  }
  s.wake.notify_one();
}

} // namespace mimic::cpu
