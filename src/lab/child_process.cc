#include "lab/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "core/assert.h"
#include "core/error.h"

namespace binberg::lab {
namespace {

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status); }

}  // namespace

ChildProcess::~ChildProcess() { stop(SIGKILL); }

void ChildProcess::start(const std::vector<std::string>& argv, const std::filesystem::path& log,
                         const std::map<std::string, std::optional<std::string>>& environment) {
  BINBERG_ASSERT(!running(), "{} started while it still runs (pid {})", argv.at(0), pid_);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) fail("cannot start {}: fork failed: {}", argv.at(0), std::strerror(errno));
  if (pid_ == 0) {
    // A test killed on a timeout never runs its destructors: its processes must die with it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    for (const auto& [name, value] : environment) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
}

std::optional<int> ChildProcess::wait_for_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running() && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return exit_code(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

void ChildProcess::send(int signal) {
  if (running()) ::kill(pid_, signal);
}

int ChildProcess::stop(int signal) {
  if (!running()) return 0;
  ::kill(pid_, signal);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return exit_code(status);
}

std::string log_tail(const std::filesystem::path& log, std::size_t lines) {
  std::ifstream in(log);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string text;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) text += all[i] + "\n";
  return text;
}

std::optional<std::string> wait_for_log_line(const std::filesystem::path& log, const std::string& text,
                                             std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  do {
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
      if (const auto at = line.find(text); at != std::string::npos) return line.substr(at + text.size());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  return std::nullopt;
}

std::size_t count_log_lines(const std::filesystem::path& log, const std::string& text) {
  std::ifstream in(log);
  std::size_t count = 0;
  for (std::string line; std::getline(in, line);) count += line.find(text) != std::string::npos ? 1 : 0;
  return count;
}

}  // namespace binberg::lab
