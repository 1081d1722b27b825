// The background compiler (backends/cpu/tiers.h) at exit: an exit from the main thread
// stops it before any exit handler or static destructor runs, so that a compile running
// then never uses LLVM state that C++ has destroyed (statics a compile builds are
// destroyed before exit handlers registered earlier).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <unistd.h>

#include "backends/cpu/tiers.h"

namespace {

std::atomic<bool> g_job_stopped{false};

// An exit handler registered after the job began, as a static a compile builds registers
// its destructor: it runs after the compiler has stopped, or says it ran first.
void check_stopped() {
  _exit(g_job_stopped.load() ? 0 : 3);
}

void exit_while_compiling() {
  std::atomic<bool> started{false};
  mimic::cpu::BackgroundCompiler::submit(
      "", "a job that runs until exit",
      [&started](const std::atomic<bool>& cancel) -> mimic::Result<std::string> {
        started = true;
        while (!cancel.load())
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        g_job_stopped = true;
        return mimic::Error("stopped at exit");
      },
      [](const std::string&) {});
  while (!started.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::atexit(check_stopped);
  std::exit(0);
}

TEST(BackgroundCompiler, ExitFromTheMainThreadStopsItBeforeLaterExitHandlers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // the child runs this on its main thread
  EXPECT_EXIT(exit_while_compiling(), ::testing::ExitedWithCode(0), "");
}

} // namespace
