// Running other programs from the `mimic` tool: `mimic bench` runs workloads and harnesses,
// `mimic doctor` its probe under `mimic run`. Each child gets its own environment changes,
// and its standard output is read line by line.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mimic::cli {

// This executable's path (from /proc/self/exe); empty when it cannot be read.
std::filesystem::path self_path();

struct ChildOptions {
  std::vector<std::pair<std::string, std::string>> env; // set in the child only
  bool capture_stderr = false;   // also read standard error (into the same lines)
  bool quiet_stderr = false;     // discard standard error
  unsigned timeout_seconds = 0;  // 0: none; else the child is killed (status 128 + SIGKILL)
};

// Starts `argv` with its standard output on `stdout_fd` (when not -1); returns its pid, or
// -1 when it cannot fork. A program that cannot be executed exits with 127.
pid_t start(const std::vector<std::string>& argv, int stdout_fd = -1, const ChildOptions& options = {});

// Its exit status, or 128 + the signal that ended it (127 for pid -1).
int wait_for(pid_t pid);

// Runs `argv`, calling `on_line` with each line of its output (without the newline) as it
// comes; returns the exit status as wait_for does.
int run_lines(const std::vector<std::string>& argv, const std::function<void(const std::string&)>& on_line,
              const ChildOptions& options = {});

// A line of `key=value` words as a map; a word without '=' is stored under "" (the last one).
using Record = std::map<std::string, std::string>;
Record parse_line(const std::string& line);

// The number `key` holds, if it is one ("n/a" and text are not).
std::optional<double> number(const Record& record, const std::string& key);

} // namespace mimic::cli
