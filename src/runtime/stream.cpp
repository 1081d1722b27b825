#include "runtime/stream.h"

#include <map>
#include <memory>
#include <vector>

#include "runtime/graph.h"
#include "support/config.h"
#include "runtime/handle.h"

namespace mimic::runtime {

namespace {

HandleRegistry<Stream>& stream_registry() {
  static auto* r = new HandleRegistry<Stream>;
  return *r;
}

HandleRegistry<Event>& event_registry() {
  static auto* r = new HandleRegistry<Event>;
  return *r;
}

std::atomic<unsigned long long> next_stream_id{1};

struct DefaultStreams {
  std::mutex mutex;
  std::map<Context*, Stream*> legacy;
};

DefaultStreams& defaults() {
  static auto* d = new DefaultStreams;
  return *d;
}

thread_local std::map<Context*, Stream*> tls_per_thread;

Stream* new_stream(Context* c, unsigned flags, int priority, Stream::Role role) {
  auto* s = new Stream;
  s->context = c;
  s->flags = flags;
  s->priority = priority;
  s->role = role;
  s->id = next_stream_id++;
  stream_registry().add(s);
  return s;
}

Stream* legacy_stream(Context* c) {
  if (Stream* s = c->legacy_stream.load(std::memory_order_acquire)) return s;
  DefaultStreams& d = defaults();
  std::lock_guard lock(d.mutex);
  Stream*& s = d.legacy[c];
  if (!s)
    s = new_stream(c, 0, 0, Stream::Role::Legacy);
  c->legacy_stream.store(s, std::memory_order_release);
  return s;
}

Stream* per_thread_stream(Context* c) {
  Stream*& s = tls_per_thread[c];
  if (!s || !stream_registry().find(s))
    s = new_stream(c, CU_STREAM_NON_BLOCKING, 0, Stream::Role::PerThread);
  return s;
}

bool is_blocking(const Stream* s) { return s->role == Stream::Role::Created && !(s->flags & CU_STREAM_NON_BLOCKING); }

} // namespace

void Stream::run() {
  for (;;) {
    Item item;
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return stopping || (!queue.empty() && !running_inline); });
      if (queue.empty())
        return;
      item = std::move(queue.front());
      queue.pop_front();
    }
    for (auto& [other, seq] : item.after)
      if (other != this)
        other->wait_for(seq);
    CUresult r = context->sticky_error.load();
    if (r == CUDA_SUCCESS)
      r = item.work();
    {
      std::lock_guard lock(mutex);
      if (r != CUDA_SUCCESS && error == CUDA_SUCCESS)
        error = r;
      completed = item.sequence;
      finished.store(completed, std::memory_order_release);
    }
    changed.notify_all();
  }
}

bool Stream::run_inline(Work& work, const std::vector<std::pair<Stream*, uint64_t>>& after) {
  for (auto& [other, seq] : after)
    if (other != this && other->finished.load(std::memory_order_acquire) < seq)
      return false;
  uint64_t sequence;
  {
    std::lock_guard lock(mutex);
    if (running_inline || !queue.empty() || completed != enqueued || stopping)
      return false;
    running_inline = true;
    sequence = ++enqueued;
  }
  CUresult r = context->sticky_error.load();
  if (r == CUDA_SUCCESS)
    r = work();
  {
    std::lock_guard lock(mutex);
    if (r != CUDA_SUCCESS && error == CUDA_SUCCESS)
      error = r;
    completed = sequence;
    finished.store(completed, std::memory_order_release);
    running_inline = false;
  }
  changed.notify_all();
  return true;
}

uint64_t Stream::enqueue(Work work, std::vector<std::pair<Stream*, uint64_t>> after) {
  uint64_t sequence;
  {
    std::lock_guard lock(mutex);
    if (!worker.joinable())
      worker = std::thread([this] { run(); });
    sequence = ++enqueued;
    queue.push_back(Item{std::move(work), std::move(after), sequence});
  }
  changed.notify_all();
  return sequence;
}

