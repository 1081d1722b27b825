#include "libs/common/stream_order.h"

#include "support/config.h"
#include "support/log.h"

#include <exception>
#include <string>

namespace mimic::libs {
namespace {

bool is_default_stream(CUstream stream) {
  return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

// Whether nothing can run before work enqueued on `stream` now. A blocking stream also
// waits for the legacy default stream (and that one for every blocking stream), which
// the public API cannot query, so only idle non-blocking streams qualify.
bool can_run_now(CUstream stream) {
  if (!config::inline_launches() || is_default_stream(stream)) return false;
  unsigned flags = 0;
  if (cuStreamGetFlags(stream, &flags) != CUDA_SUCCESS || !(flags & CU_STREAM_NON_BLOCKING))
    return false;
  return cuStreamQuery(stream) == CUDA_SUCCESS;
}

void run_reporting(HostWork& work) noexcept {
  try {
    work();
  } catch (const std::exception& e) {
    log_error(std::string("library work failed inside Mimic: ") + e.what());
  } catch (...) {
    log_error("library work failed inside Mimic");
  }
}

void run_owned(void* data) {
  std::unique_ptr<HostWork> work(static_cast<HostWork*>(data));
  run_reporting(*work);
}

void run_kept(void* data) {
  run_reporting(*static_cast<HostWork*>(data));
}

} // namespace

HostWork* CapturedWork::keep(HostWork work) {
  std::lock_guard lock(mutex_);
  works_.push_back(std::make_unique<HostWork>(std::move(work)));
  return works_.back().get();
}

CUresult ensure_current(CUcontext context) {
  CUcontext current = nullptr;
  if (CUresult r = cuCtxGetCurrent(&current)) return r;
  if (current || !context) return CUDA_SUCCESS;
  return cuCtxSetCurrent(context);
}

CUresult run_in_stream_order(const StreamTarget& target, HostWork work) {
  if (CUresult r = ensure_current(target.context)) return r;
  // Capture first: querying a capturing stream (can_run_now) would invalidate the capture.
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (CUresult r = cuStreamIsCapturing(target.stream, &capture)) return r;
  if (capture != CU_STREAM_CAPTURE_STATUS_NONE && target.captured)
    return cuLaunchHostFunc(target.stream, run_kept, target.captured->keep(std::move(work)));
  if (capture == CU_STREAM_CAPTURE_STATUS_NONE && can_run_now(target.stream)) {
    run_reporting(work);
    return CUDA_SUCCESS;
  }
  auto owned = std::make_unique<HostWork>(std::move(work));
  CUresult r = cuLaunchHostFunc(target.stream, run_owned, owned.get());
  if (r == CUDA_SUCCESS) owned.release(); // run_owned frees it
  return r;
}

CUresult run_and_wait(const StreamTarget& target, HostWork work) {
  if (CUresult r = run_in_stream_order(target, std::move(work))) return r;
  return cuStreamSynchronize(target.stream);
}

} // namespace mimic::libs
