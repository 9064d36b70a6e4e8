#pragma once

// Access to the stack the `services` ctest fixture started. A test that needs a service and cannot
// find it fails: a missing service is never reported as a pass or a skip.

#include <string>

#include "mysql/connection.h"
#include "services/endpoints.h"

namespace binberg::testing {

const services::Endpoints& stack();

mysql::ConnectionOptions mariadb_admin_options();
mysql::ConnectionOptions mariadb_replication_options();

// A name unique to this test process and call, for topics, tables and subjects.
std::string unique_name(const std::string& prefix);

// SIGKILLs the stack's MariaDB (by its PID file) and starts it again with `scripts/services up
// --only mariadb`; returns once it accepts connections.
void kill_and_restart_mariadb();

// Runs a shell command and returns its stdout; fails the test (via exception) on non-zero exit.
std::string run_command(const std::string& command);

}  // namespace binberg::testing
