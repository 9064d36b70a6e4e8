#pragma once

// Faults on a running service stack (scripts/services): a service killed by the PID its folder
// records, as a crash of its host would. Starting it again is `binberg services up --only NAME`.

#include <sys/types.h>

#include <chrono>
#include <string>

namespace binberg::lab {

// SIGKILLs SERVICE ("mariadb", "postgres", "kafka", "registry") of the stack in DIR and waits up to
// TIMEOUT until it is gone. Returns its PID; throws Error when there is no PID file or it survives.
pid_t kill_service(const std::string& dir, const std::string& service,
                   std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace binberg::lab
