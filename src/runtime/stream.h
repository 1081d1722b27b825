// Streams and events. Each stream runs its work in order on a worker thread of its own
// (started on first use), so the host thread returns from an asynchronous call at once.
// Ordering across streams follows CUDA: the legacy default stream waits for all blocking
// streams of its context and they wait for it; non-blocking streams and per-thread
// default streams do not take part; an event wait holds a stream until the event's
// record at the time of the wait completes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cuda.h>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/context.h"

namespace mimic::runtime {

struct Event;
struct Stream;

using Work = std::function<CUresult()>;

struct Stream {
  enum class Role : uint8_t { Created, Legacy, PerThread };
  Context* context = nullptr;
  unsigned flags = 0; // CU_STREAM_NON_BLOCKING
  int priority = 0;
  Role role = Role::Created;
  unsigned long long id = 0;

  // Enqueues work to run after everything enqueued before it (and after `after`);
  // returns its sequence number (see wait_for).
  uint64_t enqueue(Work work, std::vector<std::pair<Stream*, uint64_t>> after = {});
  // Runs work on the calling thread when nothing is queued or running on this stream and
  // what it must follow (`after`) has completed; false (nothing run) otherwise.
  bool run_inline(Work& work, const std::vector<std::pair<Stream*, uint64_t>>& after);
  // Blocks until everything enqueued so far has run. Returns the first error of that work.
  CUresult synchronize();
  bool idle();
  uint64_t last_enqueued();
  void wait_for(uint64_t sequence);
  void shut_down(); // waits for the queue, stops the worker

  std::mutex mutex;
  std::condition_variable changed;
  struct Item {
    Work work;
    std::vector<std::pair<Stream*, uint64_t>> after;
    uint64_t sequence;
  };
  std::deque<Item> queue;
  uint64_t enqueued = 0, completed = 0;
  std::atomic<uint64_t> finished{0}; // `completed` as last set, readable without the lock
  bool running_inline = false;       // run_inline is running an item: the worker waits
  CUresult error = CUDA_SUCCESS; // first failure since the last synchronize
  std::thread worker;
  bool stopping = false;

private:
  void run();
};

// An event is complete when the stream work of its latest record has run: the stream
// and sequence number of that record say where to look.
struct Event {
  Context* context = nullptr;
  unsigned flags = 0;
  std::mutex mutex;
  Stream* stream = nullptr; // of the latest record; null when never recorded
  uint64_t sequence = 0;
  std::chrono::steady_clock::time_point time; // written by the record's stream work
};

Stream* find_stream(CUstream handle);
Event* find_event(CUevent handle);

// Resolves a CUstream argument: NULL and CU_STREAM_LEGACY mean the context's legacy
// default stream (or the per-thread one when `per_thread_default` is set, as for the
// _ptsz/_ptds entry points), CU_STREAM_PER_THREAD the calling thread's default stream.
// nullptr for a stale or foreign handle.
Stream* resolve_stream(CUstream handle, Context* context, bool per_thread_default);

Result<Stream*> create_stream(Context* context, unsigned flags, int priority);
CUresult destroy_stream(Stream* stream);

// Enqueue on `stream` honouring legacy default stream ordering (and after `also`);
// returns the sequence, or 0 when the stream captures and the work became a graph node.
// With may_run_inline (kernel launches), work that could start at once runs on the calling
// thread instead of the stream's worker (config::inline_launches): a launch then costs no
// thread hand-off, and the host still sees a launch that returned and work to synchronize.
uint64_t submit(Stream* stream, Work work, std::vector<std::pair<Stream*, uint64_t>> also = {},
                bool may_run_inline = false);
// A kernel launch (may_run_inline): `now` runs on the calling thread when submit would run
// the work inline, and may refer to the caller's stack; otherwise `queued` makes the work
// that goes on the stream (or into its capture). Saves a launch's copies when it runs now.
void submit_launch(Stream* stream, Work& now, const std::function<Work()>& queued);
// Enqueue and wait for that work (synchronous API calls); returns its result, or a
// CUDA_ERROR_STREAM_CAPTURE_* error when the call would break a capture in progress.
CUresult submit_and_wait(Stream* stream, Work work);

Result<Event*> create_event(Context* context, unsigned flags);
CUresult destroy_event(Event* event);
void record_event(Event* event, Stream* stream);
CUresult query_event(Event* event);    // CUDA_SUCCESS or CUDA_ERROR_NOT_READY
CUresult synchronize_event(Event* event);
CUresult elapsed_ms(Event* start, Event* end, float* ms);
// CUDA_ERROR_STREAM_CAPTURE_MERGE when it would merge two captures.
CUresult wait_event(Stream* stream, Event* event);

// Waits for every stream of a context (cuCtxSynchronize).
CUresult synchronize_context(Context* context);

// When a context ends (destroyed, or its primary activation released or reset): waits
// for its streams, then makes its created streams and its events stale handles.
void retire_streams_and_events(Context* context);

} // namespace mimic::runtime
