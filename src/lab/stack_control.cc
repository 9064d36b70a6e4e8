#include "lab/stack_control.h"

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "core/error.h"

namespace binberg::lab {

pid_t kill_service(const std::string& dir, const std::string& service, std::chrono::milliseconds timeout) {
  const std::string pid_path = dir + "/" + service + "/" + service + ".pid";
  std::ifstream pid_file(pid_path);
  pid_t pid = 0;
  if (!(pid_file >> pid) || pid <= 1) fail("{}: no PID in {} (is the stack up?)", service, pid_path);
  if (::kill(pid, SIGKILL) != 0) fail("cannot SIGKILL {} (pid {}): {}", service, pid, std::strerror(errno));
  // The services are not our children (the script detached them): poll until the PID is gone.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (::kill(pid, 0) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) fail("{} (pid {}) survived SIGKILL", service, pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pid;
}

}  // namespace binberg::lab
