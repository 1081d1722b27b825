// A launch returns once its blocks have run, whether or not the pool's workers got to them:
// the caller takes blocks as they do (backends/cpu/worker_pool.h), and a worker that has
// not begun when the caller has run out of blocks is let off, not waited for. Here the
// process runs on one processor, so that the pool's worker can run only when the caller
// gives the processor up: a launch that waited for it would switch threads every time
// (10 us a launch on a machine whose scheduler had put both on one vCPU). Every block of
// every launch must still run exactly once.
// mimic-env: MIMIC_THREADS=2
#include <sched.h>
#include <sys/resource.h>

#include "check.h"

__global__ void count_blocks(unsigned* runs) {
  if (threadIdx.x == 0) runs[blockIdx.x] += 1;
}

static long switches() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_nvcsw + u.ru_nivcsw;
}

int main() {
  // Before the first launch, which creates the pool: its worker inherits the mask.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {
    perror("sched_setaffinity");
    return 1;
  }
  constexpr unsigned kBlocks = 4, kLaunches = 4000;
  unsigned* runs;
  CHECK(cudaMallocManaged(&runs, kBlocks * sizeof(unsigned)));
  for (unsigned b = 0; b < kBlocks; ++b)
    runs[b] = 0;
  count_blocks<<<kBlocks, 32>>>(runs);
  CHECK_LAUNCH();
  long before = switches();
  for (unsigned i = 0; i < kLaunches; ++i) {
    count_blocks<<<kBlocks, 32>>>(runs);
    CHECK_LAUNCH();
  }
  long switched = switches() - before;
  for (unsigned b = 0; b < kBlocks; ++b)
    if (runs[b] != kLaunches + 1) {
      fprintf(stderr, "block %u ran %u times, expected %u\n", b, runs[b], kLaunches + 1);
      ++failures;
    }
  // Preemption by other processes adds a few; waiting for the worker adds one a launch.
  if (switched > long(kLaunches / 4)) {
    fprintf(stderr, "the caller gave up the processor %ld times in %u launches\n", switched, kLaunches);
    ++failures;
  }
  CHECK(cudaFree(runs));
  return report("launch_one_cpu");
}
