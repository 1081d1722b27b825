// A/B comparison of two configurations of a workload (`mimic bench ab`, `mimic bench ppo`).
//
// A workload prints metric lines: `key=value` words (e.g. `iter=3 sps=5120 learn_s=1.9`).
// Every numeric key except counters (iter, iteration, epoch, step, trial, seed) is a metric.
// A trial is one run of the workload under one configuration; trials alternate between the
// configurations (A B, B A, A B, ...) so that drifts of a noisy machine fall on both. In
// trial mode the first `drop` values of each metric in each trial are dropped (the cold
// iteration: JIT, caches, page faults); in round mode each run is one measurement (the last
// value of each metric) and the first `drop` runs of each configuration are dropped.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace mimic::cli {

struct AbConfig {
  std::string label;
  std::vector<std::string> argv;                          // the whole command
  std::vector<std::pair<std::string, std::string>> env;   // set for it only
};

struct AbOptions {
  unsigned trials = 3;          // runs per configuration
  bool rounds = false;          // each run is one measurement
  unsigned drop = 1;            // cold values dropped per trial (rounds: runs per config)
  std::vector<std::string> metrics; // only these (empty: every metric seen)
  unsigned timeout_seconds = 0; // per run
  bool echo = true;             // print the workload's lines as they come
  std::filesystem::path out_dir; // CSV, JSON and SVG go here (empty: not written)
};

struct AbSample {
  size_t config = 0;   // index into the configurations
  unsigned trial = 0;  // run number within its configuration
  unsigned order = 0;  // run number overall
  unsigned index = 0;  // value number of this metric within the run
  std::string metric;
  double value = 0;
  bool dropped = false;
};

struct AbStats {
  size_t count = 0;
  double median = 0, mean = 0, min = 0, max = 0, stdev = 0;
};

struct AbResult {
  std::vector<AbConfig> configs;
  std::vector<std::string> metrics; // in the order they first appeared
  std::vector<AbSample> samples;
  std::vector<int> failed_runs;     // statuses of runs that did not exit 0
  AbStats stats(size_t config, const std::string& metric) const;
};

AbResult run_ab(const std::vector<AbConfig>& configs, const AbOptions& options);

// Whether a smaller value of `metric` is better (times: *_s, *_ms, *_us, *_ns, *time*).
bool lower_is_better(const std::string& metric);

// The table: per metric and configuration the count, median, mean, min, max; then the
// difference of B's median from A's in percent.
void print_ab_table(const AbResult& result);
// Writes samples.csv, summary.json and plot.svg into `dir`; false (with a message) on error.
bool write_ab_files(const AbResult& result, const AbOptions& options, const std::filesystem::path& dir);

int bench_ab(const std::vector<std::string>& args);
int bench_ppo(const std::vector<std::string>& args);

} // namespace mimic::cli
