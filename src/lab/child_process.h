#pragma once

// A process a test or a drill starts, stops by signal (SIGKILL for crash tests) and starts again,
// with its stdout and stderr appended to a log file. It dies with its parent (PR_SET_PDEATHSIG).

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace binberg::lab {

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();  // SIGKILLs a process still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Runs ARGV (argv[0] is the program's path); ENVIRONMENT sets (value) or unsets (nullopt) variables.
  void start(const std::vector<std::string>& argv, const std::filesystem::path& log,
             const std::map<std::string, std::optional<std::string>>& environment = {});
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // Waits up to TIMEOUT for the process to exit by itself: its exit status, or -signal; nullopt
  // when it still runs.
  std::optional<int> wait_for_exit(std::chrono::milliseconds timeout);
  // Sends SIGNAL without waiting (SIGSTOP, SIGCONT); nothing when nothing runs.
  void send(int signal);
  // Sends SIGNAL and waits: the exit status, or -signal. 0 when nothing runs.
  int stop(int signal);

 private:
  pid_t pid_ = -1;
};

// The last LINES lines of LOG, for failure messages.
std::string log_tail(const std::filesystem::path& log, std::size_t lines = 30);
// Waits up to TIMEOUT for a line of LOG holding TEXT; returns what follows TEXT on it, nullopt when none came.
std::optional<std::string> wait_for_log_line(const std::filesystem::path& log, const std::string& text,
                                             std::chrono::milliseconds timeout = std::chrono::seconds(30));

// How many lines of LOG hold TEXT.
std::size_t count_log_lines(const std::filesystem::path& log, const std::string& text);

}  // namespace binberg::lab
