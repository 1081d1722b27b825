// Tiered compilation: a kernel's first launch runs quick code (lowered, then a light
// pipeline: no vectoriser, no thread-loop interchange, fast instruction selection), while a
// background thread compiles the optimised code; the launch path picks the optimised code
// up block by block as soon as it is there (CpuCompiledProgram::entry, run_block).
//
// Why: the optimised pipeline costs 0.1-0.6 s for a barrier-heavy kernel, the quick one a
// fifth of that; a program that launches a kernel once on a small problem should not wait
// for code it gains nothing from, and one that launches it a thousand times gets the
// optimised code after a few launches. Both tiers compile the same lowered IR, with the
// same executor facts (resume points, spill slots), without fast-math flags: they compute
// the same results, bit for bit. A block runs with one tier's code from start to end.
//
// MIMIC_QUICK_TIER: unset or 1: quick code first, optimised code in the background;
// 0: optimised code at the first launch (as before tiers); `only`: quick code only, not
// read from or written to the JIT cache (for testing the quick tier).
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "support/error.h"

namespace mimic::cpu {

enum class QuickTier { Off, On, Only };
QuickTier quick_tier(); // read at each call (tests set it per process)

// The process's background compiler: one thread, started at the first request and never
// destroyed. At exit it finishes the work whose object goes into the JIT cache (for up to
// 2 s), then is told to stop (`cancel` turns true: a compile skips its remaining passes)
// and joined before LLVM's own static state goes away: first thing at an exit from the
// main thread (a thread_local destructor), otherwise by an exit handler.
class BackgroundCompiler {
public:
  // Makes an object file, or says why not. `cancel` turns true when the process exits.
  using Compile = std::function<Result<std::string>(const std::atomic<bool>& cancel)>;
  // Receives the object; runs on the background thread.
  using Deliver = std::function<void(const std::string& object)>;

  // Queues `compile`; `deliver` gets its object. A request whose non-empty `key` is queued
  // or running already joins it (two loads of one module in one process compile once).
  // `what` names the work in a failure's message.
  static void submit(const std::string& key, const std::string& what, Compile compile, Deliver deliver);
};

} // namespace mimic::cpu
