// Running a library's work in the order of the user's CUDA stream, through the public
// driver API only. On devices whose memory is host memory (the CPU backend) a library
// does its work on the host: it hands a function to the stream with cuLaunchHostFunc, so
// the function runs after the kernels and copies enqueued before it, or runs it at once
// when nothing can be ahead of it.
#pragma once

#include <cuda.h>

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace mimic::libs {

using HostWork = std::function<void()>;

// A graph runs the host functions recorded by stream capture at each launch, so work
// enqueued while its stream captures must outlive the call: its owner (a library handle)
// keeps it until the handle is destroyed.
class CapturedWork {
public:
  HostWork* keep(HostWork work);

private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<HostWork>> works_;
};

// Where a library call's work goes: the handle's context and stream.
struct StreamTarget {
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  CapturedWork* captured = nullptr;
};

// Runs `work` after everything enqueued before it on the target stream. Work runs
// directly on the calling thread when that is equivalent (an idle stream that waits for
// no other stream: a non-blocking one) unless MIMIC_LAUNCH=async; otherwise it is
// enqueued and the call returns at once. Scalars the work reads from device memory must
// be read inside `work`, when it runs.
CUresult run_in_stream_order(const StreamTarget& target, HostWork work);

// The same, but returns only after `work` has run (results written to host memory).
CUresult run_and_wait(const StreamTarget& target, HostWork work);

// Makes `context` current on this thread when no context is.
CUresult ensure_current(CUcontext context);

} // namespace mimic::libs