uint64_t Stream::last_enqueued() {
  std::lock_guard lock(mutex);
  return enqueued;
}

void Stream::wait_for(uint64_t sequence) {
  std::unique_lock lock(mutex);
  changed.wait(lock, [&] { return completed >= sequence; });
}

bool Stream::idle() {
  std::lock_guard lock(mutex);
  return completed == enqueued;
}

CUresult Stream::synchronize() {
  std::unique_lock lock(mutex);
  uint64_t target = enqueued;
  changed.wait(lock, [&] { return completed >= target; });
  CUresult r = error;
  error = CUDA_SUCCESS;
  if (r == CUDA_SUCCESS)
    r = context->sticky_error.load();
  return r;
}

void Stream::shut_down() {
  {
    std::lock_guard lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  if (worker.joinable()) {
    if (worker.get_id() == std::this_thread::get_id())
      worker.detach();
    else
      worker.join();
  }
}

Stream* find_stream(CUstream handle) { return stream_registry().find(handle); }
Event* find_event(CUevent handle) { return event_registry().find(handle); }

Stream* resolve_stream(CUstream handle, Context* context, bool per_thread_default) {
  if (handle == nullptr)
    return per_thread_default ? per_thread_stream(context) : legacy_stream(context);
  if (handle == CU_STREAM_LEGACY)
    return legacy_stream(context);
  if (handle == CU_STREAM_PER_THREAD)
    return per_thread_stream(context);
  return find_stream(handle);
}

Result<Stream*> create_stream(Context* context, unsigned flags, int priority) {
  if (!(flags & CU_STREAM_NON_BLOCKING))
    ++context->blocking_streams; // before the legacy stream can find it
  return new_stream(context, flags, priority, Stream::Role::Created);
}

CUresult destroy_stream(Stream* s) {
  if (s->role != Stream::Role::Created || !stream_registry().remove(s))
    return CUDA_ERROR_INVALID_HANDLE;
  if (is_blocking(s)) --s->context->blocking_streams;
  capture_forget_stream(s);
  // CUDA lets destruction return at once and finishes queued work in the background.
  s->shut_down();
  return CUDA_SUCCESS;
}

namespace {

// What work on `stream` must follow besides its own queue: the legacy default stream waits
// for the context's blocking streams, and they wait for it.
void add_implicit_order(Stream* stream, std::vector<std::pair<Stream*, uint64_t>>& after) {
  Context* c = stream->context;
  if (stream->role == Stream::Role::Legacy) {
    if (c->blocking_streams.load() == 0) return;
    stream_registry().for_each([&](Stream* s) {
      if (s->context == c && is_blocking(s))
        after.emplace_back(s, s->last_enqueued());
    });
  } else if (is_blocking(stream)) {
    Stream* legacy = legacy_stream(c);
    after.emplace_back(legacy, legacy->last_enqueued());
  }
}

} // namespace

uint64_t submit(Stream* stream, Work work, std::vector<std::pair<Stream*, uint64_t>> after,
                bool may_run_inline) {
  if (any_capture() && capture_submit(stream, work)) return 0; // a node of the stream's capture now
  add_implicit_order(stream, after);
  if (may_run_inline && config::inline_launches() && stream->run_inline(work, after))
    return stream->last_enqueued();
  return stream->enqueue(std::move(work), std::move(after));
}

void submit_launch(Stream* stream, Work& now, const std::function<Work()>& queued) {
  if (any_capture()) {
    Work work = queued();
    if (capture_submit(stream, work)) return;
    submit(stream, std::move(work), {}, true);
    return;
  }
  std::vector<std::pair<Stream*, uint64_t>> after;
  add_implicit_order(stream, after);
  if (config::inline_launches() && stream->run_inline(now, after)) return;
  stream->enqueue(queued(), std::move(after));
}

CUresult submit_and_wait(Stream* stream, Work work) {
  if (CUresult r = capture_check_sync(stream))
    return r;
  auto result = std::make_shared<CUresult>(CUDA_SUCCESS);
  uint64_t seq = submit(stream, [work = std::move(work), result] {
    *result = work();
    return *result;
  });
  stream->wait_for(seq);
  if (*result == CUDA_SUCCESS)
    return stream->context->sticky_error.load();
  // The failure is reported here; do not report it again at the next synchronize.
  std::lock_guard lock(stream->mutex);
  if (stream->error == *result)
    stream->error = CUDA_SUCCESS;
  return *result;
}

Result<Event*> create_event(Context* context, unsigned flags) {
  auto* e = new Event;
  e->context = context;
  e->flags = flags;
  event_registry().add(e);
  return e;
}

CUresult destroy_event(Event* e) {
  return event_registry().remove(e) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

void record_event(Event* e, Stream* stream) {
  if (capture_record(e, stream))
    return;
  std::lock_guard lock(e->mutex);
  e->sequence = submit(stream, [e] {
    e->time = std::chrono::steady_clock::now();
    return CUDA_SUCCESS;
  });
  e->stream = stream;
}

namespace {

// The stream and sequence of an event's latest record.
std::pair<Stream*, uint64_t> last_record(Event* e) {
  std::lock_guard lock(e->mutex);
  return {e->stream, e->sequence};
}

bool reached(Stream* s, uint64_t sequence) {
  std::lock_guard lock(s->mutex);
  return s->completed >= sequence;
}

} // namespace

CUresult query_event(Event* e) {
  auto [s, seq] = last_record(e);
  return !s || reached(s, seq) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult synchronize_event(Event* e) {
  auto [s, seq] = last_record(e);
  if (s)
    s->wait_for(seq);
  return e->context->sticky_error.load();
}

CUresult elapsed_ms(Event* start, Event* end, float* ms) {
  if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING)
    return CUDA_ERROR_INVALID_HANDLE;
  auto [s1, q1] = last_record(start);
  auto [s2, q2] = last_record(end);
  if (!s1 || !s2)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!reached(s1, q1) || !reached(s2, q2))
    return CUDA_ERROR_NOT_READY;
  std::scoped_lock lock(start->mutex, end->mutex);
  *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
  return CUDA_SUCCESS;
}

CUresult wait_event(Stream* stream, Event* e) {
  if (CUresult r; capture_wait(stream, e, r))
    return r;
  auto [s, seq] = last_record(e);
  if (!s || s == stream)
    return CUDA_SUCCESS; // never recorded, or already ordered by the stream itself
  submit(stream, [] { return CUDA_SUCCESS; }, {{s, seq}});
  return CUDA_SUCCESS;
}

CUresult synchronize_context(Context* context) {
  if (CUresult r = capture_check_unsafe())
    return r;
  // Most contexts have a few streams: they are gathered without allocating.
  Stream* few[16];
  size_t count = 0;
  std::vector<Stream*> more;
  stream_registry().for_each([&](Stream* s) {
    if (s->context != context) return;
    if (count < std::size(few))
      few[count++] = s;
    else
      more.push_back(s);
  });
  CUresult first = CUDA_SUCCESS;
  auto wait = [&](Stream* s) {
    CUresult r = s->synchronize();
    if (first == CUDA_SUCCESS)
      first = r;
  };
  for (size_t i = 0; i < count; ++i)
    wait(few[i]);
  for (Stream* s : more)
    wait(s);
  CUresult sticky = context->sticky_error.load();
  return sticky != CUDA_SUCCESS ? sticky : first;
}

void retire_streams_and_events(Context* context) {
  std::vector<Stream*> streams;
  stream_registry().for_each([&](Stream* s) {
    if (s->context == context)
      streams.push_back(s);
  });
  // Queued work may still touch the context's memory, which goes next: let it finish.
  for (Stream* s : streams)
    s->synchronize();
  for (Stream* s : streams)
    if (s->role == Stream::Role::Created)
      destroy_stream(s);
  std::vector<Event*> events;
  event_registry().for_each([&](Event* e) {
    if (e->context == context)
      events.push_back(e);
  });
  for (Event* e : events)
    destroy_event(e);
}

} // namespace mimic::runtime
