#include "cli/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace mimic::cli {

std::filesystem::path self_path() {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = 0;
  return self;
}

pid_t start(const std::vector<std::string>& argv, int stdout_fd, const ChildOptions& options) {
  if (argv.empty()) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid != 0) return pid;
  // A new process group, so that a timeout ends the child's own children too.
  if (options.timeout_seconds) setpgid(0, 0);
  for (const auto& [name, value] : options.env)
    setenv(name.c_str(), value.c_str(), 1);
  if (stdout_fd >= 0) dup2(stdout_fd, STDOUT_FILENO);
  if (options.capture_stderr && stdout_fd >= 0) dup2(stdout_fd, STDERR_FILENO);
  if (options.quiet_stderr) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
  }
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  fprintf(stderr, "mimic: cannot run '%s': %s\n", args[0], strerror(errno));
  _exit(127);
}

int wait_for(pid_t pid) {
  if (pid < 0) return 127;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_lines(const std::vector<std::string>& argv, const std::function<void(const std::string&)>& on_line,
              const ChildOptions& options) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return 127;
  pid_t pid = start(argv, fds[1], options);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return 127;
  }
  // The watchdog kills the child's process group when the timeout passes; reading ends
  // then, as the pipe's writers are gone.
  bool done = false;
  std::thread watchdog;
  if (options.timeout_seconds) {
    watchdog = std::thread([pid, &done, seconds = options.timeout_seconds] {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
      while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        if (std::chrono::steady_clock::now() >= deadline) {
          kill(-pid, SIGKILL);
          kill(pid, SIGKILL);
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }
  FILE* in = fdopen(fds[0], "r");
  std::string line;
  int c;
  while (in && (c = fgetc(in)) != EOF) {
    if (c != '\n') {
      line += char(c);
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    on_line(line);
    line.clear();
  }
  if (!line.empty()) on_line(line);
  if (in) fclose(in);
  int status = wait_for(pid);
  __atomic_store_n(&done, true, __ATOMIC_RELEASE);
  if (watchdog.joinable()) watchdog.join();
  return status;
}

Record parse_line(const std::string& line) {
  Record r;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t end = line.find(' ', pos);
    if (end == std::string::npos) end = line.size();
    std::string word = line.substr(pos, end - pos);
    if (!word.empty()) {
      size_t eq = word.find('=');
      if (eq == std::string::npos)
        r[""] = word;
      else
        r[word.substr(0, eq)] = word.substr(eq + 1);
    }
    pos = end + 1;
  }
  return r;
}

std::optional<double> number(const Record& record, const std::string& key) {
  auto it = record.find(key);
  if (it == record.end() || it->second.empty() || it->second == "n/a") return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double v = strtod(it->second.c_str(), &end);
  if (*end || errno == ERANGE) return std::nullopt;
  return v;
}

} // namespace mimic::cli
